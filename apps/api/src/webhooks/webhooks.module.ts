import { Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { CursorCodec, type AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { JobQueues } from '#libs/queue';
import { WebhookDeliverer, WebhookEndpoints, WebhookStore } from '#libs/webhooks';
import { APP_CONFIG, ORM, REDIS } from '../infra/tokens.js';
import { OrganizationCallbackController } from './callback.controller.js';
import { OrganizationWebhooksController, WebhooksController } from './webhooks.controller.js';
import { WebhookHandlers } from './webhooks.handlers.js';

@Module({
  controllers: [WebhooksController, OrganizationWebhooksController, OrganizationCallbackController],
  providers: [
    { provide: WebhookStore, inject: [ORM], useFactory: (orm: Orm) => new WebhookStore(orm) },
    { provide: WebhookDeliverer, inject: [WebhookStore, APP_CONFIG], useFactory: (store: WebhookStore, config: AppConfig) => new WebhookDeliverer(store, config) },
    {
      provide: WebhookEndpoints,
      inject: [ORM, WebhookStore, WebhookDeliverer, REDIS, APP_CONFIG],
      useFactory: (orm: Orm, store: WebhookStore, deliverer: WebhookDeliverer, redis: Redis, config: AppConfig) => new WebhookEndpoints(orm, store, deliverer, redis, config),
    },
    {
      provide: WebhookHandlers,
      inject: [WebhookEndpoints, JobQueues, CursorCodec],
      useFactory: (svc: WebhookEndpoints, queues: JobQueues, cursors: CursorCodec) => new WebhookHandlers(svc, queues, cursors),
    },
  ],
})
export class WebhooksModule {}
