import type { ConnectionOptions, FlowJob, Job, Queue } from 'bullmq';
import { currentLogContext, type AppConfig } from '#libs/core';
import { logOutages, redisRetryDelay } from '#libs/redis';
import { queueOf, validatePayload, type JobName, type JobPayloads, type JobResults, type QueueName } from './jobs.js';
import { JOB_OPTIONS } from './options.js';

/** BullMQ connection options for this deployment (blocking workers need maxRetriesPerRequest null). */
export function bullConnection(config: Pick<AppConfig, 'redisUrl'>): ConnectionOptions {
  const url = new URL(config.redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

/**
 * The connection of a process that only adds jobs and listens to their events (the API): no offline
 * queue, so a job that cannot be added while Redis is down fails at once ("Stream isn't writeable…")
 * instead of waiting for Redis, and reconnection every ≤ 0.5 s, so adds work again within a second of
 * Redis (decisions.md "HTTP and errors": fail fast). maxRetriesPerRequest stays null: the queue events
 * a still waits on block on this connection too.
 */
export function producerConnection(config: Pick<AppConfig, 'redisUrl'>): ConnectionOptions {
  return { ...bullConnection(config), enableOfflineQueue: false, retryStrategy: redisRetryDelay };
}

export function bullPrefix(config: Pick<AppConfig, 'redisPrefix'>): string {
  return `${config.redisPrefix}:bull`;
}

/** What a producer may add to a job's options: its id, and a delay. Retries and priorities are JOB_OPTIONS'. */
export interface EnqueueOptions {
  jobId?: string;
  delay?: number;
}

export type TypedJob<N extends JobName> = Job<JobPayloads[N], JobResults[N], N>;

/**
 * The typed producer over the registered queues (QueueModule): every job is added by name, its
 * payload checked and its options (JOB_OPTIONS) applied here, whoever enqueues it.
 */
export class JobQueues {
  constructor(private readonly queues: { readonly [Q in QueueName]: Queue }) {
    logOutages(Object.values(queues), 'queues');
  }

  /** The BullMQ queue (events, schedulers, inspection in tests). */
  queue(name: QueueName): Queue {
    return this.queues[name];
  }

  async add<N extends JobName>(name: N, data: JobPayloads[N], opts: EnqueueOptions = {}): Promise<TypedJob<N>> {
    return (await this.queues[queueOf(name)].add(name, validatePayload(name, tagged(data)), { ...JOB_OPTIONS[name], ...opts })) as TypedJob<N>;
  }

  /** Cuts every queue's Redis connection at once (a stop whose Redis is gone: their close would wait for it forever). */
  async disconnect(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((q) => q.disconnect()));
  }

  /** Several jobs of one name in one round trip. */
  async addBulk<N extends JobName>(name: N, jobs: readonly ({ data: JobPayloads[N] } & EnqueueOptions)[]): Promise<void> {
    if (!jobs.length) return;
    await this.queues[queueOf(name)].addBulk(jobs.map((j) => ({
      name, data: validatePayload(name, tagged(j.data)),
      opts: { ...JOB_OPTIONS[name], ...(j.jobId === undefined ? {} : { jobId: j.jobId }), ...(j.delay === undefined ? {} : { delay: j.delay }) },
    })));
  }

  /** A node of a BullMQ flow (FlowProducer.add) with the same checks and options as `add`. */
  flowJob<N extends JobName>(name: N, data: JobPayloads[N], opts: EnqueueOptions & { children?: FlowJob[] } = {}): FlowJob {
    const { children, ...rest } = opts;
    return { name, queueName: queueOf(name), data: validatePayload(name, tagged(data)), opts: { ...JOB_OPTIONS[name], ...rest }, ...(children ? { children } : {}) };
  }
}

/**
 * A job's payload with the id of the request (or of the job) it is added from, so the worker's lines
 * about it carry the same request id as the API's (`grep req_…` follows a request into the worker).
 */
function tagged<T>(data: T): T {
  const { requestId } = currentLogContext();
  // Only a payload object is tagged; anything else goes on to validatePayload's refusal as it is.
  if (!requestId || typeof data !== 'object' || data === null || Array.isArray(data) || Object.hasOwn(data, 'requestId')) return data;
  return { ...data, requestId };
}

/** A campaign's runner jobs (`campaign.send`), one job id each, so a second add of the same runner is a no-op. */
export async function enqueueCampaignRunners(queues: JobQueues, campaignId: string, workspaceId: string, runners: number): Promise<void> {
  await queues.addBulk('campaign.send', Array.from({ length: runners }, (_, runner) => ({ data: { campaignId, workspaceId, runner }, jobId: `${campaignId}-${runner}` })));
}
