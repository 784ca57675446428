import { Module } from '@nestjs/common';
import { fromServices } from '#libs/app';
import { MessagingService } from '#libs/messaging';
import { MessagingController } from './messaging.controller.js';

/** §4.5 the messaging-provider routes (libs/messaging). */
@Module({ controllers: [MessagingController], providers: [fromServices(MessagingService, 'messaging')] })
export class MessagingModule {}
