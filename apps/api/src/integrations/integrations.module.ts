import { Module } from '@nestjs/common';
import { IntegrationsController } from './integrations.controller.js';

/** §4.5 connected accounts (libs/integrations); the provider routes live in their own modules. */
@Module({ controllers: [IntegrationsController] })
export class IntegrationsModule {}
