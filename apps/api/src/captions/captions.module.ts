import { Module } from '@nestjs/common';
import { AppServices } from '#libs/app';
import { CaptionsService } from '#libs/captions';
import { JobQueues } from '#libs/queue';
import { CaptionsController } from './captions.controller.js';
import { SpeechGammaController } from './speech-gamma.controller.js';

/** §4.3 captions and transcriptions, and §4.5's speech-gamma path (libs/captions; the worker's `captions` queue runs them). */
@Module({
  controllers: [CaptionsController, SpeechGammaController],
  providers: [{
    provide: CaptionsService,
    inject: [AppServices, JobQueues],
    useFactory: (services: AppServices, queues: JobQueues) =>
      services.captions(async (id) => {
        await queues.add('transcription.run', { transcriptionId: id }, { jobId: id });
      }),
  }],
})
export class CaptionsModule {}
