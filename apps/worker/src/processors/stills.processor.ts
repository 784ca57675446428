import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { ApiError } from '#libs/core';
import type { EditSpec } from '#libs/edit-spec';
import type { JobPayloads, JobResults } from '#libs/queue';
import { errorInfo, RenderSettler } from '#libs/renders';
import { StillEngine } from '#libs/still';
import type { StorageDriver } from '#libs/storage';
import { STORAGE } from '../tokens.js';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/**
 * The `stills` queue: draws a still and stores it, then settles its render (done or failed, credits,
 * event), so nothing depends on the API process that waits for it. A refusal the caller caused (an
 * unknown font, an unreachable image, an unsupported asset) is returned as `{ ok: false, error }` so
 * the API answers it with its code; only a fault of ours fails the job.
 */
@Processor('stills')
export class StillsProcessor extends QueueProcessor<'stills'> {
  readonly queue = 'stills';

  constructor(
    private readonly engine: StillEngine,
    @Inject(STORAGE) private readonly storage: StorageDriver,
    private readonly settler: RenderSettler,
  ) {
    super();
  }

  protected readonly handlers: QueueHandlers<'stills'> = {
    'still.render': async (data) => {
      const result = await this.draw(data);
      if (data.renderId) {
        const started = performance.now();
        if (result.ok) await this.settler.complete(data.renderId, result);
        else await this.settler.fail(data.renderId, errorInfo(result.error));
        if (result.ok && result.timings) result.timings.settle = Math.round(performance.now() - started);
      }
      return result;
    },
  };

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
      return { ok: false, error: { code: err.code, message: err.message, ...(err.extras.errors ? { errors: err.extras.errors } : {}) } };
    }
  }
}
