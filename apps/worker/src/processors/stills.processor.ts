import { Inject } from '@nestjs/common';
import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { ApiError } from '#libs/core';
import type { EditSpec } from '#libs/edit-spec';
import { isWorkerLost, type JobPayloads, type JobResults } from '#libs/queue';
import { RenderLifecycle, renderError, STILL_WORKER_LOST } from '#libs/renders';
import { StillEngine } from '#libs/still';
import type { StorageDriver } from '#libs/storage';
import { STORAGE } from '../tokens.js';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/**
 * The `stills` queue: draws a still and stores it, then settles its render (done or failed, credits,
 * event), so nothing depends on the API process that waits for it: the API reads the settled record.
 * A refusal the caller caused (an unknown font, an unreachable image, an unsupported asset) is
 * `{ ok: false, error }` (renderError's mapping); a fault of ours fails the render and the job.
 * A still whose worker died is not drawn again (it may be what killed it; maxStalledCount 0): the
 * worker that finds its job stalled fails it WORKER_LOST, credit released, one `render.failed`.
 */
@Processor('stills')
export class StillsProcessor extends QueueProcessor<'stills'> {
  readonly queue = 'stills';

  constructor(
    private readonly engine: StillEngine,
    @Inject(STORAGE) private readonly storage: StorageDriver,
    private readonly lifecycle: RenderLifecycle,
  ) {
    super();
  }

  protected readonly handlers: QueueHandlers<'stills'> = {
    'still.render': async (data) => {
      if (!data.renderId) return this.draw(data);
      const renderId = data.renderId;
      let result: JobResults['still.render'];
      try {
        result = await this.draw(data);
      } catch (err) {
        // A fault of ours (storage, the engine): the render fails with its credit released, and the job fails.
        const failed = await this.lifecycle.fail(renderId, renderError(err, 'rendering'));
        await this.dropUnowned(failed.outputKey, data.key);
        throw err;
      }
      const started = performance.now();
      const settled = result.ok ? await this.lifecycle.complete(renderId, result) : await this.lifecycle.fail(renderId, { ...result.error, stage: 'rendering' });
      await this.dropUnowned(settled.outputKey, data.key);
      if (result.ok && result.timings) result.timings.settle = Math.round(performance.now() - started);
      return result;
    },
  };

  /**
   * The file at the job's key when its render did not end with it: settled before (its API request
   * timed out), or failed now while an earlier run of this job (its worker killed) had stored it.
   */
  private async dropUnowned(outputKey: string | null | undefined, key: string): Promise<void> {
    if (outputKey !== key) await this.storage.delete(key).catch(() => undefined);
  }

  /** A still job whose worker died: its render fails WORKER_LOST (once, whichever of this and the waiting API settles it). */
  @OnWorkerEvent('failed')
  failLost(job: Job | undefined, err: Error): void {
    const { renderId, key } = (job?.data ?? {}) as { renderId?: string; key?: string };
    if (!renderId || !isWorkerLost(err)) return;
    this.log.warn(`still ${renderId}: its worker stopped while drawing it; it is not drawn again`);
    // A file the dead worker stored before it died belongs to no render: it goes too.
    void this.lifecycle.lost(renderId, STILL_WORKER_LOST, 'rendering')
      .then((settled) => (key ? this.dropUnowned(settled.outputKey, key) : undefined))
      .catch(() => undefined);
  }

  private async draw(data: JobPayloads['still.render']): Promise<JobResults['still.render']> {
    const started = performance.now();
    try {
      const out = await this.engine.render(data.edit as unknown as EditSpec, { scale: data.scale, watermark: data.watermark, aspectRules: data.aspectRules ?? [] });
      const storeStarted = performance.now();
      const stored = await this.storage.put(data.key, out.bytes, { contentType: out.contentType });
      return {
        ok: true,
        key: stored.key,
        url: this.storage.url(stored.key),
        format: out.format,
        contentType: out.contentType,
        width: out.width,
        height: out.height,
        sizeBytes: stored.sizeBytes,
        renderMs: Math.round(performance.now() - started),
        timings: { draw: Math.round(storeStarted - started), store: Math.round(performance.now() - storeStarted) },
      };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const { stage: _stage, ...error } = renderError(err, 'rendering');
      return { ok: false, error };
    }
  }
}
