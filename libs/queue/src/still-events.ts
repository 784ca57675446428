import { OnQueueEvent, QueueEventsHost, QueueEventsListener } from '@nestjs/bullmq';
import type { QueueEvents } from 'bullmq';
import { OutageLog } from '#libs/redis';

/**
 * The one listener for finished still jobs per process: the API's still requests wait on it, and so
 * does a worker's workflow row whose render is a still. Provided by libs/app's ServicesModule in the
 * processes that have queues (the API and the worker).
 */
@QueueEventsListener('stills')
export class StillEvents extends QueueEventsHost {
  private readonly outages = new OutageLog('queue-events:stills');

  /** The events once its connection listens (RendersDeps' `stillEvents`). */
  async ready(): Promise<QueueEvents> {
    await this.queueEvents.waitUntilReady();
    return this.queueEvents;
  }

  /** Its connection's errors while Redis is down: logged once, not printed by BullMQ at every retry. */
  @OnQueueEvent('error')
  onError(err: Error): void {
    this.outages.error(err);
  }
}
