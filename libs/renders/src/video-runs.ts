import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ApiError, metrics } from '#libs/core';
import type { Plan } from '#libs/workspaces';
import { assertTiming, outputFps, type EditSpec } from '#libs/edit-spec';
import { VIDEO_ATTEMPTS, VIDEO_LOST_WORKERS, type JobPayloads, type JobResults, type VideoChunkResult } from '#libs/queue';
import { outputKey } from '#libs/storage';
import { planChunks, VideoRenderCancelled, type VideoChunk, type VideoOutput } from '#libs/video';
import { TERMINAL_STATUSES, type Render, type RenderStatus } from './entities.js';
import { runFailure } from './errors.js';
import type { RenderLifecycle } from './lifecycle.js';
import type { Clock, JobQueue, Scratch, SlotLeases, Storage, VideoEngine, WorkspacePlans } from './ports.js';

/** How often a running render renews its slot lease (the lease lasts 60 s: a dead worker's lapses and frees the slot). */
const RENEW_LEASE_MS = 20_000;
/** How long a render over its workspace's concurrency waits before it asks again. */
export const WAIT_FOR_SLOT_MS = 1_000;
/** How often a running render checks whether it should stop (cancel requested, settled elsewhere). */
const CANCEL_POLL_MS = 500;
/** Progress is written at most this often per render (its last figure always). */
const PROGRESS_EVERY_MS = 500;

/** Storage folder of a chunked render's chunk files (the token keeps it unguessable under /files). */
export const chunkFolder = (renderId: string, token: string) => `work/chunks/${renderId}-${token}/`;

/** Frames of a render's output window, when its timing is known without probing (else undefined). */
export function outputFrames(edit: EditSpec): number | undefined {
  try {
    return Math.max(1, Math.round(assertTiming(edit).window.length * outputFps(edit.output)));
  } catch {
    return undefined;
  }
}

/** `alias://` captions turned into caption files before a render is drawn (libs/captions); null when the edit has none. */
export interface CaptionResolver {
  resolveAny(render: Pick<Render, 'id' | 'workspaceId' | 'mode'>, plan: Plan, edit: EditSpec, signal: AbortSignal): Promise<EditSpec | null>;
}

/** What the video runs are wired to. */
export interface VideoRunsDeps {
  lifecycle: RenderLifecycle;
  plans: WorkspacePlans;
  slots: SlotLeases;
  queue: JobQueue;
  storage: Storage;
  scratch: Scratch;
  engine: () => Promise<VideoEngine>;
  captions: CaptionResolver;
  clock: Clock;
  /** Progress figures on the workspace's live feed (libs/events); a lost figure is no error. */
  feed: { progress(workspaceId: string, renderId: string, mode: Render['mode'], progress: number): Promise<unknown> };
  /** VIDEO_CHUNK_FRAMES and VIDEO_CHUNK_MIN_FRAMES: an mp4 longer than `minFrames` is drawn in chunks of `frames`. */
  chunks: { frames: number; minFrames: number };
  /** Names this worker in a chunk's result. */
  worker: string;
}

/** One run of a video job, as its queue hands it over. */
export interface VideoRun<N extends 'video.render' | 'video.chunk' | 'video.combine'> {
  data: JobPayloads[N];
  /** This run's number, counting runs whose worker died (the render record shows it). */
  attempt: number;
  /** The job's failure on its run before, if any. */
  previousFailure?: string | undefined;
}

/** A run that found the workspace's slots all taken: the queue hands the job over again after `waitMs`. */
export interface WaitForSlot {
  wait: number;
}

/**
 * A video render's whole life on the workers (§3, decisions.md "Render record"): queued → fetching
 * (downloads and probes, inside the engine) → rendering (progress 0..1 on the record) → saving
 * (output, poster, thumbnail stored) → done; failures → failed with {code, message, stage};
 * `cancelRequested` stops it (the engine's cancel signal) → cancelled. Each end settles credits and
 * writes its event once (RenderLifecycle). A run that dies with its worker is run again by another
 * up to VIDEO_LOST_WORKERS runs, then the render fails WORKER_LOST (`abandoned`).
 *
 * Over the workspace's concurrent renders (§8) a render waits without using up a run. An mp4 of more
 * than `chunks.minFrames` frames is handed to a flow of chunk jobs (`chunks.frames` each, taken by
 * any idle worker) under a combine job the queue starts once every chunk is done; the render keeps
 * its slot until the combine settles it.
 *
 * The rules only: the database, Redis, BullMQ, storage and Remotion are the ports of ports.ts.
 */
export class VideoRuns {
  private readonly log = new Logger('video');

  constructor(private readonly deps: VideoRunsDeps) {}

  /** A whole render, or the start of a chunked one. */
  async render({ data, attempt, previousFailure }: VideoRun<'video.render'>): Promise<JobResults['video.render'] | WaitForSlot> {
    const { lifecycle, slots } = this.deps;
    const row = await lifecycle.get(data.renderId);
    if (!row || TERMINAL_STATUSES.includes(row.status)) return { status: row?.status ?? 'gone' };
    if (row.cancelRequested) return { status: (await lifecycle.settleCancelled(row.id, row.status)).status };

    const plan = await this.deps.plans.planOf(row.workspaceId);
    // Over the plan's concurrency: wait without using up a run; other workspaces' renders go on.
    if (!(await slots.take(row.workspaceId, row.id, plan.concurrentRenders))) return { wait: WAIT_FOR_SLOT_MS };

    const frames = row.format === 'mp4' ? outputFrames(row.edit as unknown as EditSpec) : undefined;
    const { frames: perChunk, minFrames } = this.deps.chunks;
    if (frames !== undefined && minFrames > 0 && frames > minFrames) return this.startChunks(row, plan, frames, perChunk, attempt, previousFailure);

    const work = this.working(row);
    let stage: RenderStatus = 'fetching';
    const files: string[] = [];
    try {
      if (!(await lifecycle.start(row.id, attempt))) return { status: 'settled' };
      const edit = await this.withCaptions(row, plan, work.signal);
      const out = await (await this.deps.engine()).render(edit, {
        renderId: row.id,
        signal: work.signal,
        onProgress: this.throttled((p) => {
          stage = 'rendering';
          this.writeProgress(row, p);
        }),
      });
      files.push(...outputFiles(out));
      if (out.frames > 0) metrics().frameSeconds.observe({ engine: 'video' }, out.renderMs / 1000 / out.frames);
      if (work.signal.aborted) throw new VideoRenderCancelled();
      stage = 'saving';
      return { status: (await this.saveAndSettle(row, out)).status };
    } catch (err) {
      const settled = await this.settleError(row, err, stage, work.signal.aborted, attempt, previousFailure);
      if (settled !== false) return { status: settled };
      // Another run (the queue's retry) starts again from queued.
      await lifecycle.requeue(row.id, attempt);
      throw err;
    } finally {
      work.stop();
      await slots.release(row.workspaceId, row.id);
      await this.deps.scratch.remove(files);
    }
  }

  /** Captions resolved (they are the chunks' shared input), then the flow of chunks under their combine. */
  private async startChunks(row: Render, plan: Plan, frames: number, perChunk: number, attempt: number, previousFailure?: string): Promise<JobResults['video.render']> {
    const { lifecycle, slots, queue } = this.deps;
    if (!(await lifecycle.start(row.id, attempt))) {
      await slots.release(row.workspaceId, row.id);
      return { status: 'settled' };
    }
    const work = this.working(row, false);
    try {
      await this.withCaptions(row, plan, work.signal);
    } catch (err) {
      await slots.release(row.workspaceId, row.id);
      const settled = await this.settleError(row, err, 'fetching', work.signal.aborted, attempt, previousFailure);
      if (settled !== false) return { status: settled };
      await lifecycle.requeue(row.id, attempt);
      throw err;
    } finally {
      work.stop();
    }
    const token = await queue.chunkToken(row.id);
    await queue.startChunks(row.id, token, planChunks(frames, perChunk).map(([from, to], index) => ({ index, from, to, totalFrames: frames })));
    return { status: 'chunked' };
  }

  /**
   * One frame range of a chunked render: drawn by the engine's renderChunk (h264 as MPEG-TS and AAC,
   * cut for gapless joining) and stored under the render's chunk folder. Progress is the frames of
   * all chunks over the whole. Cancel and errors end the render as in a whole render.
   */
  async chunk({ data, attempt, previousFailure }: VideoRun<'video.chunk'>): Promise<VideoChunkResult> {
    const { lifecycle, storage, scratch, queue } = this.deps;
    const row = await lifecycle.get(data.renderId);
    if (!row || TERMINAL_STATUSES.includes(row.status)) return { ok: false, status: row?.status ?? 'gone' };
    if (row.cancelRequested) return { ok: false, status: (await lifecycle.settleCancelled(row.id, row.status)).status };
    const work = this.working(row);
    const dir = await scratch.folder('chunk-');
    const frames = data.to - data.from + 1;
    try {
      const chunk = await (await this.deps.engine()).renderChunk(row.edit as unknown as EditSpec, {
        frameRange: [data.from, data.to],
        outputDir: dir,
        renderId: row.id,
        signal: work.signal,
        onProgress: this.throttled((p) => {
          void queue.chunkFrames(row.id, data.index, Math.round(p * frames))
            .then((done) => this.writeProgress(row, (0.9 * done) / data.totalFrames))
            .catch(() => undefined);
        }),
      });
      if (work.signal.aborted) throw new VideoRenderCancelled();
      const folder = chunkFolder(row.id, data.token);
      const videoKey = `${folder}${data.index}.${chunk.codec === 'h264' ? 'ts' : 'mp4'}`;
      await storage.putFile(videoKey, chunk.videoFile);
      const result: VideoChunkResult = { ok: true, index: data.index, frameRange: chunk.frameRange, videoKey, fps: chunk.fps, totalFrames: chunk.totalFrames, codec: chunk.codec, worker: this.deps.worker };
      if (chunk.audioFile) {
        result.audioKey = `${folder}${data.index}.aac`;
        await storage.putFile(result.audioKey, chunk.audioFile);
      }
      return result;
    } catch (err) {
      const settled = await this.settleError(row, err, 'rendering', work.signal.aborted, attempt, previousFailure);
      if (settled !== false) return { ok: false, status: settled };
      throw err;
    } finally {
      work.stop();
      await scratch.remove([dir]);
    }
  }

  /**
   * Joins a chunked render once all its chunks are done (`results`, the chunk jobs' answers):
   * downloads them, `combine`s them (no re-encoding for h264), stores output, poster and thumbnail,
   * settles the render, and removes the chunk files. A render already settled (a chunk failed or it
   * was cancelled) is only cleaned up.
   */
  async combine({ data, attempt, previousFailure }: VideoRun<'video.combine'>, results: () => Promise<VideoChunkResult[]>): Promise<JobResults['video.combine']> {
    const { lifecycle, storage, scratch } = this.deps;
    const row = await lifecycle.get(data.renderId);
    if (!row || TERMINAL_STATUSES.includes(row.status) || row.cancelRequested) {
      if (row && !TERMINAL_STATUSES.includes(row.status)) await lifecycle.settleCancelled(row.id, row.status);
      await this.finish(data.renderId, data.token, row);
      return { status: row?.status ?? 'gone' };
    }
    const stored = await results();
    const work = this.working(row);
    const dir = await scratch.folder('combine-');
    const files: string[] = [];
    try {
      const chunks: VideoChunk[] = [];
      for (const r of stored) {
        if (!r.ok) throw new ApiError('INTERNAL_ERROR', `A chunk of the render did not finish (${r.status})`);
        const chunk: VideoChunk = { frameRange: r.frameRange, videoFile: join(dir, r.videoKey.split('/').pop()!), fps: r.fps, totalFrames: r.totalFrames, codec: r.codec };
        await storage.getFile(r.videoKey, chunk.videoFile);
        if (r.audioKey) {
          chunk.audioFile = join(dir, r.audioKey.split('/').pop()!);
          await storage.getFile(r.audioKey, chunk.audioFile);
        }
        chunks.push(chunk);
      }
      const out = await (await this.deps.engine()).combine(row.edit as unknown as EditSpec, chunks, {
        outputDir: join(dir, 'out'),
        signal: work.signal,
        onProgress: (p) => this.writeProgress(row, 0.9 + 0.1 * p),
      });
      files.push(...outputFiles(out));
      if (out.frames > 0) metrics().frameSeconds.observe({ engine: 'video' }, out.renderMs / 1000 / out.frames);
      if (work.signal.aborted) throw new VideoRenderCancelled();
      const done = await this.saveAndSettle(row, out);
      await this.finish(data.renderId, data.token, row);
      return { status: done.status };
    } catch (err) {
      const settled = await this.settleError(row, err, 'saving', work.signal.aborted, attempt, previousFailure);
      if (settled === false) throw err;
      await this.finish(data.renderId, data.token, row);
      return { status: settled };
    } finally {
      work.stop();
      await scratch.remove([dir, ...files]);
    }
  }

  /**
   * A run's worker died (the queue found its job stalled): a whole render goes back to `queued`
   * until another worker takes it. `runsEnded` counts the runs so far, the dead one included.
   */
  async stalled(renderId: string, runsEnded: number): Promise<void> {
    await this.deps.lifecycle.requeue(renderId, runsEnded);
  }

  /**
   * The end of a render whose job gave up: stalled past its runs (workers killed mid-render) →
   * WORKER_LOST; a chunked render whose chunk or join gave up → failed once. Either way its chunk
   * files go and its credits are released.
   */
  async abandoned(job: 'video.render' | 'video.chunk' | 'video.combine', data: { renderId: string; token?: string }, workerLost: boolean, message: string): Promise<void> {
    const { lifecycle } = this.deps;
    if (workerLost) {
      await lifecycle.lost(data.renderId, `The render's worker stopped ${VIDEO_LOST_WORKERS} times; it is not given another`, 'rendering');
    } else if (job === 'video.combine') {
      await lifecycle.fail(data.renderId, { code: 'INTERNAL_ERROR', message: `The render could not be finished: ${message}`, stage: 'rendering' });
    } else {
      return;
    }
    if (data.token) await this.removeChunks(data.renderId, data.token);
  }

  /** A settled chunked render's leftovers: its chunk files and progress, its token, its slot. */
  private async finish(renderId: string, token: string, row: Render | null): Promise<void> {
    await this.removeChunks(renderId, token);
    if (row) await this.deps.slots.release(row.workspaceId, row.id);
  }

  private async removeChunks(renderId: string, token: string): Promise<void> {
    await this.deps.storage.deletePrefix(chunkFolder(renderId, token)).catch(() => undefined);
    await this.deps.queue.forgetChunks(renderId).catch(() => undefined);
  }

  /**
   * While a run works: its slot lease renewed (unless `lease` is false), and a signal that aborts
   * when its cancel is requested or it was settled elsewhere.
   */
  private working(row: Render, lease = true): { signal: AbortSignal; stop: () => void } {
    const { clock, slots, lifecycle } = this.deps;
    const abort = new AbortController();
    const renew = () => void slots.renew(row.workspaceId, row.id).catch(() => undefined);
    if (lease) renew();
    const stopRenew = lease ? clock.every(RENEW_LEASE_MS, renew) : () => undefined;
    const stopWatch = clock.every(CANCEL_POLL_MS, () => {
      void lifecycle.shouldStop(row.id).then((stop) => stop && abort.abort(), () => undefined);
    });
    return {
      signal: abort.signal,
      stop: () => {
        stopRenew();
        stopWatch();
      },
    };
  }

  /** Calls `write` at most every PROGRESS_EVERY_MS, and always with the last figure (1). */
  private throttled(write: (progress: number) => void): (progress: number) => void {
    let last = Number.NEGATIVE_INFINITY;
    return (progress) => {
      const now = this.deps.clock.now();
      if (now - last < PROGRESS_EVERY_MS && progress < 1) return;
      last = now;
      write(progress);
    };
  }

  /**
   * Progress 0..1 on the record (rising only), status `rendering`, and on the workspace's live feed
   * when it moved; a failed write is only a lost figure.
   */
  private writeProgress(row: Pick<Render, 'id' | 'workspaceId' | 'mode'>, progress: number): void {
    void this.deps.lifecycle.progress(row.id, progress)
      .then((moved) => (moved ? this.deps.feed.progress(row.workspaceId, row.id, row.mode, progress) : false))
      .catch(() => undefined);
  }

  /** `saving`: the output, poster and thumbnail stored, then `done` (credits captured, event written). */
  private async saveAndSettle(row: Render, out: VideoOutput): Promise<Render> {
    const { lifecycle, storage } = this.deps;
    await lifecycle.saving(row.id);
    const key = outputKey(row.id, out.format);
    await storage.putFile(key, out.file, out.contentType);
    const posterKey = outputKey(row.id, 'jpg');
    await storage.putFile(posterKey, out.posterFile);
    let thumbnailKey: string | undefined;
    if (out.thumbnailFile) {
      thumbnailKey = outputKey(row.id, 'jpg');
      await storage.putFile(thumbnailKey, out.thumbnailFile);
    }
    if (await lifecycle.shouldStop(row.id)) throw new VideoRenderCancelled();
    return lifecycle.complete(row.id, {
      key, width: out.width, height: out.height, sizeBytes: out.fileSizeBytes, duration: out.durationSec, fps: out.fps, posterKey,
      ...(thumbnailKey ? { thumbnailKey } : {}),
    });
  }

  /**
   * The edit with its `alias://` captions turned into caption files (the workspace's speech
   * provider, cache first), stored on the record so chunks and later runs read the same edit.
   */
  private async withCaptions(row: Render, plan: Plan, signal: AbortSignal): Promise<EditSpec> {
    const edit = row.edit as unknown as EditSpec;
    const resolved = await this.deps.captions.resolveAny(row, plan, edit, signal);
    if (!resolved) return edit;
    await this.deps.lifecycle.resolvedEdit(row.id, resolved as unknown as Record<string, unknown>);
    return resolved;
  }

  /**
   * How a run's error ends the render: cancelled, failed (runFailure's rules: a refusal the edit
   * caused at once, the same fault of ours on two runs as RENDER_FAILED, any fault after
   * VIDEO_ATTEMPTS runs), or (returning false) run again. `previous`: the job's failure on its run before.
   */
  private async settleError(row: Render, err: unknown, stage: RenderStatus, cancelled: boolean, attempt: number, previous?: string): Promise<string | false> {
    const { lifecycle } = this.deps;
    if (err instanceof VideoRenderCancelled || cancelled) return (await lifecycle.settleCancelled(row.id, stage)).status;
    const failure = runFailure(err, stage, attempt, VIDEO_ATTEMPTS, previous);
    if (!failure) return false;
    if (!(err instanceof ApiError)) this.log.error(`render ${row.id} failed for good on run ${attempt} (${failure.code}): ${(err as Error).message}`);
    return (await lifecycle.fail(row.id, failure)).status;
  }
}

function outputFiles(out: VideoOutput): string[] {
  return [out.file, out.posterFile, ...(out.thumbnailFile ? [out.thumbnailFile] : [])];
}
