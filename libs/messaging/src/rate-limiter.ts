import type { Redis } from 'ioredis';

/**
 * A sliding-window log in Redis, one per campaign: a send is granted when fewer than `limit` were
 * granted in the last window, as Redis' own clock tells (one script, atomic across every worker).
 * Answers 0 (granted) or the milliseconds until the oldest grant leaves the window.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window * 2)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now + 1)
`;

/**
 * The window is a second plus a margin: a grant reaches the provider some milliseconds later, and
 * those delays vary (a worker busy with a synchronous SQLite write holds the grant's reply; measured
 * up to ~60 ms on a loaded 2-core machine), so without it `limit + 1` sends could land in one second
 * at the provider. The cost: a campaign runs at up to 1000/1100 of its rate (docs/decisions.md).
 */
export const RATE_WINDOW_MS = 1_100;
/** A grant whose reply took longer than this to reach us was held up on our side: it is not used (its slot is lost). */
const STALE_GRANT_MS = 25;

export class RateLimiter {
  private seq = 0;

  /** `dropStale`: a grant whose reply was held up on our side is not used (the limiter right before a provider call). */
  constructor(private readonly redis: Redis, private readonly key: string, private readonly perSecond: number, private readonly tag: string, private readonly dropStale = false) {}

  /** Waits for a grant (polling no faster than every 5 ms and no slower than every 50 ms). */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const asked = Date.now();
      const wait = Number(await this.redis.eval(ACQUIRE, 1, this.key, String(this.perSecond), String(RATE_WINDOW_MS), `${this.tag}:${this.seq++}`));
      if (wait === 0 && (!this.dropStale || Date.now() - asked <= STALE_GRANT_MS)) return;
      if (wait === 0) continue;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(5, wait))));
    }
  }
}
