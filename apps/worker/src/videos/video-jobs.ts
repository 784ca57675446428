import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MikroORM } from '@mikro-orm/core';
import { Logger } from '@nestjs/common';
import { DelayedError, type FlowProducer } from 'bullmq';
import type { Redis } from 'ioredis';
import { hasAliasCaptions, type AutoCaptions } from '#libs/captions';
import { ApiError, makeOwnScratch, type AppConfig } from '#libs/core';
import { assertTiming, outputFps, type EditSpec } from '#libs/edit-spec';
import { VIDEO_ATTEMPTS, type JobPayloads, type JobQueues, type JobResults, type TypedJob, type VideoChunkResult } from '#libs/queue';
import type { RedisKeys } from '#libs/redis';
import { runFailure, TERMINAL_STATUSES, type Render, type RenderLifecycle, type RenderStatus } from '#libs/renders';
import type { RenderFeed } from '#libs/events';
import { outputKey, type StorageDriver } from '#libs/storage';
import { planChunks, VideoRenderCancelled, type VideoChunk, type VideoEngine, type VideoOutput } from '#libs/video';
import type { Plan, WorkspacePlans } from '#libs/workspaces';

/** A slot lease: a running render renews it; a dead worker's lapses and frees the slot. */
const LEASE_MS = 60_000;
/** How long a render over its workspace's concurrency waits before it asks again. */
const WAIT_FOR_SLOT_MS = 1_000;

/**
 * Takes a slot of the workspace's concurrent renders (§8: over the plan's allowance a render waits,
 * never fails): drops lapsed leases, then adds this render when fewer than `limit` hold one.
 */
const TAKE_SLOT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ${LEASE_MS * 2})
  return 1
end
return 0`;

export interface VideoEngineRef {
  /** The running engine, or undefined while it starts (jobs wait for it). */
  current(): Promise<VideoEngine>;
}

/** What every video job needs. */
export interface VideoJobDeps {
  orm: MikroORM;
  engine: VideoEngineRef;
  storage: StorageDriver;
  lifecycle: RenderLifecycle;
  redis: Redis;
  keys: RedisKeys;
  queues: JobQueues;
  flows: FlowProducer;
  config: Pick<AppConfig, 'dataDir'> & { video: Pick<AppConfig['video'], 'chunkFrames' | 'chunkMinFrames'> };
  /** Transcribes `alias://` captions before a render is drawn (libs/captions). */
  autoCaptions: AutoCaptions;
  /** The workspace's plan: its concurrent renders (libs/workspaces). */
  plans: WorkspacePlans;
  /** The live feed of the workspace's renders: progress figures (libs/events). */
  feed: RenderFeed;
}

/** How the videos processor runs a job: its payload, the BullMQ job and lock token, and the run number. */
export interface VideoRun<N extends 'video.render' | 'video.chunk' | 'video.combine'> {
  data: JobPayloads[N];
  job: TypedJob<N>;
  token: string | undefined;
  /** This run's number, counting runs whose worker died (the render record shows it). */
  attempt: number;
}

/**
 * The video jobs' scratch folders: `DATA_DIR/video-jobs/<host>-<pid>-<token>/` (libs/core scratch.ts: a
 * killed worker's are swept). Under the worker's own data folder, not the shared temporary folder,
 * where another user could make the parent first and swap what is in it.
 */
export const videoJobScratch = (config: Pick<AppConfig, 'dataDir'>): string => join(config.dataDir, 'video-jobs');

/** Storage folder of a chunked render's chunk files (the token keeps it unguessable under /files). */
export const chunkFolder = (renderId: string, token: string) => `work/chunks/${renderId}-${token}/`;

/** Removes a chunked render's chunk files and progress (after it is settled, however). */
export async function cleanupChunks(deps: Pick<VideoJobDeps, 'storage' | 'redis' | 'keys'>, renderId: string, token: string): Promise<void> {
  await deps.storage.deletePrefix(chunkFolder(renderId, token)).catch(() => undefined);
  await deps.redis.del(deps.keys.videoChunkProgress(renderId)).catch(() => undefined);
}

/**
 * The pieces the video jobs share: the workspace's slot lease, the cancel watch, progress, and the
 * saving stage (output, poster, thumbnail stored; settled done).
 */
class VideoJobBase {
  protected readonly log = new Logger('video');

  constructor(protected readonly deps: VideoJobDeps) {}

  protected lease = () => String(Date.now() + LEASE_MS);

  /** Renews the render's slot lease while `work` runs (a dead worker's lapses). */
  protected keepLease(row: Render): () => void {
    const slots = this.deps.keys.videoSlots(row.workspaceId);
    void this.deps.redis.zadd(slots, this.lease(), row.id).catch(() => undefined);
    const renew = setInterval(() => void this.deps.redis.zadd(slots, this.lease(), row.id).catch(() => undefined), LEASE_MS / 3);
    return () => clearInterval(renew);
  }

  protected async releaseSlot(row: Render): Promise<void> {
    await this.deps.redis.zrem(this.deps.keys.videoSlots(row.workspaceId), row.id).catch(() => undefined);
  }

  /** Aborts when the render's cancel is requested or it was settled elsewhere (checked twice a second). */
  protected watchCancel(id: string): { signal: AbortSignal; stop: () => void } {
    const abort = new AbortController();
    const watch = setInterval(() => {
      void this.deps.lifecycle.shouldStop(id).then((stop) => stop && abort.abort(), () => undefined);
    }, 500);
    return { signal: abort.signal, stop: () => clearInterval(watch) };
  }

  /**
   * Progress 0..1 on the record (rising only), status `rendering`, and on the workspace's live feed
   * when it moved (throttled per render); a failed write is only a lost figure.
   */
  protected writeProgress(row: Pick<Render, 'id' | 'workspaceId' | 'mode'>, progress: number): void {
    void this.deps.lifecycle.progress(row.id, progress)
      .then((moved) => (moved ? this.deps.feed.progress(row.workspaceId, row.id, row.mode, progress) : false))
      .catch(() => undefined);
  }

  /** `saving`: the output, poster and thumbnail stored, then `done` (credits captured, event written). */
  protected async saveAndSettle(row: Render, out: VideoOutput): Promise<Render> {
    await this.deps.lifecycle.saving(row.id);
    const key = outputKey(row.id, out.format);
    await this.deps.storage.put(key, createReadStream(out.file), { contentType: out.contentType });
    const posterKey = outputKey(row.id, 'jpg');
    await this.deps.storage.put(posterKey, createReadStream(out.posterFile));
    let thumbnailKey: string | undefined;
    if (out.thumbnailFile) {
      thumbnailKey = outputKey(row.id, 'jpg');
      await this.deps.storage.put(thumbnailKey, createReadStream(out.thumbnailFile));
    }
    if (await this.deps.lifecycle.shouldStop(row.id)) throw new VideoRenderCancelled();
    return this.deps.lifecycle.complete(row.id, {
      key, width: out.width, height: out.height, sizeBytes: out.fileSizeBytes, duration: out.durationSec, fps: out.fps, posterKey,
      ...(thumbnailKey ? { thumbnailKey } : {}),
    });
  }

  /**
   * The edit with its `alias://` captions turned into caption files (the workspace's speech
   * provider, cache first), stored on the record so chunks and later runs read the same edit.
   */
  protected async withCaptions(row: Render, plan: Plan, signal: AbortSignal): Promise<EditSpec> {
    const edit = row.edit as unknown as EditSpec;
    if (!hasAliasCaptions(edit)) return edit;
    const resolved = await this.deps.autoCaptions.resolve(row, plan, edit, signal);
    await this.deps.lifecycle.resolvedEdit(row.id, resolved as unknown as Record<string, unknown>);
    return resolved;
  }

  /**
   * How a job's error ends the render: cancelled, failed (runFailure's rules: a refusal the edit
   * caused at once, the same fault of ours on two runs as RENDER_FAILED, any fault after
   * VIDEO_ATTEMPTS runs), or (returning false) run again. `previous`: the job's failure on its run before.
   */
  protected async settleError(row: Render, err: unknown, stage: RenderStatus, cancelled: boolean, attempt: number, previous?: string): Promise<string | false> {
    const { lifecycle } = this.deps;
    if (err instanceof VideoRenderCancelled || cancelled) return (await lifecycle.settleCancelled(row.id, stage)).status;
    const failure = runFailure(err, stage, attempt, VIDEO_ATTEMPTS, previous);
    if (!failure) return false;
    if (!(err instanceof ApiError)) this.log.error(`render ${row.id} failed for good on run ${attempt} (${failure.code}): ${(err as Error).message}`);
    return (await lifecycle.fail(row.id, failure)).status;
  }
}

/** Frames of a render's output window, when its timing is known without probing (else undefined). */
export function outputFrames(edit: EditSpec): number | undefined {
  try {
    return Math.max(1, Math.round(assertTiming(edit).window.length * outputFps(edit.output)));
  } catch {
    return undefined;
  }
}

/**
 * One video render through its states (§3, decisions.md "Render record"): queued → fetching
 * (downloads and probes, inside the engine) → rendering (progress 0..1 on the record) → saving
 * (output, poster, thumbnail stored) → done; failures → failed with {code, message, stage};
 * `cancelRequested` stops it (Remotion's cancel signal) → cancelled. Each end settles credits and
 * writes its event once. A job that dies with its worker is run again by another (BullMQ stalled
 * jobs) up to VIDEO_ATTEMPTS runs, then the render fails WORKER_LOST (see WorkerModule).
 *
 * An mp4 of more than VIDEO_CHUNK_MIN_FRAMES frames is not rendered here: this job hands it to a
 * flow of `video.chunk` jobs (VIDEO_CHUNK_FRAMES each, taken by any idle worker) under a
 * `video.combine` job that BullMQ starts once every chunk is done. The render keeps its workspace
 * slot until the combine job settles it.
 */
export class VideoRenderJob extends VideoJobBase {
  async run({ data, job, token, attempt }: VideoRun<'video.render'>): Promise<JobResults['video.render']> {
    const { redis, keys, lifecycle } = this.deps;
    const row = await lifecycle.get(data.renderId);
    if (!row || TERMINAL_STATUSES.includes(row.status)) return { status: row?.status ?? 'gone' };
    if (row.cancelRequested) return { status: (await lifecycle.settleCancelled(row.id, row.status)).status };

    const plan = await this.deps.plans.planOf(row.workspaceId);
    const slots = keys.videoSlots(row.workspaceId);
    const took = await redis.eval(TAKE_SLOT, 1, slots, String(Date.now()), this.lease(), row.id, String(plan.concurrentRenders));
    if (took !== 1) {
      // Over the plan's concurrency: wait without using up an attempt; other workspaces' renders go on.
      if (token === undefined) throw new Error('video jobs need their lock token to wait for a slot');
      await job.moveToDelayed(Date.now() + WAIT_FOR_SLOT_MS, token);
      throw new DelayedError();
    }
    const frames = row.format === 'mp4' ? outputFrames(row.edit as unknown as EditSpec) : undefined;
    const { chunkFrames, chunkMinFrames } = this.deps.config.video;
    if (frames !== undefined && chunkMinFrames > 0 && frames > chunkMinFrames) {
      if (!(await lifecycle.start(row.id, attempt))) {
        await this.releaseSlot(row);
        return { status: 'settled' };
      }
      const cancel = this.watchCancel(row.id);
      try {
        await this.withCaptions(row, plan, cancel.signal);
      } catch (err) {
        await this.releaseSlot(row);
        const settled = await this.settleError(row, err, 'fetching', cancel.signal.aborted, attempt, job.failedReason);
        if (settled !== false) return { status: settled };
        await lifecycle.requeue(row.id, attempt);
        throw err;
      } finally {
        cancel.stop();
      }
      await this.startChunks(row, frames, chunkFrames);
      return { status: 'chunked' };
    }

    const stopLease = this.keepLease(row);
    const cancel = this.watchCancel(row.id);
    let stage: RenderStatus = 'fetching';
    const files: string[] = [];
    try {
      if (!(await lifecycle.start(row.id, attempt))) return { status: 'settled' };
      const edit = await this.withCaptions(row, plan, cancel.signal);
      const engine = await this.deps.engine.current();
      let lastWrite = 0;
      const out = await engine.render(edit, {
        signal: cancel.signal,
        onProgress: (progress) => {
          const now = Date.now();
          if (now - lastWrite < 500 && progress < 1) return;
          lastWrite = now;
          stage = 'rendering';
          this.writeProgress(row, progress);
        },
      });
      files.push(out.file, out.posterFile, ...(out.thumbnailFile ? [out.thumbnailFile] : []));
      if (cancel.signal.aborted) throw new VideoRenderCancelled();
      stage = 'saving';
      return { status: (await this.saveAndSettle(row, out)).status };
    } catch (err) {
      const settled = await this.settleError(row, err, stage, cancel.signal.aborted, attempt, job.failedReason);
      if (settled !== false) return { status: settled };
      // Another run (BullMQ retries) starts again from queued.
      await lifecycle.requeue(row.id, attempt);
      throw err;
    } finally {
      stopLease();
      cancel.stop();
      await this.releaseSlot(row);
      await Promise.all(files.map((f) => rm(f, { force: true })));
    }
  }

  /**
   * The flow: `video.combine` waits for its `video.chunk` children. Job ids are derived from the
   * render, so a rerun of this job after a crash adds nothing twice (BullMQ keeps the first).
   */
  private async startChunks(row: Render, totalFrames: number, framesPerChunk: number): Promise<void> {
    const token = (await this.deps.redis.set(`${this.deps.keys.videoChunkProgress(row.id)}:token`, randomBytes(12).toString('hex'), 'EX', 7 * 86_400, 'NX', 'GET'))
      ?? (await this.deps.redis.get(`${this.deps.keys.videoChunkProgress(row.id)}:token`))!;
    const { queues, flows } = this.deps;
    await flows.add(queues.flowJob('video.combine', { renderId: row.id, token }, {
      jobId: `${row.id}-combine`,
      children: planChunks(totalFrames, framesPerChunk).map(([from, to], index) =>
        queues.flowJob('video.chunk', { renderId: row.id, token, index, from, to, totalFrames }, { jobId: `${row.id}-chunk-${index}` })),
    }));
  }
}

/**
 * One frame range of a chunked render: drawn with the engine's renderChunk (h264 as MPEG-TS and AAC,
 * cut for gapless joining) and stored under the render's chunk folder. Progress is the frames of all
 * chunks (a Redis hash) over the whole. Cancel and errors end the render as in a whole render.
 */
export class VideoChunkJob extends VideoJobBase {
  async run({ data, job, attempt }: VideoRun<'video.chunk'>): Promise<VideoChunkResult> {
    const { redis, keys, storage } = this.deps;
    const row = await this.deps.lifecycle.get(data.renderId);
    if (!row || TERMINAL_STATUSES.includes(row.status)) return { ok: false, status: row?.status ?? 'gone' };
    if (row.cancelRequested) return { ok: false, status: (await this.deps.lifecycle.settleCancelled(row.id, row.status)).status };
    const stopLease = this.keepLease(row);
    const cancel = this.watchCancel(row.id);
    const dir = await mkdtemp(join(await makeOwnScratch(videoJobScratch(this.deps.config)), 'chunk-'));
    const frames = data.to - data.from + 1;
    const progressKey = keys.videoChunkProgress(row.id);
    try {
      const engine = await this.deps.engine.current();
      let lastWrite = 0;
      const chunk = await engine.renderChunk(row.edit as unknown as EditSpec, {
        frameRange: [data.from, data.to],
        outputDir: dir,
        signal: cancel.signal,
        onProgress: (p) => {
          const now = Date.now();
          if (now - lastWrite < 500 && p < 1) return;
          lastWrite = now;
          void redis.hset(progressKey, String(data.index), String(Math.round(p * frames)))
            .then(() => redis.hvals(progressKey))
            .then((done) => this.writeProgress(row, (0.9 * done.reduce((sum, v) => sum + Number(v), 0)) / data.totalFrames))
            .catch(() => undefined);
        },
      });
      if (cancel.signal.aborted) throw new VideoRenderCancelled();
      await redis.pexpire(progressKey, 7 * 86_400_000).catch(() => undefined);
      const folder = chunkFolder(row.id, data.token);
      const videoKey = `${folder}${data.index}.${chunk.codec === 'h264' ? 'ts' : 'mp4'}`;
      await storage.put(videoKey, createReadStream(chunk.videoFile));
      const result: VideoChunkResult = { ok: true, index: data.index, frameRange: chunk.frameRange, videoKey, fps: chunk.fps, totalFrames: chunk.totalFrames, codec: chunk.codec, worker: `${hostname()}:${process.pid}` };
      if (chunk.audioFile) {
        result.audioKey = `${folder}${data.index}.aac`;
        await storage.put(result.audioKey, createReadStream(chunk.audioFile));
      }
      return result;
    } catch (err) {
      const settled = await this.settleError(row, err, 'rendering', cancel.signal.aborted, attempt, job.failedReason);
      if (settled !== false) return { ok: false, status: settled };
      throw err;
    } finally {
      stopLease();
      cancel.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/**
 * Joins a chunked render once BullMQ has finished all its chunks: downloads them from storage,
 * `combine`s them (no re-encoding for h264), stores output, poster and thumbnail, settles the render,
 * and removes the chunk files. A render already settled (a chunk failed or it was cancelled) is only
 * cleaned up.
 */
export class VideoCombineJob extends VideoJobBase {
  async run({ data, job, attempt }: VideoRun<'video.combine'>): Promise<JobResults['video.combine']> {
    const { storage } = this.deps;
    const row = await this.deps.lifecycle.get(data.renderId);
    if (!row || TERMINAL_STATUSES.includes(row.status) || row.cancelRequested) {
      if (row && !TERMINAL_STATUSES.includes(row.status)) await this.deps.lifecycle.settleCancelled(row.id, row.status);
      await this.finish(row, data);
      return { status: row?.status ?? 'gone' };
    }
    const results = Object.values(await job.getChildrenValues()) as VideoChunkResult[];
    const stopLease = this.keepLease(row);
    const cancel = this.watchCancel(row.id);
    const dir = await mkdtemp(join(await makeOwnScratch(videoJobScratch(this.deps.config)), 'combine-'));
    const files: string[] = [];
    try {
      const chunks: VideoChunk[] = [];
      for (const r of results) {
        if (!r.ok) throw new ApiError('INTERNAL_ERROR', `A chunk of the render did not finish (${r.status})`);
        const chunk: VideoChunk = { frameRange: r.frameRange, videoFile: join(dir, r.videoKey.split('/').pop()!), fps: r.fps, totalFrames: r.totalFrames, codec: r.codec };
        await download(storage, r.videoKey, chunk.videoFile);
        if (r.audioKey) {
          chunk.audioFile = join(dir, r.audioKey.split('/').pop()!);
          await download(storage, r.audioKey, chunk.audioFile);
        }
        chunks.push(chunk);
      }
      const engine = await this.deps.engine.current();
      await mkdir(join(dir, 'out'), { recursive: true });
      const out = await engine.combine(row.edit as unknown as EditSpec, chunks, {
        outputDir: join(dir, 'out'),
        signal: cancel.signal,
        onProgress: (p) => this.writeProgress(row, 0.9 + 0.1 * p),
      });
      files.push(out.file, out.posterFile, ...(out.thumbnailFile ? [out.thumbnailFile] : []));
      if (cancel.signal.aborted) throw new VideoRenderCancelled();
      const done = await this.saveAndSettle(row, out);
      await this.finish(row, data);
      return { status: done.status };
    } catch (err) {
      const settled = await this.settleError(row, err, 'saving', cancel.signal.aborted, attempt, job.failedReason);
      if (settled === false) throw err;
      await this.finish(row, data);
      return { status: settled };
    } finally {
      stopLease();
      cancel.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async finish(row: Render | null, data: JobPayloads['video.combine']): Promise<void> {
    await cleanupChunks(this.deps, data.renderId, data.token);
    await this.deps.redis.del(`${this.deps.keys.videoChunkProgress(data.renderId)}:token`).catch(() => undefined);
    if (row) await this.releaseSlot(row);
  }
}

async function download(storage: StorageDriver, key: string, file: string): Promise<void> {
  await pipeline(await storage.read(key), createWriteStream(file));
}
