import { Module } from '@nestjs/common';
import { QueueEventsHost, QueueEventsListener } from '@nestjs/bullmq';
import { AppServices } from '#libs/app';
import { JobQueues } from '#libs/queue';
import { RendersService } from '#libs/renders';
import { RendersController } from './renders.controller.js';
import { ShotstackController, ShotstackStageController } from './shotstack.controller.js';

/** One listener for finished still jobs per API process (a still request waits on it). */
@QueueEventsListener('stills')
class StillEvents extends QueueEventsHost {}

@Module({
  controllers: [RendersController, ShotstackController, ShotstackStageController],
  providers: [
    StillEvents,
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
