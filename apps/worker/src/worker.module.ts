import { Inject, Logger, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker } from 'bullmq';
import { openAppDatabase } from '#libs/app';
import type { AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { retryBusy, type Orm } from '#libs/db';
import { ALL_JOBS, bullConnection, bullPrefix, JobQueue, QUEUES, validatePayload, type JobName, type QueueName } from '#libs/queue';
import { createRedis, RedisKeys } from '#libs/redis';
import { Render, RenderSettler, TERMINAL_STATUSES, VIDEO_ATTEMPTS } from '#libs/renders';
import { FontCatalog, StillEngine, storageAwareFetcher } from '#libs/still';
import { createStorage, type StorageDriver } from '#libs/storage';
import { RETRY_DELAYS_MS, WebhookDeliverer, WebhookDispatcher, WebhookStore } from '#libs/webhooks';
import sharp from 'sharp';
import type { Redis } from 'ioredis';
import { CreditsSweepProcessor } from './processors/credits-sweep.processor.js';
import { PingProcessor } from './processors/ping.processor.js';
import { PROCESSORS, type JobProcessor } from './processors/processor.js';
import { RendersPurgeProcessor } from './processors/renders-purge.processor.js';
import { StillRenderProcessor } from './processors/still.processor.js';
import { cleanupChunks, VideoChunkProcessor, VideoCombineProcessor, VideoRenderProcessor } from './processors/video.processor.js';
import { VideoEngineHolder } from './video-engine.holder.js';
import { RetryDelivery, WebhooksDeliverProcessor, WebhooksDispatchProcessor } from './processors/webhooks.processors.js';

const WORKER_CONFIG = Symbol('WORKER_CONFIG');
const WORKER_ORM = Symbol('WORKER_ORM');
const WEBHOOKS_QUEUE = Symbol('WEBHOOKS_QUEUE');
const WORKER_REDIS = Symbol('WORKER_REDIS');
const VIDEO = Symbol('VIDEO');
const SETTLER = Symbol('SETTLER');

/** Recurring jobs, one schedule per deployment whatever the number of workers. */
export const SCHEDULES = [
  { queue: 'system', job: 'credits.sweep', everyMs: 5 * 60_000 },
  { queue: 'system', job: 'renders.purge', everyMs: 10 * 60_000 },
  { queue: 'webhooks', job: 'webhooks.dispatch', everyMs: 1_000 },
] as const;

/** Each job name must have exactly one processor. */
export function processorMap(processors: readonly JobProcessor[]): Map<JobName, JobProcessor> {
  const map = new Map<JobName, JobProcessor>();
  for (const p of processors) {
    if (map.has(p.job)) throw new Error(`Two processors handle ${p.job}`);
    map.set(p.job, p);
  }
  const missing = ALL_JOBS.filter((j) => !map.has(j));
  if (missing.length) throw new Error(`No processor handles ${missing.join(', ')}`);
  return map;
}

/** How long a stopping worker waits for its running jobs (docker/compose.yaml gives the whole stop 45 s). */
export const SHUTDOWN_GRACE_MS = 30_000;

/** Waits for `work` at most `ms`: true when it finished (or failed) in time. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

@Module({})
export class WorkerModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('worker');
  private readonly workers: Worker[] = [];
  /** Jobs this process is running now (a stopping worker waits only while there are some). */
  private running = 0;
  private readonly storage: StorageDriver;
  private readonly keys: RedisKeys;

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: WORKER_ORM, useFactory: () => openAppDatabase(config.database) },
        { provide: WEBHOOKS_QUEUE, useFactory: () => new JobQueue(config, 'webhooks') },
        { provide: WORKER_REDIS, useFactory: () => createRedis(config, 'worker') },
        {
          provide: VIDEO,
          inject: [WORKER_REDIS],
          useFactory: async (redis: Redis): Promise<{ holder: VideoEngineHolder; enabled: boolean; fonts: FontCatalog }> => {
            const fonts = await FontCatalog.system();
            const holder = new VideoEngineHolder(config, createStorage(config), fonts, redis, new RedisKeys(config.redisPrefix));
            return { holder, enabled: await holder.enabled(), fonts };
          },
        },
        {
          provide: SETTLER,
          inject: [WORKER_ORM],
          useFactory: (orm: Orm) => new RenderSettler(orm, new CreditsService(orm, { lowThreshold: config.creditsLowThreshold }), createStorage(config)),
        },
        {
          provide: PROCESSORS,
          inject: [WORKER_ORM, WEBHOOKS_QUEUE, WORKER_REDIS, VIDEO, SETTLER],
          useFactory: async (
            orm: Orm, webhooksQueue: JobQueue<'webhooks'>, redis: Redis, video: { holder: VideoEngineHolder; enabled: boolean; fonts: FontCatalog }, settler: RenderSettler,
          ): Promise<JobProcessor[]> => {
            const webhooks = new WebhookStore(orm);
            const storage = createStorage(config);
            // libvips defaults to one thread here; two lets one still use both cores.
            sharp.concurrency(2);
            const stills = new StillEngine({
              fonts: video.fonts,
              fetch: storageAwareFetcher(config, storage),
              ...(video.enabled ? { browserStill: video.holder.browserStill } : {}),
            });
            return [
              new StillRenderProcessor(stills, storage, settler),
              ...[VideoRenderProcessor, VideoChunkProcessor, VideoCombineProcessor].map(
                (P) => new P({ orm, engine: video.holder, storage, settler, redis, keys: new RedisKeys(config.redisPrefix), config }),
              ),
              new RendersPurgeProcessor(orm, storage, settler),
              new PingProcessor(),
              new CreditsSweepProcessor(new CreditsService(orm, { lowThreshold: config.creditsLowThreshold }), config.maxRenderAgeSec),
              new WebhooksDispatchProcessor(new WebhookDispatcher(orm, webhooks, redis, config), webhooksQueue, redis, `${config.redisPrefix}:webhooks:dispatch-lock`),
              new WebhooksDeliverProcessor(new WebhookDeliverer(webhooks, config)),
            ] as JobProcessor[];
          },
        },
      ],
    };
  }

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    @Inject(PROCESSORS) private readonly processors: JobProcessor[],
    @Inject(WORKER_ORM) private readonly orm: Orm,
    @Inject(WEBHOOKS_QUEUE) private readonly webhooksQueue: JobQueue<'webhooks'>,
    @Inject(WORKER_REDIS) private readonly redis: Redis,
    @Inject(VIDEO) private readonly video: { holder: VideoEngineHolder; enabled: boolean },
    @Inject(SETTLER) private readonly settler: RenderSettler,
  ) {
    this.storage = createStorage(config);
    this.keys = new RedisKeys(config.redisPrefix);
  }

  async onApplicationBootstrap(): Promise<void> {
    const handlers = processorMap(this.processors);
    const concurrency: Record<QueueName, number> = {
      system: this.config.workerConcurrency, webhooks: this.config.webhookConcurrency, stills: this.config.stillConcurrency, videos: this.config.video.concurrency,
    };
    const consume = (queue: QueueName) => {
      const worker = new Worker(
        queue,
        async (job, token) => {
          const handler = handlers.get(job.name as JobName);
          if (!handler) throw new Error(`No processor for ${job.name}`);
          const data = validatePayload(job.name as JobName, job.data);
          this.running++;
          try {
            // A video's runs include those its dead workers started (the render record counts them);
            // webhook deliveries number their own attempts (a rerun after a crash resends the same one).
            return await handler.process(data as never, { id: job.id ?? '', attempt: job.attemptsMade + 1 + (queue === 'videos' ? job.stalledCounter : 0), job, ...(token === undefined ? {} : { token }) });
          } finally {
            this.running--;
          }
        },
        {
          connection: bullConnection(this.config),
          prefix: bullPrefix(this.config),
          concurrency: concurrency[queue],
          // Webhook retries: 1 s, 4 s, 9 s, 16 s (§6).
          settings: { backoffStrategy: (attemptsMade: number) => RETRY_DELAYS_MS[Math.min(attemptsMade, RETRY_DELAYS_MS.length) - 1] ?? 1000 },
          // A video whose worker died is run again by another, up to VIDEO_ATTEMPTS runs in all.
          ...(queue === 'videos' ? { maxStalledCount: VIDEO_ATTEMPTS - 1, lockDuration: this.config.video.lockMs, stalledInterval: this.config.video.lockMs } : {}),
        },
      );
      worker.on('failed', (job, err) => {
        if (err instanceof RetryDelivery) return;
        this.logger.warn(`${job?.name} ${job?.id} failed: ${err.message}`);
        // A render whose job stalled past its runs (workers killed mid-render): WORKER_LOST, credits released.
        const video = job?.name === 'video.render' || job?.name === 'video.chunk' || job?.name === 'video.combine';
        if (video && /stalled/i.test(err.message)) {
          const { renderId, token } = job.data as { renderId: string; token?: string };
          void this.settler.fail(renderId, { code: 'WORKER_LOST', message: `The render's worker stopped ${VIDEO_ATTEMPTS} times`, stage: 'rendering' })
            // A chunked render's parent fails with its chunk without running: remove the chunks here.
            .then(() => (token ? cleanupChunks({ storage: this.storage, redis: this.redis, keys: this.keys }, renderId, token) : undefined))
            .catch(() => undefined);
        } else if (job?.name === 'video.combine') {
          // A chunked render whose chunk or join gave up (failParentOnFailure): failed once, chunks removed.
          const { renderId, token } = job.data as { renderId: string; token: string };
          void this.settler.fail(renderId, { code: 'INTERNAL_ERROR', message: `The render could not be finished: ${err.message}`, stage: 'rendering' })
            .then(() => cleanupChunks({ storage: this.storage, redis: this.redis, keys: this.keys }, renderId, token))
            .catch(() => undefined);
        }
      });
      if (queue === 'videos') {
        // A render whose worker died goes back to `queued` (its job back in the wait list) until another takes it.
        worker.on('stalled', (jobId) => {
          this.logger.warn(`video job ${jobId} stalled: its worker stopped; it runs again`);
          void retryBusy(() => this.orm.em.fork().nativeUpdate(Render, { id: jobId, status: { $nin: [...TERMINAL_STATUSES] } }, { status: 'queued', progress: 0 })).catch(() => undefined);
        });
      }
      this.workers.push(worker);
    };
    for (const queue of Object.keys(QUEUES) as QueueName[]) if (queue !== 'videos') consume(queue);
    // Videos are taken only once this worker's engine is ready (bundle and browser), in the background.
    if (this.video.enabled) {
      void this.video.holder.start().then(
        () => consume('videos'),
        (err: Error) => this.logger.error(`video engine did not start: ${err.message}`),
      );
    }
    for (const s of SCHEDULES) {
      const q = new JobQueue(this.config, s.queue);
      await q.queue.upsertJobScheduler(s.job, { every: s.everyMs }, { name: s.job, data: {} });
      await q.close();
    }
  }

  /**
   * SIGTERM/SIGINT: stop taking jobs and let the running ones finish for up to SHUTDOWN_GRACE_MS
   * (a video still rendering then runs again on another worker); every step is bounded, so the
   * process exits even when Redis is gone (BullMQ's close waits for it forever).
   */
  async onApplicationShutdown(): Promise<void> {
    const closing = Promise.all(this.workers.map((w) => w.close()));
    // Running jobs get the grace period; an idle worker (or one whose Redis is gone) gets 2 s.
    let deadline = Date.now() + SHUTDOWN_GRACE_MS;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      // Once nothing runs, 2 s more for BullMQ to record the last results and let go.
      if (this.running === 0) deadline = Math.min(deadline, Date.now() + 2_000);
      closed = await within(closing, Math.max(1, Math.min(250, deadline - Date.now())));
    }
    if (!closed) {
      if (this.running > 0) this.logger.warn(`${this.running} job(s) still running after the grace period: stopping without them (they run again elsewhere)`);
      await within(Promise.all(this.workers.map((w) => w.close(true))), 2_000);
    }
    await Promise.all([within(this.video.holder.close(), 5_000), within(this.webhooksQueue.close(), 2_000)]);
    this.redis.disconnect();
    await within(this.orm.close(true), 2_000);
  }
}
