import type { JobPayloads, JobQueue, JobResults } from '#libs/queue';
import { MAX_ATTEMPTS, type WebhooksService } from '#libs/webhooks';
import type { JobProcessor } from './processor.js';

/** Options of every delivery job: 5 attempts on the §6 schedule (the worker's backoff strategy). */
export const DELIVERY_JOB = { attempts: MAX_ATTEMPTS, backoff: { type: 'custom' as const } };

/** Outbox → deliveries → one job per delivery (the job id is the delivery id: enqueued once). */
export class WebhooksDispatchProcessor implements JobProcessor<'webhooks.dispatch'> {
  readonly job = 'webhooks.dispatch' as const;

  constructor(
    private readonly webhooks: WebhooksService,
    private readonly queue: JobQueue<'webhooks'>,
  ) {}

  async process(): Promise<JobResults['webhooks.dispatch']> {
    let total = 0;
    for (;;) {
      const ids = await this.webhooks.dispatch(200);
      await Promise.all(ids.map((deliveryId) => this.queue.add('webhooks.deliver', { deliveryId }, { jobId: deliveryId, ...DELIVERY_JOB })));
      total += ids.length;
      if (ids.length === 0) return { deliveries: total };
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
