import { Module } from '@nestjs/common';
import { DriveController } from './drive.controller.js';

/** §4.5 the workspace-suite Drive routes (libs/suite); imports are processed by the worker's `assets` queue. */
@Module({ controllers: [DriveController] })
export class DriveModule {}
