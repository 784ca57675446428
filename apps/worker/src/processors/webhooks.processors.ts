import type { Redis } from 'ioredis';
import type { JobPayloads, JobQueue, JobResults } from '#libs/queue';
import { MAX_ATTEMPTS, type WebhookDeliverer, type WebhookDispatcher } from '#libs/webhooks';
import type { JobProcessor } from './processor.js';

/** Options of every delivery job: 5 attempts on the §6 schedule (the worker's backoff strategy). */
export const DELIVERY_JOB = { attempts: MAX_ATTEMPTS, backoff: { type: 'custom' as const } };

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

/**
 * Outbox → deliveries → one job per delivery (the job id is the delivery id: enqueued once).
 * Single-flight across every worker: the scheduler starts a run each second, and a run that finds
 * another one in progress returns at once instead of redoing its events. A run drains the outbox
 * batch by batch, then watches it until DISPATCH_WATCH_MS have passed.
 */
export class WebhooksDispatchProcessor implements JobProcessor<'webhooks.dispatch'> {
  readonly job = 'webhooks.dispatch' as const;

  constructor(
    private readonly webhooks: WebhookDispatcher,
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
      const started = Date.now();
      let total = 0;
      for (;;) {
        const { events, deliveries } = await this.webhooks.dispatch(enqueue, { batch: DISPATCH_BATCH });
        total += deliveries;
        if (events === 0) {
          if (Date.now() - started >= DISPATCH_WATCH_MS) break;
          await new Promise((r) => setTimeout(r, DISPATCH_POLL_MS));
        }
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

  constructor(private readonly webhooks: WebhookDeliverer) {}

  async process(data: JobPayloads['webhooks.deliver'], meta: { attempt: number }): Promise<JobResults['webhooks.deliver']> {
    const outcome = await this.webhooks.attempt(data.deliveryId, meta.attempt);
    if (outcome === 'retry' && meta.attempt < MAX_ATTEMPTS) throw new RetryDelivery(`attempt ${meta.attempt} will be retried`);
    return { outcome };
  }
}
