import { Module } from '@nestjs/common';
import { fromServices } from '#libs/app';
import { DriveService } from '#libs/suite';
import { DriveController } from './drive.controller.js';

/** §4.5 the workspace-suite Drive routes (libs/suite); imports are processed by the worker's `assets` queue. */
@Module({ controllers: [DriveController], providers: [fromServices(DriveService, 'drive')] })
export class DriveModule {}
