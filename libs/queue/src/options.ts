import type { BackoffOptions, JobsOptions, WorkerOptions } from 'bullmq';
import type { JobName, QueueName } from './jobs.js';

/**
 * Webhook deliveries (§6 "Retries"): 5 attempts, the pauses between them 1, 4, 9 and 16 s. The worker's
 * backoff strategy and every producer of `webhooks.deliver` read these; nothing else states them.
 */
export const DELIVERY_RETRY_DELAYS_MS: readonly number[] = [1000, 4000, 9000, 16000];
export const DELIVERY_ATTEMPTS = DELIVERY_RETRY_DELAYS_MS.length + 1;

/**
 * The webhooks worker's backoff strategy: the wait before the retry after `attemptsMade` runs of a
 * `webhooks.deliver` job, counting the attempts made before the job (its `after`: a retry of an
 * event's first attempt starts at 1). Tests may shorten the waits: WEBHOOK_RETRY_DELAYS_MS.
 */
export function deliveryBackoff(delays: readonly number[]): (attemptsMade: number, type?: string, err?: Error, job?: { data?: unknown }) => number {
  return (attemptsMade, _type, _err, job) => {
    const after = (job?.data as { after?: number } | undefined)?.after ?? 0;
    return delays[Math.min(after + attemptsMade, delays.length) - 1] ?? 1000;
  };
}

/** Runs of a video job before it fails: a run that failed on our side (not the edit's fault) runs again (decisions.md "Render record"). */
export const VIDEO_ATTEMPTS = 3;

/**
 * Workers a video may lose before it fails WORKER_LOST: a worker that dies mid-render hands it on
 * once; a render that killed two workers is not given a third (issue 27). A still or an asset is
 * never given a second: it fails after one lost worker (maxStalledCount 0 on their queues).
 */
export const VIDEO_LOST_WORKERS = 2;

/** BullMQ's failure of a job whose worker died more often than its queue allows (maxStalledCount). */
export function isWorkerLost(err: { message: string } | string): boolean {
  return /stalled more than allowable limit/i.test(typeof err === 'string' ? err : err.message);
}

/** Runs of a transcription before an outage fails it. */
export const TRANSCRIPTION_ATTEMPTS = 3;

/** Runs of a workflow row before its failure is recorded (its steps are skipped once done, so a rerun repeats nothing). */
export const WORKFLOW_ROW_ATTEMPTS = 3;

/** How long the API waits for a synchronous still before it answers 504 RENDER_TIMEOUT. */
export const STILL_TIMEOUT_MS = 60_000;

/** Finished jobs kept for inspection (BullMQ removes older ones). */
const KEEP = { removeOnComplete: 1000, removeOnFail: 5000 } as const;

const videoRuns: { attempts: number; backoff: BackoffOptions } = { attempts: VIDEO_ATTEMPTS, backoff: { type: 'fixed', delay: 1000 } };

/**
 * The options every job is enqueued with, by name: the API, the worker and the CLI enqueue through
 * `JobQueues.add`, which applies them, so producers cannot disagree about retries or priorities.
 * A producer adds only its job id (and, for flows, the parent link).
 */
export const JOB_OPTIONS: { readonly [N in JobName]: Readonly<JobsOptions> } = {
  'system.ping': KEEP,
  'credits.sweep': KEEP,
  'renders.purge': KEEP,
  'assets.sweep': KEEP,
  'transcriptions.sweep': KEEP,
  // A crash mid-processing (the worker died, storage was down) runs it again; a bad file fails at once.
  'asset.process': { ...KEEP, attempts: 3, backoff: { type: 'exponential', delay: 2000 } },
  // A provider outage (5xx, 429, timeout) or a crash runs it again, 5 s then 10 s later; then it fails.
  'transcription.run': { ...KEEP, attempts: TRANSCRIPTION_ATTEMPTS, backoff: { type: 'exponential', delay: 5000 } },
  // A runner that failed on our side (the database, Redis) runs again; recipients it claimed are settled by the rule of docs/decisions.md.
  'campaign.send': { ...KEEP, attempts: 5, backoff: { type: 'fixed', delay: 2000 } },
  'webhooks.dispatch': KEEP,
  // First attempts of one or more events of a workspace. Not kept once finished: its id is stored on
  // its deliveries, and a kept job would keep the dispatcher's safety net (stale pending deliveries)
  // from enqueueing them again under it. A run that failed on our side (the database) runs again;
  // the attempts it recorded are not repeated.
  // One that failed three times is kept an hour: the safety net tries a delivery that always fails
  // (a secret that no longer opens) once an hour, not every two minutes.
  'webhooks.deliver-event': { removeOnComplete: true, removeOnFail: { age: 3600 }, attempts: 3, backoff: { type: 'fixed', delay: 1000 } },
  // BullMQ's retries carry the §6 schedule (the webhooks worker's custom backoff below).
  'webhooks.deliver': { ...KEEP, attempts: DELIVERY_ATTEMPTS, backoff: { type: 'custom' } },
  // Stills are waited on by an API request; their queue carries nothing else, so they need no priority
  // to go first, and without one they wait in the queue's wait list, which KEDA's list scaler reads
  // (deploy/kubernetes; a prioritized job waits in a sorted set instead).
  'still.render': KEEP,
  'video.render': { ...KEEP, ...videoRuns },
  // A chunk that gives up fails its render's combine job, which settles the render once.
  'video.chunk': { ...KEEP, ...videoRuns, failParentOnFailure: true },
  'video.combine': { ...KEEP, ...videoRuns },
  // A row's steps are idempotent (docs/workflows.md), so an outage or a dead worker runs it again; a
  // row that gives up is recorded failed by the run's parent, which runs whatever its children did.
  'workflow.row': { ...KEEP, attempts: WORKFLOW_ROW_ATTEMPTS, backoff: { type: 'exponential', delay: 2000 }, ignoreDependencyOnFailure: true },
  'workflow.run': { ...KEEP, attempts: 3, backoff: { type: 'exponential', delay: 2000 } },
};

/** Worker settings of a queue that do not depend on the deployment's configuration. */
export const QUEUE_WORKER_SETTINGS: { readonly [Q in QueueName]: Partial<WorkerOptions> } = {
  system: {},
  webhooks: {
    settings: { backoffStrategy: deliveryBackoff(DELIVERY_RETRY_DELAYS_MS) },
  },
  // A still or an asset whose worker died is not run again (it may be what killed it): it fails WORKER_LOST.
  stills: { maxStalledCount: 0 },
  // A video whose worker died is run again by another (BullMQ's stalled jobs), VIDEO_LOST_WORKERS lost in all.
  videos: { maxStalledCount: VIDEO_LOST_WORKERS - 1 },
  assets: { maxStalledCount: 0 },
  captions: {},
  workflows: {},
  // A runner whose worker died runs again elsewhere (the campaign's other runners usually finish it first).
  campaigns: { maxStalledCount: 5 },
};

/** Recurring jobs, one schedule per deployment whatever the number of workers. */
export const SCHEDULES = [
  { job: 'credits.sweep', everyMs: 5 * 60_000 },
  { job: 'renders.purge', everyMs: 10 * 60_000 },
  { job: 'assets.sweep', everyMs: 15 * 60_000 },
  { job: 'transcriptions.sweep', everyMs: 15 * 60_000 },
  { job: 'webhooks.dispatch', everyMs: 1_000 },
] as const satisfies readonly { job: JobName; everyMs: number }[];
