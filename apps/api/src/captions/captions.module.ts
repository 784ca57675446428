import { Module } from '@nestjs/common';
import { CaptionsController } from './captions.controller.js';
import { SpeechGammaController } from './speech-gamma.controller.js';

/** §4.3 captions and transcriptions, and §4.5's speech-gamma path (libs/captions; the worker's `captions` queue runs them). */
@Module({ controllers: [CaptionsController, SpeechGammaController] })
export class CaptionsModule {}
