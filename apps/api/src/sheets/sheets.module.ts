import { Module } from '@nestjs/common';
import { SheetsController } from './sheets.controller.js';

/** §4.5 the workspace-suite sheets routes (libs/suite). */
@Module({ controllers: [SheetsController] })
export class SheetsModule {}
