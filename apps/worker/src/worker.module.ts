import { hostname } from 'node:os';
import { Logger, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { getFlowProducerToken, InjectFlowProducer } from '@nestjs/bullmq';
import type { FlowProducer } from 'bullmq';
import sharp from 'sharp';
import { AppServices, fromServices, PROCESS_ROLES } from '#libs/app';
import { AssetsService } from '#libs/assets';
import { AutoCaptions, TranscriptionRunner, TranscriptionsService } from '#libs/captions';
import type { AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { CampaignsService } from '#libs/messaging';
import { enqueueCampaignRunners, JobQueues, queueOf, QueueModule, SCHEDULES, StillEvents, VIDEO_FLOWS } from '#libs/queue';
import { RedisKeys } from '#libs/redis';
import { BullVideoQueue, driverStorage, OrmRenderRepository, ownScratch, RedisSlotLeases, RenderLifecycle, RenderSweeps, StillRuns, systemClock, VideoRuns, videoJobScratch } from '#libs/renders';
import { RenderFeed } from '#libs/events';
import { FontCatalog, StillEngine, storageAwareFetcher } from '#libs/still';
import type { StorageDriver } from '#libs/storage';
import { WebhookDeliverer, WebhookDispatcher } from '#libs/webhooks';
import { WorkspacePlans } from '#libs/workspaces';
import { WorkflowRunner } from '#libs/workflows';
import { AssetsProcessor } from './processors/assets.processor.js';
import { CampaignsProcessor } from './processors/campaigns.processor.js';
import { CaptionsProcessor } from './processors/captions.processor.js';
import { checkHandlers, configuredProcessor } from './processors/queue-processor.js';
import { StillsProcessor } from './processors/stills.processor.js';
import { SystemProcessor } from './processors/system.processor.js';
import { VideosProcessor } from './processors/videos.processor.js';
import { WebhooksProcessor } from './processors/webhooks.processor.js';
import { WorkflowsProcessor } from './processors/workflows.processor.js';
import { ORM, REDIS, STORAGE, WORKER_CONFIG } from './tokens.js';
import { VideoEngineHolder } from './videos/engine.holder.js';

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
 * The worker: one `@Processor` per queue (processors/) over the worker's AppServices (libs/app) and
 * its engines, the recurring jobs scheduled once per deployment, and a bounded shutdown.
 */
@Module({})
export class WorkerModule implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('worker');

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [QueueModule.forRoot(config)],
      providers: [
        { provide: AppServices, useFactory: () => AppServices.open(config, PROCESS_ROLES.worker) },
        fromServices(WORKER_CONFIG, 'config'), fromServices(ORM, 'orm'), fromServices(REDIS, 'redis'), fromServices(STORAGE, 'storage'),
        fromServices(RedisKeys, 'redisKeys'), fromServices(CreditsService, 'credits'), fromServices(RenderLifecycle, 'lifecycle'),
        fromServices(WebhookDeliverer, 'webhookDeliverer'), fromServices(WebhookDispatcher, 'webhookDispatcher'), fromServices(AssetsService, 'assets'),
        fromServices(TranscriptionRunner, 'transcriptionRunner'), fromServices(AutoCaptions, 'autoCaptions'), fromServices(TranscriptionsService, 'transcriptions'),
        fromServices(RenderFeed, 'renderFeed'), fromServices(WorkspacePlans, 'workspacePlans'),
        { provide: FontCatalog, useFactory: () => FontCatalog.system() },
        {
          provide: VideoEngineHolder,
          inject: [AppServices, FontCatalog],
          useFactory: (services: AppServices, fonts: FontCatalog) => new VideoEngineHolder(config, services.storage, fonts, services.videoEngineBeacon),
        },
        {
          provide: VideoRuns,
          inject: [AppServices, JobQueues, getFlowProducerToken(VIDEO_FLOWS), VideoEngineHolder],
          useFactory: (services: AppServices, queues: JobQueues, flows: FlowProducer, engine: VideoEngineHolder) => new VideoRuns({
            lifecycle: services.lifecycle, plans: services.workspacePlans, feed: services.renderFeed, captions: services.autoCaptions, clock: systemClock,
            slots: new RedisSlotLeases(services.redis, services.redisKeys), queue: new BullVideoQueue(services.redis, services.redisKeys, queues, flows),
            storage: driverStorage(services.storage), scratch: ownScratch(videoJobScratch(config)), engine: () => engine.current(),
            chunks: { frames: config.video.chunkFrames, minFrames: config.video.chunkMinFrames }, worker: `${hostname()}:${process.pid}`,
          }),
        },
        {
          provide: StillRuns,
          inject: [AppServices, StillEngine],
          useFactory: (services: AppServices, engine: StillEngine) => new StillRuns({ engine, storage: driverStorage(services.storage), lifecycle: services.lifecycle, clock: systemClock }),
        },
        {
          provide: RenderSweeps,
          inject: [AppServices],
          useFactory: (services: AppServices) => new RenderSweeps(new OrmRenderRepository(services.orm, services.credits), services.lifecycle, services.storage),
        },
        {
          provide: StillEngine,
          inject: [FontCatalog, STORAGE, VideoEngineHolder],
          useFactory: async (fonts: FontCatalog, storage: StorageDriver, video: VideoEngineHolder) => {
            // libvips defaults to one thread here; two lets one still use both cores.
            sharp.concurrency(2);
            return new StillEngine({ fonts, fetch: storageAwareFetcher(config, storage), ...((await video.enabled()) ? { browserStill: video.browserStill, printHtml: video.printHtml } : {}) });
          },
        },
        { provide: SystemProcessor, useClass: configuredProcessor(SystemProcessor, 'system', { concurrency: config.workerConcurrency }) },
        { provide: WebhooksProcessor, useClass: configuredProcessor(WebhooksProcessor, 'webhooks', { concurrency: config.webhookConcurrency }) },
        { provide: StillsProcessor, useClass: configuredProcessor(StillsProcessor, 'stills', { concurrency: config.stillConcurrency, lockDuration: config.stillLockMs, stalledInterval: config.stillLockMs }) },
        { provide: AssetsProcessor, useClass: configuredProcessor(AssetsProcessor, 'assets', { concurrency: config.assets.concurrency, lockDuration: config.assets.lockMs, stalledInterval: config.assets.lockMs }) },
        { provide: CaptionsProcessor, useClass: configuredProcessor(CaptionsProcessor, 'captions', { concurrency: config.captions.concurrency }) },
        {
          // A workflow row renders as POST /v1/render does (RendersService on this worker's queues), waiting on the stills' completion events.
          provide: WorkflowRunner,
          inject: [AppServices, JobQueues, StillEvents],
          useFactory: (services: AppServices, queues: JobQueues, events: StillEvents) => services.workflowRunner({
            queues,
            stillEvents: async () => {
              await events.queueEvents.waitUntilReady();
              return events.queueEvents;
            },
          }),
        },
        StillEvents,
        { provide: WorkflowsProcessor, useClass: configuredProcessor(WorkflowsProcessor, 'workflows', { concurrency: config.workflowConcurrency }) },
        {
          provide: CampaignsService,
          inject: [AppServices, JobQueues],
          useFactory: (services: AppServices, queues: JobQueues) => services.campaigns((campaignId, workspaceId, runners) => enqueueCampaignRunners(queues, campaignId, workspaceId, runners)),
        },
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
    private readonly services: AppServices,
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
    await within(this.services.close(), 2_000);
  }
}
