import type { Redis } from 'ioredis';
import { rateLimitFor } from '#libs/core';
import type { RedisKeys } from '#libs/redis';
import type { CachedKey } from './authenticator.js';

/**
 * One atomic round trip per request: checks the workspace's auth version, then counts the
 * request in the per-minute window of its mode and in the month's allowance.
 * KEYS: authVersion, minuteWindow, month. ARGV: expectedVersion, rateLimit, windowMs, monthLimit, monthTtlSec.
 * Returns {state, minuteCount, monthCount}; state 0 ok, 1 rate exceeded, 2 month exceeded, -1 stale.
 */
const METER_SCRIPT = `
local v = redis.call('GET', KEYS[1]) or '0'
if v ~= ARGV[1] then return {-1, 0, 0} end
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
if n > tonumber(ARGV[2]) then return {1, n, 0} end
local m = redis.call('INCR', KEYS[3])
if m == 1 then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
if m > tonumber(ARGV[4]) then return {2, n, m} end
return {0, n, m}
`;

export type MeterOutcome =
  | { state: 'ok' | 'rate' | 'month'; limit: number; remaining: number; resetAt: number; retryAfterSec: number }
  | { state: 'stale' };

const WINDOW_MS = 60_000;

interface MeterRedis extends Redis {
  meterRequest(k1: string, k2: string, k3: string, ...args: (string | number)[]): Promise<[number, number, number]>;
}

export class RequestMeter {
  private readonly redis: MeterRedis;

  constructor(redis: Redis, private readonly keys: RedisKeys, private readonly multiplier = 1) {
    redis.defineCommand('meterRequest', { numberOfKeys: 3, lua: METER_SCRIPT });
    this.redis = redis as MeterRedis;
  }

  async count(entry: CachedKey, now = Date.now()): Promise<MeterOutcome> {
    const windowStart = now - (now % WINDOW_MS);
    const limit = rateLimitFor(entry.plan, entry.mode) * this.multiplier;
    const d = new Date(now);
    const month = `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
    const monthEnd = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    const [state, minuteCount] = await this.redis.meterRequest(
      this.keys.authVersion(entry.workspaceId),
      this.keys.rateWindow(entry.workspaceId, entry.mode, windowStart),
      this.keys.monthlyRequests(entry.workspaceId, month),
      entry.version,
      limit,
      WINDOW_MS + 1000,
      entry.plan.apiRequestsPerMonth,
      Math.ceil((monthEnd - now) / 1000) + 86_400,
    );
    if (state === -1) return { state: 'stale' };
    const resetAt = windowStart + WINDOW_MS;
    return {
      state: state === 0 ? 'ok' : state === 1 ? 'rate' : 'month',
      limit,
      remaining: Math.max(0, limit - minuteCount),
      resetAt,
      retryAfterSec: Math.max(1, Math.ceil((resetAt - now) / 1000)),
    };
  }
}
