/** The arithmetic of the request meter (docs/decisions.md "Rate limits and allowances"), apart from its Redis script. */

/** Fixed one-minute rate windows. */
export const WINDOW_MS = 60_000;

export type MeterOutcome =
  | { state: 'ok' | 'rate' | 'month'; limit: number; remaining: number; resetAt: number; retryAfterSec: number }
  | { state: 'stale' };

/** Where a request made at `now` (ms) is counted: its minute window and its calendar month (UTC). */
export interface MeterPeriod {
  windowStart: number;
  /** The window's end in ms (X-RateLimit-Reset). */
  resetAt: number;
  /** Whole seconds until the window ends, at least 1 (Retry-After). */
  retryAfterSec: number;
  /** `YYYY-MM`, UTC. */
  month: string;
  /** The window's counter outlives the window by a second. */
  windowTtlMs: number;
  /** The month's counter outlives the month by a day. */
  monthTtlSec: number;
}

export function meterPeriod(now: number): MeterPeriod {
  const windowStart = now - (now % WINDOW_MS);
  const resetAt = windowStart + WINDOW_MS;
  const d = new Date(now);
  const monthEnd = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return {
    windowStart,
    resetAt,
    retryAfterSec: Math.max(1, Math.ceil((resetAt - now) / 1000)),
    month: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`,
    windowTtlMs: WINDOW_MS + 1000,
    monthTtlSec: Math.ceil((monthEnd - now) / 1000) + 86_400,
  };
}

/** The script's answer for a batch: state -1 = stale auth version; else the counts before the batch. */
export type MeterReply = [state: number, minuteBefore: number, monthBefore: number];

/**
 * Each of the batch's `n` requests, in order, placed as if counted one by one: beyond the minute's
 * `limit` → rate (429, not counted toward the month), else beyond the month's allowance → month.
 */
export function meterOutcomes(reply: MeterReply, n: number, limit: number, monthLimit: number, period: MeterPeriod): MeterOutcome[] {
  const [state, minuteBefore, monthBefore] = reply;
  if (state === -1) return Array.from({ length: n }, () => ({ state: 'stale' }));
  const { resetAt, retryAfterSec } = period;
  return Array.from({ length: n }, (_, i) => {
    const minuteCount = minuteBefore + i + 1;
    const outcome = minuteCount > limit ? 'rate' : monthBefore + i + 1 > monthLimit ? 'month' : 'ok';
    return { state: outcome, limit, remaining: Math.max(0, limit - minuteCount), resetAt, retryAfterSec };
  });
}
