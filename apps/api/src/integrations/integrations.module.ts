import { Module } from '@nestjs/common';
import { ConnectController } from './connect.controller.js';
import { IntegrationsController } from './integrations.controller.js';

/** §4.5 connected accounts (libs/integrations); the provider routes live in their own modules. */
@Module({ controllers: [IntegrationsController, ConnectController] })
export class IntegrationsModule {}
