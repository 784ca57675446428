import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import type { AppConfig } from '#libs/core';
import { DELIVERY_ATTEMPTS, DELIVERY_RETRY_DELAYS_MS, deliveryBackoff, JobQueues } from '#libs/queue';
import { WebhookDeliverer, WebhookDispatcher, type DeliveryJobs } from '#libs/webhooks';
import { WORKER_CONFIG } from '../tokens.js';
import { QueueProcessor, RunAgain, type QueueHandlers } from './queue-processor.js';

/**
 * The `webhooks` queue (§6): the outbox dispatcher, the first attempts of events' deliveries (up to
 * DELIVERIES_PER_JOB a job, whole events), and one attempt of one delivery (its retries, a redelivery, a test).
 */
@Processor('webhooks')
export class WebhooksProcessor extends QueueProcessor<'webhooks'> {
  readonly queue = 'webhooks';
  /** The wait before a delivery's next attempt, after `made` attempts (the worker's own backoff strategy). */
  private readonly retryWait: (made: number) => number;

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly deliverer: WebhookDeliverer,
    private readonly queues: JobQueues,
    @Inject(WORKER_CONFIG) config: AppConfig,
  ) {
    super();
    this.retryWait = deliveryBackoff(config.webhookRetryDelaysMs ?? DELIVERY_RETRY_DELAYS_MS);
  }

  protected readonly handlers: QueueHandlers<'webhooks'> = {
    /** Outbox → deliveries → first-attempts jobs of up to DELIVERIES_PER_JOB (whole events) and, for lost retries, one per delivery. */
    'webhooks.dispatch': () => this.dispatcher.drain((jobs) => this.enqueue(jobs)),

    /** First attempts of one or more events' deliveries; each delivery due for a retry gets its own job, on the §6 schedule from there. */
    'webhooks.deliver-event': async (data) => {
      const outcomes = await this.deliverer.firstAttempts(data.deliveryIds);
      const retries = outcomes.filter((o) => o.outcome === 'retry' && o.after < DELIVERY_ATTEMPTS);
      await this.enqueue({ events: [], retries: retries.map((o) => ({ deliveryId: o.deliveryId, after: o.after })) });
      return { attempted: outcomes.length, retries: retries.length };
    },

    /** One attempt; BullMQ runs the next one on the §6 schedule (JOB_OPTIONS, the queue's backoff). */
    'webhooks.deliver': async (data, job) => {
      // Deliveries number their own attempts: a rerun after a crash resends the same attempt.
      const attempt = (data.after ?? 0) + job.attemptsMade + 1;
      const outcome = await this.deliverer.attempt(data.deliveryId, attempt);
      if (outcome === 'retry' && attempt < DELIVERY_ATTEMPTS) throw new RunAgain(`attempt ${attempt} will be retried`);
      return { outcome };
    },
  };

  /** Job ids are the ones stored on the deliveries and the delivery's, so whatever is enqueued twice runs once. */
  private async enqueue(jobs: DeliveryJobs): Promise<void> {
    await this.queues.addBulk('webhooks.deliver-event', jobs.events.map((e) => ({ data: { eventId: e.eventId, deliveryIds: e.deliveryIds }, jobId: e.jobId })));
    await this.queues.addBulk('webhooks.deliver', jobs.retries.map((r) => ({ data: r, jobId: r.deliveryId, delay: this.retryWait(r.after) })));
  }
}
