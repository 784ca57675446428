import { Inject, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectFlowProducer, OnWorkerEvent, Processor } from '@nestjs/bullmq';
import type { FlowProducer, Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { AutoCaptions } from '#libs/captions';
import { sweepScratch, type AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { isWorkerLost, JobQueues, VIDEO_FLOWS, VIDEO_LOST_WORKERS, type JobPayloads, type TypedJob } from '#libs/queue';
import { RedisKeys } from '#libs/redis';
import { RenderLifecycle, sweepChunkFolders } from '#libs/renders';
import { RenderFeed } from '#libs/events';
import type { StorageDriver } from '#libs/storage';
import { WorkspacePlans } from '#libs/workspaces';
import { ORM, REDIS, STORAGE, WORKER_CONFIG } from '../tokens.js';
import { VideoEngineHolder } from '../videos/engine.holder.js';
import { cleanupChunks, videoJobScratch, VideoChunkJob, VideoCombineJob, VideoRenderJob, type VideoJobDeps, type VideoRun } from '../videos/video-jobs.js';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

type VideoJobName = 'video.render' | 'video.chunk' | 'video.combine';

/**
 * The `videos` queue: whole renders, and the chunks and joins of long mp4s (docs/video.md). It takes
 * jobs only once this worker's engine (bundle and browser) is up. A job whose worker died is run
 * again by another (BullMQ stalled jobs; the render goes back to `queued`) until it has lost
 * VIDEO_LOST_WORKERS workers, then the render fails WORKER_LOST with its credits released.
 */
@Processor('videos')
export class VideosProcessor extends QueueProcessor<'videos'> implements OnApplicationBootstrap {
  readonly queue = 'videos';
  private readonly deps: VideoJobDeps;
  private readonly jobs: { render: VideoRenderJob; chunk: VideoChunkJob; combine: VideoCombineJob };

  constructor(
    @Inject(WORKER_CONFIG) config: AppConfig,
    @Inject(ORM) orm: Orm,
    @Inject(REDIS) redis: Redis,
    @Inject(STORAGE) storage: StorageDriver,
    @InjectFlowProducer(VIDEO_FLOWS) flows: FlowProducer,
    private readonly queues: JobQueues,
    keys: RedisKeys,
    private readonly lifecycle: RenderLifecycle,
    private readonly engine: VideoEngineHolder,
    autoCaptions: AutoCaptions,
    feed: RenderFeed,
    plans: WorkspacePlans,
  ) {
    super();
    this.deps = { orm, engine, storage, lifecycle, redis, keys, queues, flows, config, autoCaptions, feed, plans };
    this.jobs = { render: new VideoRenderJob(this.deps), chunk: new VideoChunkJob(this.deps), combine: new VideoCombineJob(this.deps) };
  }

  /** A run's number counts the runs whose worker died (the render record shows it). */
  private run<N extends VideoJobName>(data: JobPayloads[N], job: TypedJob<N>, token: string | undefined): VideoRun<N> {
    return { data, job, token, attempt: job.attemptsMade + 1 + job.stalledCounter };
  }

  protected readonly handlers: QueueHandlers<'videos'> = {
    'video.render': (data, job, token) => this.jobs.render.run(this.run<'video.render'>(data, job, token)),
    'video.chunk': (data, job, token) => this.jobs.chunk.run(this.run<'video.chunk'>(data, job, token)),
    'video.combine': (data, job, token) => this.jobs.combine.run(this.run<'video.combine'>(data, job, token)),
  };

  /**
   * Videos are taken only once this worker's engine is ready, in the background (stills and webhooks
   * do not wait). Before, the leftovers of killed workers go: their scratch folders on this machine
   * (the engine sweeps its work dir as it starts) and the chunk folders of settled renders in storage.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.sweepLeftovers(true);
    if (!(await this.engine.enabled())) return;
    void this.engine.start().then(
      () => this.worker.run().catch((err: Error) => this.log.error(`video worker stopped: ${err.message}`)),
      (err: Error) => this.log.error(`video engine did not start: ${err.message}`),
    );
  }

  /** After each video job: the scratch folders of workers of this machine that died meanwhile (decisions.md "Hostile input (issue 27): outbound"). */
  @OnWorkerEvent('completed')
  afterCompleted(): void {
    void this.sweepLeftovers(false);
  }

  private sweeping: Promise<void> | undefined;

  /** Removes what killed workers left: scratch folders here (and, at start, settled renders' chunk folders in storage). Never fails. */
  sweepLeftovers(atStart: boolean): Promise<void> {
    this.sweeping ??= (async () => {
      const removed = [...await sweepScratch(videoJobScratch(this.deps.config)), ...((await this.engine.running?.sweepLeftovers()) ?? [])];
      if (atStart) removed.push(...await sweepChunkFolders(this.deps.orm, this.deps.storage));
      if (removed.length) this.log.log(`removed ${removed.length} folder(s) left by stopped workers`);
    })().catch((err: Error) => this.log.warn(`leftover sweep failed: ${err.message}`)).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** A render whose worker died goes back to `queued` (its job back in the wait list) until another takes it. */
  @OnWorkerEvent('stalled')
  requeueStalled(jobId: string): void {
    this.log.warn(`video job ${jobId} stalled: its worker stopped; it runs again`);
    // A whole render's job id is its render id (a chunk's id matches no render: its render stays as it is).
    // The stalled count already includes this stall: the run that died is the one before the next.
    void this.queues.queue('videos').getJob(jobId)
      .then((job) => (job ? this.lifecycle.requeue(jobId, job.attemptsMade + job.stalledCounter) : undefined))
      .catch(() => undefined);
  }

  /**
   * The end of a render whose job gave up: stalled past its runs (workers killed mid-render) →
   * WORKER_LOST; a chunked render whose chunk or join gave up (failParentOnFailure) → failed once.
   * Either way its chunk files go and its credits are released.
   */
  @OnWorkerEvent('failed')
  settleAbandoned(job: Job | undefined, err: Error): void {
    if (!job) return;
    const { renderId, token } = job.data as { renderId: string; token?: string };
    const cleanup = () => (token ? cleanupChunks(this.deps, renderId, token) : undefined);
    void this.sweepLeftovers(false);
    if (isWorkerLost(err)) {
      void this.lifecycle.lost(renderId, `The render's worker stopped ${VIDEO_LOST_WORKERS} times; it is not given another`, 'rendering')
        .then(cleanup).catch(() => undefined);
    } else if (job.name === 'video.combine') {
      void this.lifecycle.fail(renderId, { code: 'INTERNAL_ERROR', message: `The render could not be finished: ${err.message}`, stage: 'rendering' })
        .then(cleanup).catch(() => undefined);
    }
  }
}
