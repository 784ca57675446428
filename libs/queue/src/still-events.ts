import { OnQueueEvent, QueueEventsHost, QueueEventsListener } from '@nestjs/bullmq';
import { OutageLog } from '#libs/redis';

/**
 * The one listener for finished still jobs per process: the API's still requests wait on it, and so
 * does a worker's workflow row whose render is a still. Provided by the API's renders module and the
 * worker's module.
 */
@QueueEventsListener('stills')
export class StillEvents extends QueueEventsHost {
  private readonly outages = new OutageLog('queue-events:stills');

  /** Its connection's errors while Redis is down: logged once, not printed by BullMQ at every retry. */
  @OnQueueEvent('error')
  onError(err: Error): void {
    this.outages.error(err);
  }
}
