import { hostname } from 'node:os';
import { Logger, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectFlowProducer } from '@nestjs/bullmq';
import type { FlowProducer } from 'bullmq';
import sharp from 'sharp';
import { build, PROCESS_ROLES, ServicesCloser, ServicesModule } from '#libs/app';
import type { AppConfig } from '#libs/core';
import { deliveryBackoff, JobQueues, queueOf, SCHEDULES, VIDEO_FLOWS } from '#libs/queue';
import { AutoCaptions } from '#libs/captions';
import { RenderFeed } from '#libs/events';
import { BullVideoQueue, driverStorage, ownScratch, RedisSlotLeases, RenderLifecycle, StillRuns, systemClock, VideoEngineBeacon, VideoRuns, videoJobScratch } from '#libs/renders';
import { FontCatalog, StillEngine, storageAwareFetcher } from '#libs/still';
import type { StorageDriver } from '#libs/storage';
import { WorkspacePlans } from '#libs/workspaces';
import { AssetsProcessor } from './processors/assets.processor.js';
import { CampaignsProcessor } from './processors/campaigns.processor.js';
import { CaptionsProcessor } from './processors/captions.processor.js';
import { checkHandlers, configuredProcessor } from './processors/queue-processor.js';
import { StillsProcessor } from './processors/stills.processor.js';
import { SystemProcessor } from './processors/system.processor.js';
import { VideosProcessor } from './processors/videos.processor.js';
import { WebhooksProcessor } from './processors/webhooks.processor.js';
import { WorkflowsProcessor } from './processors/workflows.processor.js';
import { STORAGE } from './tokens.js';
import { VideoEngineHolder } from './videos/engine.holder.js';
import { EngineCensusReporter } from './engine-census.reporter.js';

/** How long a stopping worker waits for its running jobs (docker/compose.yaml gives the whole stop 45 s). */
export const SHUTDOWN_GRACE_MS = 30_000;

/** Waits for `work` at most `ms`: true when it finished (or failed) in time. */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
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

/**
 * The worker: one `@Processor` per queue (processors/) over the libs' services (libs/app ServicesModule) and
 * its engines, the recurring jobs scheduled once per deployment, and a bounded shutdown.
 */
@Module({})
export class WorkerModule implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('worker');

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [ServicesModule.forRoot(config, PROCESS_ROLES.worker)],
      providers: [
        { provide: FontCatalog, useFactory: () => FontCatalog.system() },
        EngineCensusReporter,
        build(VideoEngineHolder, [STORAGE, FontCatalog, VideoEngineBeacon], (storage, fonts, beacon) => new VideoEngineHolder(config, storage, fonts, beacon)),
        build(VideoRuns, [RenderLifecycle, WorkspacePlans, RenderFeed, AutoCaptions, RedisSlotLeases, BullVideoQueue, STORAGE, VideoEngineHolder],
          (lifecycle, plans, feed, captions, slots, queue, storage, engine) => new VideoRuns({
            lifecycle, plans, feed, captions, clock: systemClock, slots, queue,
            storage: driverStorage(storage), scratch: ownScratch(videoJobScratch(config)), engine: () => engine.current(),
            chunks: { frames: config.video.chunkFrames, minFrames: config.video.chunkMinFrames }, worker: `${hostname()}:${process.pid}`,
          })),
        build(StillRuns, [StillEngine, STORAGE, RenderLifecycle], (engine, storage, lifecycle) => new StillRuns({ engine, storage: driverStorage(storage), lifecycle, clock: systemClock })),
        {
          provide: StillEngine,
          inject: [FontCatalog, STORAGE, VideoEngineHolder],
          useFactory: async (fonts: FontCatalog, storage: StorageDriver, video: VideoEngineHolder) => {
            // libvips' threads per image: sharp's own choice, every core under jemalloc (scripts/up.sh, the
            // worker image) and one under glibc's allocator, whose arenas fragment under libvips' threads
            // until a long-lived worker's memory grows without end (docs/benchmarks.md "Soak").
            new Logger('worker').log(`libvips threads per image: ${sharp.concurrency()}${sharp.concurrency() > 1 ? '' : ' (glibc allocator: run the worker with LD_PRELOAD=libjemalloc.so.2 for more)'}`);
            return new StillEngine({ fonts, fetch: storageAwareFetcher(config, storage), ...((await video.enabled()) ? { browserStill: video.browserStill, printHtml: video.printHtml, printsText: video.printsText } : {}) });
          },
        },
        { provide: SystemProcessor, useClass: configuredProcessor(SystemProcessor, 'system', { concurrency: config.workerConcurrency }) },
        { provide: WebhooksProcessor, useClass: configuredProcessor(WebhooksProcessor, 'webhooks', {
            concurrency: config.webhookConcurrency, lockDuration: config.webhookLockMs, stalledInterval: config.webhookLockMs,
            ...(config.webhookRetryDelaysMs ? { settings: { backoffStrategy: deliveryBackoff(config.webhookRetryDelaysMs) } } : {}),
          }) },
        { provide: StillsProcessor, useClass: configuredProcessor(StillsProcessor, 'stills', { concurrency: config.stillConcurrency, lockDuration: config.stillLockMs, stalledInterval: config.stillLockMs }) },
        { provide: AssetsProcessor, useClass: configuredProcessor(AssetsProcessor, 'assets', { concurrency: config.assets.concurrency, lockDuration: config.assets.lockMs, stalledInterval: config.assets.lockMs }) },
        { provide: CaptionsProcessor, useClass: configuredProcessor(CaptionsProcessor, 'captions', { concurrency: config.captions.concurrency }) },
        { provide: WorkflowsProcessor, useClass: configuredProcessor(WorkflowsProcessor, 'workflows', { concurrency: config.workflowConcurrency }) },
        { provide: CampaignsProcessor, useClass: configuredProcessor(CampaignsProcessor, 'campaigns', { concurrency: config.messaging.campaignConcurrency }) },
        {
          provide: VideosProcessor,
          // Not consuming until the engine is up (VideosProcessor starts it); locks as VIDEO_LOCK_MS says.
          useClass: configuredProcessor(VideosProcessor, 'videos', { concurrency: config.video.concurrency, autorun: false, lockDuration: config.video.lockMs, stalledInterval: config.video.lockMs }),
        },
      ],
    };
  }

  private readonly processors: (SystemProcessor | WebhooksProcessor | StillsProcessor | VideosProcessor | AssetsProcessor | CaptionsProcessor | WorkflowsProcessor | CampaignsProcessor)[];
  private released!: () => void;
  /**
   * Settles once the workers stopped taking jobs and let go of the running ones (beforeApplicationShutdown).
   * main.ts bounds the rest of the stop from here: with Redis gone, BullMQ's own closing hooks never end.
   */
  readonly jobsReleased = new Promise<void>((resolve) => {
    this.released = resolve;
  });

  constructor(
    system: SystemProcessor,
    webhooks: WebhooksProcessor,
    stills: StillsProcessor,
    videos: VideosProcessor,
    assets: AssetsProcessor,
    captions: CaptionsProcessor,
    workflows: WorkflowsProcessor,
    campaigns: CampaignsProcessor,
    private readonly queues: JobQueues,
    @InjectFlowProducer(VIDEO_FLOWS) private readonly flows: FlowProducer,
    private readonly video: VideoEngineHolder,
    private readonly closer: ServicesCloser,
  ) {
    this.processors = [system, webhooks, stills, videos, assets, captions, workflows, campaigns];
  }

  async onApplicationBootstrap(): Promise<void> {
    checkHandlers(this.processors);
    for (const s of SCHEDULES) await this.queues.queue(queueOf(s.job)).upsertJobScheduler(s.job, { every: s.everyMs }, { name: s.job, data: {} });
  }

  private running(): number {
    return this.processors.reduce((n, p) => n + p.running, 0);
  }

  /**
   * SIGTERM/SIGINT (main.ts): stop taking jobs and let the running ones finish for up to
   * SHUTDOWN_GRACE_MS (a video still rendering then runs again on another worker). Every step is
   * bounded: when Redis is gone BullMQ's close waits for it forever, so the workers' connections are
   * then cut, and main.ts bounds the whole stop.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const workers = this.processors.map((p) => p.worker);
    const closing = Promise.all(workers.map((w) => w.close()));
    // Running jobs get the grace period; an idle worker (or one whose Redis is gone) gets 2 s.
    let deadline = Date.now() + SHUTDOWN_GRACE_MS;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      // Once nothing runs, 2 s more for BullMQ to record the last results and let go.
      if (this.running() === 0) deadline = Math.min(deadline, Date.now() + 2_000);
      closed = await within(closing, Math.max(1, Math.min(250, deadline - Date.now())));
    }
    if (!closed) {
      if (this.running() > 0) this.logger.warn(`${this.running()} job(s) still running after the grace period: stopping without them (they run again elsewhere)`);
      // Cut the connections BullMQ would otherwise wait on for ever (Redis gone): workers, queues, flows.
      await within(Promise.all([...workers.map((w) => w.disconnect()), this.queues.disconnect(), this.flows.disconnect()]), 2_000);
    }
    this.released();
  }

  async onApplicationShutdown(): Promise<void> {
    await within(this.video.close(), 5_000);
    // Before BullMQ's own closing hooks (which wait for a Redis that is gone for ever); Nest's hook on the closer then finds it done.
    await within(this.closer.close(), 2_000);
  }
}
