import type { Redis } from 'ioredis';

/**
 * A sliding window in Redis, one per campaign and use, shared by every worker (one script a grant,
 * atomic, on Redis' clock). Each grant is a member of a sorted set scored by the time until which it
 * counts: a member counts while its score is within the last second. `acquire` scores it now (a plain
 * sliding-window log); `around` scores it "in flight" (now + the longest an attempt may take) while the
 * work runs and moves it to the time the work ended: a provider call is then counted from its grant
 * to a second after its answer, which holds every moment the provider may have received it.
 * Answers 0 (granted) or the milliseconds until a member leaves the window.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - window))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window + tonumber(ARGV[4]) + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now + 1)
`;

const DONE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
return 0
`;

export const RATE_WINDOW_MS = 1_000;

export class RateLimiter {
  private seq = 0;

  /** `inFlightMs`: how long an `around` grant counts when its end is never recorded (its worker died): the longest an attempt may take. */
  constructor(private readonly redis: Redis, private readonly key: string, private readonly perSecond: number, private readonly tag: string, private readonly inFlightMs = 0) {}

  private async grant(hold: number, signal?: AbortSignal): Promise<string> {
    for (;;) {
      signal?.throwIfAborted();
      const member = `${this.tag}:${this.seq++}`;
      const wait = Number(await this.redis.eval(ACQUIRE, 1, this.key, String(this.perSecond), String(RATE_WINDOW_MS), member, String(hold)));
      if (wait === 0) return member;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(2, wait))));
    }
  }

  /** Waits for a grant counted from now. */
  async acquire(signal?: AbortSignal): Promise<void> {
    await this.grant(0, signal);
  }

  /** Runs `work` under a grant counted from now until a second after `work` ended. */
  async around<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const member = await this.grant(this.inFlightMs, signal);
    try {
      return await work();
    } finally {
      await this.redis.eval(DONE, 1, this.key, member).catch(() => undefined);
    }
  }
}
