import { Module } from '@nestjs/common';
import { CursorCodec } from '#libs/core';
import { JobQueues } from '#libs/queue';
import { WebhookEndpoints } from '#libs/webhooks';
import { OrganizationCallbackController } from './callback.controller.js';
import { OrganizationWebhooksController, WebhooksController } from './webhooks.controller.js';
import { WebhookHandlers } from './webhooks.handlers.js';

@Module({
  controllers: [WebhooksController, OrganizationWebhooksController, OrganizationCallbackController],
  providers: [
    {
      provide: WebhookHandlers,
      inject: [WebhookEndpoints, JobQueues, CursorCodec],
      useFactory: (svc: WebhookEndpoints, queues: JobQueues, cursors: CursorCodec) => new WebhookHandlers(svc, queues, cursors),
    },
  ],
})
export class WebhooksModule {}
