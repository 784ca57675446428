import type { Redis } from 'ioredis';
import { rateLimitFor } from '#libs/workspaces';
import type { RedisKeys } from '#libs/redis';
import type { CachedKey } from './authenticator.js';
import { meterOutcomes, meterPeriod, type MeterOutcome, type MeterReply } from './metering.js';

export { WINDOW_MS, type MeterOutcome } from './metering.js';

/**
 * One atomic round trip for a batch of `n` requests of one workspace and key mode: checks the
 * workspace's auth version, then counts the batch in the per-minute window and, for those within
 * the rate, in the month's allowance. Returns {state, minuteBefore, monthBefore}; state -1 = stale.
 * KEYS: authVersion, minuteWindow, month. ARGV: expectedVersion, n, rateLimit, windowMs, monthTtlSec.
 */
const METER_SCRIPT = `
local v = redis.call('GET', KEYS[1]) or '0'
if v ~= ARGV[1] then return {-1, 0, 0} end
local n = tonumber(ARGV[2])
local before = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('INCRBY', KEYS[2], n)
if before == 0 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
local allowed = math.max(0, math.min(n, tonumber(ARGV[3]) - before))
local monthBefore = tonumber(redis.call('GET', KEYS[3]) or '0')
if allowed > 0 then
  redis.call('INCRBY', KEYS[3], allowed)
  if monthBefore == 0 then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
end
return {0, before, monthBefore}
`;

interface MeterRedis extends Redis {
  meterRequests(k1: string, k2: string, k3: string, ...args: (string | number)[]): Promise<MeterReply>;
}

/** What the meter counts a request against: the workspace and key mode, at the auth version the caller was checked at. */
export type MeteredCaller = Pick<CachedKey, 'workspaceId' | 'mode' | 'version' | 'plan'>;

/** A caller as one string: the requests of one turn with the same string are counted in one batch. */
function meterKey(c: MeteredCaller): string {
  return `${c.workspaceId}|${c.mode}|${c.version}|${c.plan.code}`;
}

interface Batch {
  entry: MeteredCaller;
  waiters: { resolve: (o: MeterOutcome) => void; reject: (e: unknown) => void }[];
}

/**
 * Per-workspace rate limit and monthly allowance, shared by every API process through Redis.
 * Requests that arrive in the same event-loop turn are counted together (one script call per
 * workspace and mode), so the cost of the round trip is shared under load; each request still
 * gets its own position in the window, exactly as if counted one by one. A caller has at most one
 * call in flight: requests that arrive while it is out wait for its answer and go together in the
 * next (under load one call counts many requests instead of one per turn; an idle API sends at once).
 */
export class RequestMeter {
  private readonly redis: MeterRedis;
  private readonly pending = new Map<string, Batch>();
  /** Callers whose call is out: their next batch waits for its answer. */
  private readonly inFlight = new Set<string>();
  private scheduled = false;

  constructor(redis: Redis, private readonly keys: RedisKeys, private readonly multiplier = 1) {
    redis.defineCommand('meterRequests', { numberOfKeys: 3, lua: METER_SCRIPT });
    this.redis = redis as MeterRedis;
  }

  /** Requests a minute the caller's plan and key mode allow (test keys half), times RATE_LIMIT_MULTIPLIER. */
  limitFor(caller: Pick<MeteredCaller, 'plan' | 'mode'>): number {
    return rateLimitFor(caller.plan, caller.mode) * this.multiplier;
  }

  count(entry: MeteredCaller): Promise<MeterOutcome> {
    return new Promise((resolve, reject) => {
      const id = meterKey(entry);
      let batch = this.pending.get(id);
      if (!batch) {
        batch = { entry, waiters: [] };
        this.pending.set(id, batch);
      }
      batch.waiters.push({ resolve, reject });
      if (!this.inFlight.has(id)) this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const now = Date.now();
    for (const [id, batch] of this.pending) {
      if (this.inFlight.has(id)) continue;
      this.pending.delete(id);
      this.inFlight.add(id);
      void this.send(batch, now)
        .catch((err: unknown) => batch.waiters.forEach((w) => w.reject(err)))
        .finally(() => {
          this.inFlight.delete(id);
          if (this.pending.has(id)) this.schedule();
        });
    }
  }

  private async send({ entry, waiters }: Batch, now: number): Promise<void> {
    const period = meterPeriod(now);
    const limit = this.limitFor(entry);
    const reply = await this.redis.meterRequests(
      this.keys.authVersion(entry.workspaceId),
      this.keys.rateWindow(entry.workspaceId, entry.mode, period.windowStart),
      this.keys.monthlyRequests(entry.workspaceId, period.month),
      entry.version,
      waiters.length,
      limit,
      period.windowTtlMs,
      period.monthTtlSec,
    );
    meterOutcomes(reply, waiters.length, limit, entry.plan.apiRequestsPerMonth, period).forEach((o, i) => waiters[i].resolve(o));
  }
}
