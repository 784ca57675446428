import { Module } from '@nestjs/common';
import { fromServices } from '#libs/app';
import { ContactsService } from '#libs/suite';
import { ContactsController } from './contacts.controller.js';

/** §4.5 the workspace-suite contacts routes (libs/suite). */
@Module({ controllers: [ContactsController], providers: [fromServices(ContactsService, 'contacts')] })
export class ContactsModule {}
