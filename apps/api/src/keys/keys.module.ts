import { Module } from '@nestjs/common';
import { KeysController } from './keys.controller.js';

@Module({ controllers: [KeysController] })
export class KeysModule {}
