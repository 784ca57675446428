import { Module } from '@nestjs/common';
import { ContactsController } from './contacts.controller.js';

/** §4.5 the workspace-suite contacts routes (libs/suite). */
@Module({ controllers: [ContactsController] })
export class ContactsModule {}
