import { Module } from '@nestjs/common';
import { CursorCodec, type AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { JobQueues } from '#libs/queue';
import { WebhooksService } from '#libs/webhooks';
import { APP_CONFIG, ORM } from '../infra/tokens.js';
import { OrganizationCallbackController } from './callback.controller.js';
import { OrganizationWebhooksController, WebhooksController } from './webhooks.controller.js';
import { WebhookHandlers } from './webhooks.handlers.js';

@Module({
  controllers: [WebhooksController, OrganizationWebhooksController, OrganizationCallbackController],
  providers: [
    { provide: WebhooksService, inject: [ORM, APP_CONFIG], useFactory: (orm: Orm, config: AppConfig) => new WebhooksService(orm, config) },
    {
      provide: WebhookHandlers,
      inject: [WebhooksService, JobQueues, CursorCodec],
      useFactory: (svc: WebhooksService, queues: JobQueues, cursors: CursorCodec) => new WebhookHandlers(svc, queues, cursors),
    },
  ],
})
export class WebhooksModule {}
