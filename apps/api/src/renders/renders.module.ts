import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { QueueEventsHost, QueueEventsListener } from '@nestjs/bullmq';
import type { AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import type { Orm } from '#libs/db';
import { probeDurations, storageAwareFetcher } from '#libs/media';
import { JobQueues } from '#libs/queue';
import { RedisKeys } from '#libs/redis';
import type { Redis } from 'ioredis';
import { RendersService } from '#libs/renders';
import type { StorageDriver } from '#libs/storage';
import { TemplatesService } from '#libs/templates';
import { STORAGE } from '../files/tokens.js';
import { APP_CONFIG, ORM, REDIS } from '../infra/tokens.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { RendersController } from './renders.controller.js';

/** One listener for finished still jobs per API process (a still request waits on it). */
@QueueEventsListener('stills')
class StillEvents extends QueueEventsHost {}

@Module({
  imports: [TemplatesModule],
  controllers: [RendersController],
  providers: [
    StillEvents,
    {
      provide: RendersService,
      inject: [ORM, CreditsService, TemplatesService, STORAGE, JobQueues, StillEvents, APP_CONFIG, REDIS, RedisKeys],
      useFactory: (
        orm: Orm, credits: CreditsService, templates: TemplatesService, storage: StorageDriver, queues: JobQueues,
        events: StillEvents, config: AppConfig, redis: Redis, keys: RedisKeys,
      ) =>
        new RendersService({
          orm, credits, templates, storage, queues, env: config.env,
          stillEvents: async () => {
            await events.queueEvents.waitUntilReady();
            return events.queueEvents;
          },
          videoAvailable: async () => (await redis.exists(keys.videoEngine())) === 1,
          probeDurations: (sources) => probeDurations(sources, storageAwareFetcher(config, storage), { dir: join(config.dataDir, 'probe') }),
        }),
    },
  ],
  exports: [RendersService],
})
export class RendersModule {}
