import { randomBytes } from 'node:crypto';
import type { FlowProducer } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobQueues } from '#libs/queue';
import type { RedisKeys } from '#libs/redis';
import type { ChunkJob, JobQueue, SlotLeases } from '../ports.js';

/** A slot lease: a running render renews it; a dead worker's lapses and frees the slot. */
const LEASE_MS = 60_000;
/** A chunked render's progress and token outlive any render (then go by themselves). */
const CHUNK_STATE_MS = 7 * 86_400_000;

/**
 * Takes a slot of the workspace's concurrent renders: drops lapsed leases, then adds this render
 * when fewer than `limit` hold one (or renews it when it holds one).
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

/** The workspace's video slots as a sorted set of render ids scored by lease expiry (one Lua step takes one). */
export class RedisSlotLeases implements SlotLeases {
  constructor(private readonly redis: Redis, private readonly keys: RedisKeys) {}

  async take(workspaceId: string, renderId: string, limit: number): Promise<boolean> {
    const now = Date.now();
    return (await this.redis.eval(TAKE_SLOT, 1, this.keys.videoSlots(workspaceId), String(now), String(now + LEASE_MS), renderId, String(limit))) === 1;
  }

  async renew(workspaceId: string, renderId: string): Promise<void> {
    await this.redis.zadd(this.keys.videoSlots(workspaceId), String(Date.now() + LEASE_MS), renderId);
  }

  async release(workspaceId: string, renderId: string): Promise<void> {
    await this.redis.zrem(this.keys.videoSlots(workspaceId), renderId).catch(() => undefined);
  }
}

/** The videos queue's chunk flows (BullMQ) and the chunks' shared state (a Redis hash of frames per chunk, and a token). */
export class BullVideoQueue implements JobQueue {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly queues: JobQueues,
    private readonly flows: FlowProducer,
  ) {}

  async startChunks(renderId: string, token: string, chunks: readonly ChunkJob[]): Promise<void> {
    const { queues } = this;
    await this.flows.add(queues.flowJob('video.combine', { renderId, token }, {
      jobId: `${renderId}-combine`,
      children: chunks.map((c) => queues.flowJob('video.chunk', { renderId, token, ...c }, { jobId: `${renderId}-chunk-${c.index}` })),
    }));
  }

  async chunkToken(renderId: string): Promise<string> {
    const key = this.tokenKey(renderId);
    return (await this.redis.set(key, randomBytes(12).toString('hex'), 'PX', CHUNK_STATE_MS, 'NX', 'GET')) ?? (await this.redis.get(key))!;
  }

  async chunkFrames(renderId: string, index: number, frames: number): Promise<number> {
    const key = this.keys.videoChunkProgress(renderId);
    const [, , done] = (await this.redis.multi().hset(key, String(index), String(frames)).pexpire(key, CHUNK_STATE_MS).hvals(key).exec())!;
    return (done![1] as string[]).reduce((sum, v) => sum + Number(v), 0);
  }

  async forgetChunks(renderId: string): Promise<void> {
    await this.redis.del(this.keys.videoChunkProgress(renderId), this.tokenKey(renderId));
  }

  private tokenKey(renderId: string): string {
    return `${this.keys.videoChunkProgress(renderId)}:token`;
  }
}

/**
 * The sign that a worker's video engine runs: each such worker sets a key with a short life and renews
 * it; the API reads it for its 503 ENGINE_NOT_CONFIGURED check.
 */
export class VideoEngineBeacon {
  constructor(private readonly redis: Redis, private readonly keys: RedisKeys) {}

  async beat(worker: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.videoEngine(), worker, 'PX', ttlMs);
  }

  async alive(): Promise<boolean> {
    return (await this.redis.exists(this.keys.videoEngine())) === 1;
  }
}
