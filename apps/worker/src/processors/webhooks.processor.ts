import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import type { Redis } from 'ioredis';
import type { AppConfig } from '#libs/core';
import { DELIVERY_ATTEMPTS, JobQueues, type JobResults } from '#libs/queue';
import { WebhookDeliverer, WebhookDispatcher } from '#libs/webhooks';
import { REDIS, WORKER_CONFIG } from '../tokens.js';
import { QueueProcessor, RunAgain, type QueueHandlers } from './queue-processor.js';

/**
 * The deployment-wide dispatch lock's lifetime, renewed at every batch and every poll: a killed
 * dispatcher holds the others off for at most this long. (A batch slower than this lets a second
 * dispatcher in; that is safe, only wasted work.)
 */
const DISPATCH_LOCK_MS = 10_000;
/**
 * A run keeps watching the outbox for this long, polling every DISPATCH_POLL_MS, so an event
 * waits about DISPATCH_POLL_MS for its fan-out instead of up to the scheduler's 1 s; the next
 * scheduled run (every second) then takes over.
 */
const DISPATCH_WATCH_MS = 900;
const DISPATCH_POLL_MS = 50;
/** Pending deliveries this old are re-enqueued (their job was lost with a killed worker). */
const STALE_PENDING_MS = 120_000;
/** Events taken per dispatch batch (the deliveries of a batch are inserted and enqueued together). */
const DISPATCH_BATCH = 200;

/** The `webhooks` queue: the outbox dispatcher and one attempt of one delivery (§6). */
@Processor('webhooks')
export class WebhooksProcessor extends QueueProcessor<'webhooks'> {
  readonly queue = 'webhooks';
  private readonly lockKey: string;

  constructor(
    @Inject(WORKER_CONFIG) config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly dispatcher: WebhookDispatcher,
    private readonly deliverer: WebhookDeliverer,
    private readonly queues: JobQueues,
  ) {
    super();
    this.lockKey = `${config.redisPrefix}:webhooks:dispatch-lock`;
  }

  protected readonly handlers: QueueHandlers<'webhooks'> = {
    'webhooks.dispatch': () => this.dispatch(),

    /** One attempt; BullMQ runs the next one on the §6 schedule (JOB_OPTIONS, the queue's backoff). */
    'webhooks.deliver': async (data, job) => {
      // Deliveries number their own attempts: a rerun after a crash resends the same attempt.
      const attempt = job.attemptsMade + 1;
      const outcome = await this.deliverer.attempt(data.deliveryId, attempt);
      if (outcome === 'retry' && attempt < DELIVERY_ATTEMPTS) throw new RunAgain(`attempt ${attempt} will be retried`);
      return { outcome };
    },
  };

  /**
   * Outbox → deliveries → one job per delivery (the job id is the delivery id: enqueued once).
   * Single-flight across every worker: the scheduler starts a run each second, and a run that finds
   * another one in progress returns at once instead of redoing its events. A run drains the outbox
   * batch by batch, then watches it until DISPATCH_WATCH_MS have passed.
   */
  private async dispatch(): Promise<JobResults['webhooks.dispatch']> {
    const redis = this.redis;
    const token = `${process.pid}:${Date.now()}:${Math.random()}`;
    if ((await redis.set(this.lockKey, token, 'PX', DISPATCH_LOCK_MS, 'NX')) !== 'OK') return { deliveries: 0 };
    const enqueue = (ids: string[]) => this.queues.addBulk('webhooks.deliver', ids.map((deliveryId) => ({ data: { deliveryId }, jobId: deliveryId })));
    try {
      const started = Date.now();
      let total = 0;
      for (;;) {
        const { events, deliveries } = await this.dispatcher.dispatch(enqueue, { batch: DISPATCH_BATCH });
        total += deliveries;
        if (events === 0) {
          if (Date.now() - started >= DISPATCH_WATCH_MS) break;
          await new Promise((r) => setTimeout(r, DISPATCH_POLL_MS));
        }
        await redis.pexpire(this.lockKey, DISPATCH_LOCK_MS);
      }
      const stale = await this.dispatcher.stalePending(STALE_PENDING_MS);
      if (stale.length) await enqueue(stale);
      return { deliveries: total };
    } finally {
      if ((await redis.get(this.lockKey)) === token) await redis.del(this.lockKey);
    }
  }
}
