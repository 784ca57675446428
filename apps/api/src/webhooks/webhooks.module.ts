import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { CursorCodec, type AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { JobQueue } from '#libs/queue';
import { WebhooksService } from '#libs/webhooks';
import { APP_CONFIG, ORM } from '../infra/tokens.js';
import { OrganizationCallbackController } from './callback.controller.js';
import { OrganizationWebhooksController, WebhooksController } from './webhooks.controller.js';
import { WebhookHandlers } from './webhooks.handlers.js';

const WEBHOOKS_QUEUE = Symbol('WEBHOOKS_QUEUE');

@Module({
  controllers: [WebhooksController, OrganizationWebhooksController, OrganizationCallbackController],
  providers: [
    { provide: WEBHOOKS_QUEUE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new JobQueue(config, 'webhooks') },
    { provide: WebhooksService, inject: [ORM, APP_CONFIG], useFactory: (orm: Orm, config: AppConfig) => new WebhooksService(orm, config) },
    {
      provide: WebhookHandlers,
      inject: [WebhooksService, WEBHOOKS_QUEUE, CursorCodec],
      useFactory: (svc: WebhooksService, queue: JobQueue<'webhooks'>, cursors: CursorCodec) => new WebhookHandlers(svc, queue, cursors),
    },
  ],
})
export class WebhooksModule implements OnApplicationShutdown {
  constructor(@Inject(WEBHOOKS_QUEUE) private readonly queue: JobQueue<'webhooks'>) {}

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
