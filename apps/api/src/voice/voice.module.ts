import { Module } from '@nestjs/common';
import { fromServices } from '#libs/app';
import { VoiceService } from '#libs/voice';
import { VoiceController } from './voice.controller.js';

/** §4.5 the voice-provider routes (libs/voice); voice-overs are processed by the worker's `assets` queue. */
@Module({ controllers: [VoiceController], providers: [fromServices(VoiceService, 'voice')] })
export class VoiceModule {}
