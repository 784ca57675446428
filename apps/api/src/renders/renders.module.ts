import { join } from 'node:path';
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { QueueEvents } from 'bullmq';
import type { AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import type { Orm } from '#libs/db';
import { probeDurations, storageAwareFetcher } from '#libs/media';
import { JobQueue } from '#libs/queue';
import { RedisKeys } from '#libs/redis';
import type { Redis } from 'ioredis';
import { RendersService } from '#libs/renders';
import type { StorageDriver } from '#libs/storage';
import { TemplatesService } from '#libs/templates';
import { STORAGE } from '../files/tokens.js';
import { APP_CONFIG, ORM, REDIS } from '../infra/tokens.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { RendersController } from './renders.controller.js';

const STILLS_QUEUE = Symbol('STILLS_QUEUE');
const VIDEOS_QUEUE = Symbol('VIDEOS_QUEUE');

/** One listener for finished still jobs per API process, opened on the first still. */
class StillEvents {
  private events: Promise<QueueEvents> | null = null;

  constructor(private readonly queue: JobQueue<'stills'>) {}

  get(): Promise<QueueEvents> {
    this.events ??= (async () => {
      const events = this.queue.events();
      await events.waitUntilReady();
      return events;
    })();
    return this.events;
  }

  async close(): Promise<void> {
    if (this.events) await (await this.events).close();
  }
}

@Module({
  imports: [TemplatesModule],
  controllers: [RendersController],
  providers: [
    { provide: STILLS_QUEUE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new JobQueue(config, 'stills') },
    { provide: StillEvents, inject: [STILLS_QUEUE], useFactory: (queue: JobQueue<'stills'>) => new StillEvents(queue) },
    { provide: VIDEOS_QUEUE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new JobQueue(config, 'videos') },
    {
      provide: RendersService,
      inject: [ORM, CreditsService, TemplatesService, STORAGE, STILLS_QUEUE, StillEvents, APP_CONFIG, VIDEOS_QUEUE, REDIS, RedisKeys],
      useFactory: (
        orm: Orm, credits: CreditsService, templates: TemplatesService, storage: StorageDriver, stills: JobQueue<'stills'>,
        events: StillEvents, config: AppConfig, videos: JobQueue<'videos'>, redis: Redis, keys: RedisKeys,
      ) =>
        new RendersService({
          orm, credits, templates, storage, stills, stillEvents: () => events.get(), env: config.env, videos,
          videoAvailable: async () => (await redis.exists(keys.videoEngine())) === 1,
          probeDurations: (sources) => probeDurations(sources, storageAwareFetcher(config, storage), { dir: join(config.dataDir, 'probe') }),
        }),
    },
  ],
  exports: [RendersService],
})
export class RendersModule implements OnApplicationShutdown {
  constructor(
    @Inject(STILLS_QUEUE) private readonly queue: JobQueue<'stills'>,
    @Inject(VIDEOS_QUEUE) private readonly videos: JobQueue<'videos'>,
    private readonly events: StillEvents,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.events.close();
    await this.queue.close();
    await this.videos.close();
  }
}
