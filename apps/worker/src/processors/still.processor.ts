import { ApiError } from '#libs/core';
import type { EditSpec } from '#libs/edit-spec';
import type { JobPayloads, JobResults } from '#libs/queue';
import { errorInfo, type RenderSettler } from '#libs/renders';
import type { StillEngine } from '#libs/still';
import type { StorageDriver } from '#libs/storage';
import type { JobProcessor } from './processor.js';

/**
 * Draws a still and stores it. A refusal the caller caused (an unknown font, an unreachable image, an
 * unsupported asset) is returned as `{ ok: false, error }` so the API answers it with its code; only
 * a fault of ours fails the job.
 */
export class StillRenderProcessor implements JobProcessor<'still.render'> {
  readonly job = 'still.render' as const;

  constructor(
    private readonly engine: StillEngine,
    private readonly storage: StorageDriver,
    /** Settles the job's render (done or failed, credits, event), so nothing depends on the waiting API process. */
    private readonly settler?: RenderSettler,
  ) {}

  async process(data: JobPayloads['still.render']): Promise<JobResults['still.render']> {
    const result = await this.draw(data);
    if (data.renderId && this.settler) {
      const started = performance.now();
      if (result.ok) await this.settler.complete(data.renderId, result);
      else await this.settler.fail(data.renderId, errorInfo(result.error));
      if (result.ok && result.timings) result.timings.settle = Math.round(performance.now() - started);
    }
    return result;
  }

  private async draw(data: JobPayloads['still.render']): Promise<JobResults['still.render']> {
    const started = performance.now();
    try {
      const drawStarted = performance.now();
      const out = await this.engine.render(data.edit as unknown as EditSpec, { scale: data.scale, watermark: data.watermark, aspectRules: data.aspectRules ?? [] });
      const storeStarted = performance.now();
      const stored = await this.storage.put(data.key, out.bytes, { contentType: out.contentType });
      const timings = { draw: Math.round(storeStarted - drawStarted), store: Math.round(performance.now() - storeStarted) };
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
        timings,
      };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const error: { code: string; message: string; errors?: Record<string, string[]> } = { code: err.code, message: err.message };
      if (err.extras.errors) error.errors = err.extras.errors;
      return { ok: false, error };
    }
  }
}
