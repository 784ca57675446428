import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, type Type } from '@nestjs/common';
import type { Job, WorkerOptions } from 'bullmq';
import { withLogContext, type LogContext } from '#libs/core';
import { isRedisUnavailable, OutageLog } from '#libs/redis';
import { ALL_JOBS, QUEUE_WORKER_SETTINGS, queueOf, validatePayload, type JobName, type JobNameOf, type JobPayloads, type JobResults, type QueueName, type TypedJob } from '#libs/queue';

/** Runs one job of a name: its checked payload, the BullMQ job, and the worker's lock token. */
export type JobHandler<N extends JobName> = (data: JobPayloads[N], job: TypedJob<N>, token: string | undefined) => Promise<JobResults[N]>;

/** One handler for every job name of a queue (a missing or extra one is a type error, and a start-up error). */
export type QueueHandlers<Q extends QueueName> = { readonly [N in JobNameOf<Q>]: JobHandler<N> };

/** Thrown by a handler to have BullMQ run the job again after its backoff (an expected outcome: not logged as a failure). */
export class RunAgain extends Error {}

/**
 * The consumer of one queue (one `@Processor` class per queue): routes each job by its typed name to
 * its handler, after checking its payload again as it is taken, and counts the jobs running (the
 * bounded shutdown waits for them).
 */
export abstract class QueueProcessor<Q extends QueueName> extends WorkerHost {
  abstract readonly queue: Q;
  protected abstract readonly handlers: QueueHandlers<Q>;
  /** Jobs of this processor running now. */
  running = 0;
  protected readonly log = new Logger('worker');
  private readonly outages = new OutageLog('worker:redis');

  /** The job names this processor handles. */
  handles(): JobName[] {
    return Object.keys(this.handlers) as JobName[];
  }

  async process(job: Job, token?: string): Promise<unknown> {
    const name = job.name as JobNameOf<Q>;
    const handler = (Object.hasOwn(this.handlers, name) ? this.handlers[name] : undefined) as JobHandler<JobNameOf<Q>> | undefined;
    if (!handler) throw new Error(`No handler for ${job.name} on the ${this.queue} queue`);
    const data = validatePayload(name, job.data);
    this.running++;
    try {
      // Every line the job writes carries its queue, its id and the ids of what it works on.
      return await withLogContext({ queue: this.queue, ...(job.id ? { jobId: job.id } : {}), ...idsOf(data) }, () => handler(data, job as TypedJob<JobNameOf<Q>>, token));
    } finally {
      this.running--;
    }
  }

  /** A job that failed (a run that will be retried, or its last): logged, unless it asked to run again. */
  @OnWorkerEvent('failed')
  logFailure(job: Job | undefined, err: Error): void {
    if (!(err instanceof RunAgain)) this.log.warn(`${job?.name} ${job?.id} failed: ${err.message}`);
  }

  /**
   * The worker's errors (not a job's): Redis unreachable is logged once an outage (OutageLog), not
   * printed by BullMQ at every reconnection attempt; anything else as it comes.
   */
  @OnWorkerEvent('error')
  logError(err: Error): void {
    if (isRedisUnavailable(err) || /^E[A-Z]+$/.test(String((err as NodeJS.ErrnoException).code))) this.outages.error(err);
    else this.log.error(`${this.queue} worker: ${err.message}`);
  }

  @OnWorkerEvent('ready')
  logRedisReady(): void {
    this.outages.ready();
  }
}

/** Each job name has exactly one handler, in the processor of its own queue; the worker refuses to start otherwise. */
export function checkHandlers(processors: readonly Pick<QueueProcessor<QueueName>, 'queue' | 'handles'>[]): void {
  const seen = new Map<JobName, QueueName>();
  for (const p of processors) {
    for (const name of p.handles()) {
      if (!ALL_JOBS.includes(name)) throw new Error(`The ${p.queue} processor handles ${name}, which is no job`);
      if (queueOf(name) !== p.queue) throw new Error(`The ${p.queue} processor handles ${name}, a job of the ${queueOf(name)} queue`);
      if (seen.has(name)) throw new Error(`Two processors handle ${name}`);
      seen.set(name, p.queue);
    }
  }
  const missing = ALL_JOBS.filter((j) => !seen.has(j));
  if (missing.length) throw new Error(`No processor handles ${missing.join(', ')}`);
}

/**
 * A processor class bound to its queue with this deployment's worker options (concurrency, locks):
 * `@Processor` reads options from class metadata, so each application gets a subclass of its own
 * decorated with the options of its configuration (two worker applications in one process, as in
 * the tests, do not share them). The queue's fixed settings (QUEUE_WORKER_SETTINGS) come first.
 */
export function configuredProcessor<T extends Type<WorkerHost>>(base: T, queue: QueueName, options: Partial<WorkerOptions>): T {
  const configured = class extends (base as Type<object>) {};
  Object.defineProperty(configured, 'name', { value: base.name });
  Processor(queue, { ...QUEUE_WORKER_SETTINGS[queue], ...options })(configured);
  return configured as T;
}

/** The ids a job's payload names (a render, an asset, a transcription, a campaign, an event, a delivery). */
function idsOf(data: unknown): LogContext {
  const d = data as Record<string, unknown>;
  const ids: LogContext = {};
  for (const key of ['requestId', 'renderId', 'assetId', 'transcriptionId', 'campaignId', 'eventId', 'deliveryId'] as const) {
    if (typeof d[key] === 'string') ids[key] = d[key];
  }
  return ids;
}
