import { Module } from '@nestjs/common';
import { KeysController, OrganizationKeysController } from './keys.controller.js';

@Module({ controllers: [KeysController, OrganizationKeysController] })
export class KeysModule {}
