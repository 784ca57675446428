import { Module } from '@nestjs/common';
import { VoiceController } from './voice.controller.js';

/** §4.5 the voice-provider routes (libs/voice); voice-overs are processed by the worker's `assets` queue. */
@Module({ controllers: [VoiceController] })
export class VoiceModule {}
