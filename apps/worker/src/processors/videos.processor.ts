import type { OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { DelayedError, type Job } from 'bullmq';
import { sweepScratch } from '#libs/core';
import { isWorkerLost, JobQueues, type JobResults, type TypedJob, type VideoChunkResult } from '#libs/queue';
import { RenderSweeps, VideoRuns, type VideoRun, type WaitForSlot } from '#libs/renders';
import { VideoEngineHolder } from '../videos/engine.holder.js';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

type VideoJobName = 'video.render' | 'video.chunk' | 'video.combine';

/** The run a job is: its payload, its run number (counting runs whose worker died), its failure on the run before. */
function runOf<N extends VideoJobName>(job: TypedJob<N>): VideoRun<N> {
  return { data: job.data, attempt: job.attemptsMade + 1 + job.stalledCounter, previousFailure: job.failedReason };
}

/**
 * The `videos` queue, an adapter of VideoRuns (libs/renders): whole renders, and the chunks and joins
 * of long mp4s (docs/video.md). It takes jobs only once this worker's engine (bundle and browser) is
 * up. A run over its workspace's slots goes back to the delayed list without using up a run.
 */
@Processor('videos')
export class VideosProcessor extends QueueProcessor<'videos'> implements OnApplicationBootstrap {
  readonly queue = 'videos';

  constructor(
    private readonly runs: VideoRuns,
    private readonly sweeps: RenderSweeps,
    private readonly engine: VideoEngineHolder,
    private readonly queues: JobQueues,
  ) {
    super();
  }

  protected readonly handlers: QueueHandlers<'videos'> = {
    'video.render': async (_data, job, token) => waitOr(await this.runs.render(runOf(job)), job, token),
    'video.chunk': (_data, job) => this.runs.chunk(runOf(job)),
    'video.combine': (_data, job) => this.runs.combine(runOf(job), async () => Object.values(await job.getChildrenValues()) as VideoChunkResult[]),
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
      const removed = [...await sweepScratch(this.engine.jobScratch), ...((await this.engine.running?.sweepLeftovers()) ?? [])];
      if (atStart) removed.push(...await this.sweeps.sweepChunkFolders());
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
      .then((job) => (job ? this.runs.stalled(jobId, job.attemptsMade + job.stalledCounter) : undefined))
      .catch(() => undefined);
  }

  /** The end of a render whose job gave up (VideoRuns.abandoned). */
  @OnWorkerEvent('failed')
  settleAbandoned(job: Job | undefined, err: Error): void {
    if (!job) return;
    void this.sweepLeftovers(false);
    void this.runs.abandoned(job.name as VideoJobName, job.data as { renderId: string; token?: string }, isWorkerLost(err), err.message).catch(() => undefined);
  }
}

/** A run that found no free slot: the job goes back to the delayed list (BullMQ's DelayedError) without using up a run. */
async function waitOr(outcome: JobResults['video.render'] | WaitForSlot, job: TypedJob<'video.render'>, token: string | undefined): Promise<JobResults['video.render']> {
  if (!('wait' in outcome)) return outcome;
  if (token === undefined) throw new Error('video jobs need their lock token to wait for a slot');
  await job.moveToDelayed(Date.now() + outcome.wait, token);
  throw new DelayedError();
}
