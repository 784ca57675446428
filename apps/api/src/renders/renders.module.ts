import { Module } from '@nestjs/common';
import { AppServices } from '#libs/app';
import { JobQueues, StillEvents } from '#libs/queue';
import { RendersService } from '#libs/renders';
import { RenderEventsController } from './render-events.controller.js';
import { RenderEventStreams } from './render-events.js';
import { TemplatePreviewsController } from './previews.controller.js';
import { RendersController } from './renders.controller.js';
import { ShotstackController, ShotstackStageController } from './shotstack.controller.js';

@Module({
  controllers: [RendersController, RenderEventsController, ShotstackController, ShotstackStageController, TemplatePreviewsController],
  providers: [
    StillEvents,
    RenderEventStreams,
    {
      provide: RendersService,
      inject: [AppServices, JobQueues, StillEvents],
      useFactory: (services: AppServices, queues: JobQueues, events: StillEvents) =>
        services.renders({
          queues,
          stillEvents: async () => {
            await events.queueEvents.waitUntilReady();
            return events.queueEvents;
          },
        }),
    },
  ],
  exports: [RendersService],
})
export class RendersModule {}
