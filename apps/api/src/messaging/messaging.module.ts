import { Module } from '@nestjs/common';
import { AppServices, fromServices } from '#libs/app';
import { CampaignsService, MessagingService, StatusCallbacks } from '#libs/messaging';
import { enqueueCampaignRunners, JobQueues } from '#libs/queue';
import { MessagingController } from './messaging.controller.js';
import { StatusCallbacksController } from './status-callbacks.controller.js';

/** §4.5 the messaging-provider routes (libs/messaging): sends, campaigns (run by the worker's `campaigns` queue) and the providers' status callbacks. */
@Module({
  controllers: [MessagingController, StatusCallbacksController],
  providers: [
    fromServices(MessagingService, 'messaging'),
    {
      provide: CampaignsService,
      inject: [AppServices, JobQueues],
      useFactory: (services: AppServices, queues: JobQueues) => services.campaigns((campaignId, workspaceId, runners) => enqueueCampaignRunners(queues, campaignId, workspaceId, runners)),
    },
    {
      provide: StatusCallbacks,
      inject: [AppServices, CampaignsService],
      useFactory: (services: AppServices, campaigns: CampaignsService) => new StatusCallbacks({ integrations: services.integrations, campaigns }),
    },
  ],
})
export class MessagingModule {}
