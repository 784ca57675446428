import { Module } from '@nestjs/common';
import { MessagingController } from './messaging.controller.js';
import { StatusCallbacksController } from './status-callbacks.controller.js';

/** §4.5 the messaging-provider routes (libs/messaging): sends, campaigns (run by the worker's `campaigns` queue) and the providers' status callbacks. */
@Module({ controllers: [MessagingController, StatusCallbacksController] })
export class MessagingModule {}
