import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { CursorCodec, type AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { JobQueue } from '#libs/queue';
import { WebhookDeliverer, WebhookEndpoints, WebhookStore } from '#libs/webhooks';
import { APP_CONFIG, ORM, REDIS } from '../infra/tokens.js';
import { OrganizationCallbackController } from './callback.controller.js';
import { OrganizationWebhooksController, WebhooksController } from './webhooks.controller.js';
import { WebhookHandlers } from './webhooks.handlers.js';

const WEBHOOKS_QUEUE = Symbol('WEBHOOKS_QUEUE');

@Module({
  controllers: [WebhooksController, OrganizationWebhooksController, OrganizationCallbackController],
  providers: [
    { provide: WEBHOOKS_QUEUE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new JobQueue(config, 'webhooks') },
    { provide: WebhookStore, inject: [ORM], useFactory: (orm: Orm) => new WebhookStore(orm) },
    { provide: WebhookDeliverer, inject: [WebhookStore, APP_CONFIG], useFactory: (store: WebhookStore, config: AppConfig) => new WebhookDeliverer(store, config) },
    {
      provide: WebhookEndpoints,
      inject: [ORM, WebhookStore, WebhookDeliverer, REDIS, APP_CONFIG],
      useFactory: (orm: Orm, store: WebhookStore, deliverer: WebhookDeliverer, redis: Redis, config: AppConfig) => new WebhookEndpoints(orm, store, deliverer, redis, config),
    },
    {
      provide: WebhookHandlers,
      inject: [WebhookEndpoints, WEBHOOKS_QUEUE, CursorCodec],
      useFactory: (svc: WebhookEndpoints, queue: JobQueue<'webhooks'>, cursors: CursorCodec) => new WebhookHandlers(svc, queue, cursors),
    },
  ],
})
export class WebhooksModule implements OnApplicationShutdown {
  constructor(@Inject(WEBHOOKS_QUEUE) private readonly queue: JobQueue<'webhooks'>) {}

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
