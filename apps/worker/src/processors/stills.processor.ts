import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { isWorkerLost } from '#libs/queue';
import { StillRuns } from '#libs/renders';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/**
 * The `stills` queue, an adapter of StillRuns (libs/renders): draws a still, stores it and settles its
 * render. A still whose worker died is not drawn again (maxStalledCount 0): the worker that finds its
 * job stalled fails it WORKER_LOST.
 */
@Processor('stills')
export class StillsProcessor extends QueueProcessor<'stills'> {
  readonly queue = 'stills';

  constructor(private readonly runs: StillRuns) {
    super();
  }

  protected readonly handlers: QueueHandlers<'stills'> = {
    'still.render': (data) => this.runs.run(data),
  };

  /** A still job whose worker died: its render fails WORKER_LOST (once, whichever of this and the waiting API settles it). */
  @OnWorkerEvent('failed')
  failLost(job: Job | undefined, err: Error): void {
    const { renderId, key } = (job?.data ?? {}) as { renderId?: string; key?: string };
    if (!renderId || !isWorkerLost(err)) return;
    this.log.warn(`still ${renderId}: its worker stopped while drawing it; it is not drawn again`);
    void this.runs.lost(renderId, key).catch(() => undefined);
  }
}
