import { ApiError, metrics } from '#libs/core';
import type { EditSpec } from '#libs/edit-spec';
import type { JobPayloads, JobResults } from '#libs/queue';
import { renderError, STILL_WORKER_LOST } from './errors.js';
import type { RenderLifecycle } from './lifecycle.js';
import type { Clock, StillEngine, Storage } from './ports.js';

/** Milliseconds to a tenth, for the Server-Timing header (its steps take 0.2–3 ms beside the draw). */
const tenths = (ms: number) => Math.round(ms * 10) / 10;

/**
 * A still on the workers: drawn, stored, then its render settled (done or failed, credits, event), so
 * nothing depends on the API process that waits for it: the API reads the settled record. A refusal
 * the caller caused (an unknown font, an unreachable image, an unsupported asset) is
 * `{ ok: false, error }` (renderError's mapping); a fault of ours fails the render and the job.
 * A still whose worker died is not drawn again (it may be what killed it): `lost` fails it
 * WORKER_LOST, credit released, one `render.failed`.
 */
export class StillRuns {
  constructor(private readonly deps: { engine: StillEngine; storage: Storage; lifecycle: RenderLifecycle; clock: Pick<Clock, 'now'> }) {}

  async run(data: JobPayloads['still.render']): Promise<JobResults['still.render']> {
    if (!data.renderId) return this.draw(data);
    const { lifecycle } = this.deps;
    const renderId = data.renderId;
    let result: JobResults['still.render'];
    try {
      result = await this.draw(data);
    } catch (err) {
      // A fault of ours (storage, the engine): the render fails with its credit released, and the job fails.
      const failed = await lifecycle.fail(renderId, renderError(err, 'rendering'));
      await this.dropUnowned(failed.outputKey, data.key);
      throw err;
    }
    const started = this.deps.clock.now();
    const settled = result.ok ? await lifecycle.complete(renderId, result) : await lifecycle.fail(renderId, { ...result.error, stage: 'rendering' });
    await this.dropUnowned(settled.outputKey, data.key);
    if (result.ok && result.timings) result.timings.settle = tenths(this.deps.clock.now() - started);
    return result;
  }

  /** A still job whose worker died: its render fails WORKER_LOST (once, whichever of this and the waiting API settles it). */
  async lost(renderId: string, key: string | undefined): Promise<void> {
    const settled = await this.deps.lifecycle.lost(renderId, STILL_WORKER_LOST, 'rendering');
    // A file the dead worker stored before it died belongs to no render: it goes too.
    if (key) await this.dropUnowned(settled.outputKey, key);
  }

  /**
   * The file at the job's key when its render did not end with it: settled before (its API request
   * timed out), or failed now while an earlier run of this job (its worker killed) had stored it.
   */
  private async dropUnowned(outputKey: string | null | undefined, key: string): Promise<void> {
    if (outputKey !== key) await this.deps.storage.delete(key).catch(() => undefined);
  }

  private async draw(data: JobPayloads['still.render']): Promise<JobResults['still.render']> {
    const { clock, engine, storage } = this.deps;
    const started = clock.now();
    try {
      const out = await engine.render(data.edit as unknown as EditSpec, { scale: data.scale, watermark: data.watermark, aspectRules: data.aspectRules ?? [] });
      const storeStarted = clock.now();
      metrics().frameSeconds.observe({ engine: 'still' }, (storeStarted - started) / 1000);
      const stored = await storage.putBytes(data.key, out.bytes, out.contentType);
      return {
        ok: true,
        key: stored.key,
        url: storage.url(stored.key),
        format: out.format,
        contentType: out.contentType,
        width: out.width,
        height: out.height,
        sizeBytes: stored.sizeBytes,
        renderMs: Math.round(clock.now() - started),
        timings: { draw: tenths(storeStarted - started), store: tenths(clock.now() - storeStarted) },
      };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const { stage: _stage, ...error } = renderError(err, 'rendering');
      return { ok: false, error };
    }
  }
}
