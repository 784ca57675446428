import { Processor } from '@nestjs/bullmq';
import { DELIVERY_ATTEMPTS, JobQueues } from '#libs/queue';
import { WebhookDeliverer, WebhookDispatcher } from '#libs/webhooks';
import { QueueProcessor, RunAgain, type QueueHandlers } from './queue-processor.js';

/** The `webhooks` queue: the outbox dispatcher and one attempt of one delivery (§6). */
@Processor('webhooks')
export class WebhooksProcessor extends QueueProcessor<'webhooks'> {
  readonly queue = 'webhooks';

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly deliverer: WebhookDeliverer,
    private readonly queues: JobQueues,
  ) {
    super();
  }

  protected readonly handlers: QueueHandlers<'webhooks'> = {
    /** Outbox → deliveries → one job per delivery (the job id is the delivery id: enqueued once). */
    'webhooks.dispatch': () => this.dispatcher.drain((ids) => this.queues.addBulk('webhooks.deliver', ids.map((deliveryId) => ({ data: { deliveryId }, jobId: deliveryId })))),

    /** One attempt; BullMQ runs the next one on the §6 schedule (JOB_OPTIONS, the queue's backoff). */
    'webhooks.deliver': async (data, job) => {
      // Deliveries number their own attempts: a rerun after a crash resends the same attempt.
      const attempt = job.attemptsMade + 1;
      const outcome = await this.deliverer.attempt(data.deliveryId, attempt);
      if (outcome === 'retry' && attempt < DELIVERY_ATTEMPTS) throw new RunAgain(`attempt ${attempt} will be retried`);
      return { outcome };
    },
  };
}
