import type { Redis } from 'ioredis';
import type { JobPayloads, JobQueue, JobResults } from '#libs/queue';
import { MAX_ATTEMPTS, type WebhooksService } from '#libs/webhooks';
import type { JobProcessor } from './processor.js';

/** Options of every delivery job: 5 attempts on the §6 schedule (the worker's backoff strategy). */
export const DELIVERY_JOB = { attempts: MAX_ATTEMPTS, backoff: { type: 'custom' as const } };

/** How long one dispatcher holds the deployment-wide dispatch lock at most. */
const DISPATCH_LOCK_MS = 60_000;
/** Pending deliveries this old are re-enqueued (their job was lost with a killed worker). */
const STALE_PENDING_MS = 120_000;

/**
 * Outbox → deliveries → one job per delivery (the job id is the delivery id: enqueued once).
 * Single-flight across every worker: the scheduler starts a run each second, and a run that finds
 * another one in progress returns at once instead of redoing its events.
 */
export class WebhooksDispatchProcessor implements JobProcessor<'webhooks.dispatch'> {
  readonly job = 'webhooks.dispatch' as const;

  constructor(
    private readonly webhooks: WebhooksService,
    private readonly queue: JobQueue<'webhooks'>,
    private readonly redis: Redis,
    private readonly lockKey: string,
  ) {}

  async process(): Promise<JobResults['webhooks.dispatch']> {
    const redis = this.redis;
    const token = `${process.pid}:${Date.now()}:${Math.random()}`;
    if ((await redis.set(this.lockKey, token, 'PX', DISPATCH_LOCK_MS, 'NX')) !== 'OK') return { deliveries: 0 };
    const enqueue = async (ids: string[]) => {
      await this.queue.queue.addBulk(ids.map((deliveryId) => ({ name: 'webhooks.deliver', data: { deliveryId }, opts: { jobId: deliveryId, ...DELIVERY_JOB, removeOnComplete: 1000, removeOnFail: 5000 } })));
    };
    try {
      let total = 0;
      for (;;) {
        const n = await this.webhooks.dispatch(enqueue, 200);
        total += n;
        if (n === 0) break;
        await redis.pexpire(this.lockKey, DISPATCH_LOCK_MS);
      }
      const stale = await this.webhooks.stalePending(STALE_PENDING_MS);
      if (stale.length) await enqueue(stale);
      return { deliveries: total };
    } finally {
      if ((await redis.get(this.lockKey)) === token) await redis.del(this.lockKey);
    }
  }
}

/** Thrown to have BullMQ try the delivery again after the next pause. */
export class RetryDelivery extends Error {}

export class WebhooksDeliverProcessor implements JobProcessor<'webhooks.deliver'> {
  readonly job = 'webhooks.deliver' as const;

  constructor(private readonly webhooks: WebhooksService) {}

  async process(data: JobPayloads['webhooks.deliver'], meta: { attempt: number }): Promise<JobResults['webhooks.deliver']> {
    const outcome = await this.webhooks.attempt(data.deliveryId, meta.attempt);
    if (outcome === 'retry' && meta.attempt < MAX_ATTEMPTS) throw new RetryDelivery(`attempt ${meta.attempt} will be retried`);
    return { outcome };
  }
}
