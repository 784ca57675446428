import { Module } from '@nestjs/common';
import { OnQueueEvent, QueueEventsHost, QueueEventsListener } from '@nestjs/bullmq';
import { AppServices } from '#libs/app';
import { JobQueues } from '#libs/queue';
import { OutageLog } from '#libs/redis';
import { RendersService } from '#libs/renders';
import { RenderEventsController } from './render-events.controller.js';
import { RenderEventStreams } from './render-events.js';
import { TemplatePreviewsController } from './previews.controller.js';
import { RendersController } from './renders.controller.js';
import { ShotstackController, ShotstackStageController } from './shotstack.controller.js';

/** One listener for finished still jobs per API process (a still request waits on it). */
@QueueEventsListener('stills')
class StillEvents extends QueueEventsHost {
  private readonly outages = new OutageLog('queue-events:stills');

  /** Its connection's errors while Redis is down: logged once, not printed by BullMQ at every retry. */
  @OnQueueEvent('error')
  onError(err: Error): void {
    this.outages.error(err);
  }
}

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
