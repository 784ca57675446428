import { Module } from '@nestjs/common';
import { fromServices } from '#libs/app';
import { SheetsService } from '#libs/suite';
import { SheetsController } from './sheets.controller.js';

/** §4.5 the workspace-suite sheets routes (libs/suite). */
@Module({ controllers: [SheetsController], providers: [fromServices(SheetsService, 'sheets')] })
export class SheetsModule {}
