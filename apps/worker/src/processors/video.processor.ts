import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { MikroORM } from '@mikro-orm/core';
import { DelayedError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { ApiError, PLANS, retryBusy, type PlanCode } from '#libs/core';
import type { EditSpec } from '#libs/edit-spec';
import type { JobPayloads, JobResults } from '#libs/queue';
import type { RedisKeys } from '#libs/redis';
import { Render, TERMINAL_STATUSES, VIDEO_ATTEMPTS, type RenderSettler, type RenderStatus } from '#libs/renders';
import { outputKey, type StorageDriver } from '#libs/storage';
import { VideoRenderCancelled, type VideoEngine } from '#libs/video';
import { Workspace } from '#libs/workspaces';
import type { JobProcessor } from './processor.js';

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

/**
 * One video render through its states (§3, decisions.md "Render record"): queued → fetching
 * (downloads and probes, inside the engine) → rendering (progress 0..1 on the record) → saving
 * (output, poster, thumbnail stored) → done; failures → failed with {code, message, stage};
 * `cancelRequested` stops it (Remotion's cancel signal) → cancelled. Each end settles credits and
 * writes its event once. A job that dies with its worker is run again by another (BullMQ stalled
 * jobs) up to VIDEO_ATTEMPTS runs, then the render fails WORKER_LOST (see WorkerModule).
 */
export class VideoRenderProcessor implements JobProcessor<'video.render'> {
  readonly job = 'video.render' as const;

  constructor(
    private readonly orm: MikroORM,
    private readonly engine: VideoEngineRef,
    private readonly storage: StorageDriver,
    private readonly settler: RenderSettler,
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async process(data: JobPayloads['video.render'], meta: { id: string; attempt: number; job?: Job; token?: string }): Promise<JobResults['video.render']> {
    const em = this.orm.em.fork();
    const row = await em.findOne(Render, { id: data.renderId });
    if (!row || TERMINAL_STATUSES.includes(row.status)) return { status: row?.status ?? 'gone' };
    if (row.cancelRequested) return { status: (await this.settler.cancel(row.id, row.status)).status };

    const workspace = await em.findOne(Workspace, { id: row.workspaceId });
    const plan = PLANS[(workspace?.plan ?? 'free') as PlanCode] ?? PLANS.free;
    const slots = this.keys.videoSlots(row.workspaceId);
    const lease = () => String(Date.now() + LEASE_MS);
    const took = await this.redis.eval(TAKE_SLOT, 1, slots, String(Date.now()), lease(), row.id, String(plan.concurrentRenders));
    if (took !== 1) {
      // Over the plan's concurrency: wait without using up an attempt; other workspaces' renders go on.
      if (!meta.job || meta.token === undefined) throw new Error('video jobs need their BullMQ job to wait for a slot');
      await meta.job.moveToDelayed(Date.now() + WAIT_FOR_SLOT_MS, meta.token);
      throw new DelayedError();
    }
    const renew = setInterval(() => void this.redis.zadd(slots, lease(), row.id).catch(() => undefined), LEASE_MS / 3);
    const abort = new AbortController();
    let stage: RenderStatus = 'fetching';
    const watch = setInterval(() => {
      void this.orm.em.fork().findOne(Render, { id: row.id }, { fields: ['cancelRequested'] }).then((r) => {
        if (r?.cancelRequested) abort.abort();
      }).catch(() => undefined);
    }, 500);
    const files: string[] = [];
    try {
      if (!(await this.settler.start(row.id, meta.attempt))) return { status: 'settled' };
      const engine = await this.engine.current();
      let lastWrite = 0;
      const out = await engine.render(row.edit as unknown as EditSpec, {
        signal: abort.signal,
        onProgress: (progress) => {
          const now = Date.now();
          if (now - lastWrite < 500 && progress < 1) return;
          lastWrite = now;
          stage = 'rendering';
          void this.orm.em.fork()
            .nativeUpdate(Render, { id: row.id, status: { $in: ['fetching', 'rendering'] } }, { status: 'rendering', progress: Math.round(progress * 1000) / 1000 })
            .catch(() => undefined);
        },
      });
      files.push(out.file, out.posterFile, ...(out.thumbnailFile ? [out.thumbnailFile] : []));
      if (abort.signal.aborted) throw new VideoRenderCancelled();
      stage = 'saving';
      await retryBusy(() => this.orm.em.fork().nativeUpdate(Render, { id: row.id, status: { $nin: [...TERMINAL_STATUSES] } }, { status: 'saving', progress: 1 }));
      const key = outputKey(row.id, out.format);
      await this.storage.put(key, createReadStream(out.file), { contentType: out.contentType });
      const posterKey = outputKey(row.id, 'jpg');
      await this.storage.put(posterKey, createReadStream(out.posterFile));
      let thumbnailKey: string | undefined;
      if (out.thumbnailFile) {
        thumbnailKey = outputKey(row.id, 'jpg');
        await this.storage.put(thumbnailKey, createReadStream(out.thumbnailFile));
      }
      if ((await this.orm.em.fork().findOne(Render, { id: row.id }, { fields: ['cancelRequested'] }))?.cancelRequested) throw new VideoRenderCancelled();
      const done = await this.settler.complete(row.id, {
        key, width: out.width, height: out.height, sizeBytes: out.fileSizeBytes, duration: out.durationSec, fps: out.fps, posterKey,
        ...(thumbnailKey ? { thumbnailKey } : {}),
      });
      return { status: done.status };
    } catch (err) {
      if (err instanceof VideoRenderCancelled || abort.signal.aborted) return { status: (await this.settler.cancel(row.id, stage)).status };
      if (err instanceof ApiError) {
        const failed = await this.settler.fail(row.id, { code: err.code, message: err.message, stage, ...(err.extras.errors ? { errors: err.extras.errors } : {}) });
        return { status: failed.status };
      }
      if (meta.attempt >= VIDEO_ATTEMPTS) {
        await this.settler.fail(row.id, { code: 'INTERNAL_ERROR', message: `The render failed ${VIDEO_ATTEMPTS} times: ${(err as Error).message}`, stage });
        return { status: 'failed' };
      }
      // Another run (BullMQ retries) starts again from queued.
      await retryBusy(() => this.orm.em.fork().nativeUpdate(Render, { id: row.id, status: { $nin: [...TERMINAL_STATUSES] } }, { status: 'queued', progress: 0 }));
      throw err;
    } finally {
      clearInterval(renew);
      clearInterval(watch);
      await this.redis.zrem(slots, row.id).catch(() => undefined);
      await Promise.all(files.map((f) => rm(f, { force: true })));
    }
  }
}
