import { meterOutcomes, meterPeriod, WINDOW_MS, type MeterReply } from './metering.js';

// docs/decisions.md "Rate limits and allowances (§8)".
describe('meter periods', () => {
  it('counts a request in its fixed minute window; X-RateLimit-Reset is the window\'s end, Retry-After the whole seconds to it', () => {
    const now = Date.UTC(2025, 2, 14, 10, 20, 30, 250);
    expect(meterPeriod(now)).toEqual({
      windowStart: Date.UTC(2025, 2, 14, 10, 20, 0),
      resetAt: Date.UTC(2025, 2, 14, 10, 21, 0),
      retryAfterSec: 30,
      month: '2025-03',
      windowTtlMs: 61_000,
      monthTtlSec: (Date.UTC(2025, 3, 1) - now + 250) / 1000 + 86_400, // whole seconds, rounded up
    });
  });

  it('a window starts at the minute and the next one at its reset; Retry-After is never 0', () => {
    const start = Date.UTC(2025, 5, 1, 0, 0, 0);
    expect(meterPeriod(start)).toMatchObject({ windowStart: start, resetAt: start + WINDOW_MS, retryAfterSec: 60 });
    expect(meterPeriod(start + 59_999)).toMatchObject({ windowStart: start, resetAt: start + WINDOW_MS, retryAfterSec: 1 });
    expect(meterPeriod(start + 59_000)).toMatchObject({ windowStart: start, retryAfterSec: 1 });
    expect(meterPeriod(start + 58_999)).toMatchObject({ windowStart: start, retryAfterSec: 2 });
    expect(meterPeriod(start + 60_000)).toMatchObject({ windowStart: start + WINDOW_MS, retryAfterSec: 60 });
  });

  it('months are calendar months in UTC; their counter outlives the month by a day', () => {
    const lastMs = Date.UTC(2025, 11, 31, 23, 59, 59, 500);
    expect(meterPeriod(lastMs)).toMatchObject({ month: '2025-12', monthTtlSec: 1 + 86_400 });
    expect(meterPeriod(lastMs + 500)).toMatchObject({ month: '2026-01', monthTtlSec: 31 * 86_400 + 86_400 });
    expect(meterPeriod(Date.UTC(2024, 1, 29, 12)).month).toBe('2024-02');
    expect(meterPeriod(Date.UTC(2025, 8, 30, 23, 59)).month).toBe('2025-09');
  });
});

describe('meter outcomes', () => {
  const period = meterPeriod(Date.UTC(2025, 2, 14, 10, 20, 30));

  it('places each request of a batch after the ones before it: within the rate ok, beyond it 429', () => {
    const out = meterOutcomes([0, 3, 0], 4, 5, 1000, period);
    expect(out.map((o) => o.state)).toEqual(['ok', 'ok', 'rate', 'rate']);
    expect(out.map((o) => ('remaining' in o ? o.remaining : null))).toEqual([1, 0, 0, 0]);
    for (const o of out) expect(o).toMatchObject({ limit: 5, resetAt: period.resetAt, retryAfterSec: 30 });
  });

  it('beyond the month\'s allowance: month (402), still counted in the minute', () => {
    const out = meterOutcomes([0, 0, 998], 4, 20, 1000, period);
    expect(out.map((o) => o.state)).toEqual(['ok', 'ok', 'month', 'month']);
    expect(out.map((o) => ('remaining' in o ? o.remaining : null))).toEqual([19, 18, 17, 16]);
  });

  it('the rate is answered before the allowance', () => {
    expect(meterOutcomes([0, 20, 5000], 1, 20, 1000, period)[0].state).toBe('rate');
  });

  it('a stale auth version answers stale to every request of the batch', () => {
    expect(meterOutcomes([-1, 0, 0], 3, 20, 1000, period)).toEqual([{ state: 'stale' }, { state: 'stale' }, { state: 'stale' }]);
  });

  it('a batch gets the answers its requests would get counted one by one', () => {
    const limit = 6;
    const monthLimit = 9;
    // The counters as the script moves them: the minute counts every request, the month only those within the rate.
    const script = (c: { minute: number; month: number }, n: number): MeterReply => {
      const reply: MeterReply = [0, c.minute, c.month];
      c.month += Math.max(0, Math.min(n, limit - c.minute));
      c.minute += n;
      return reply;
    };
    for (const [minute, month] of [[0, 0], [2, 5], [4, 8], [6, 0], [0, 9]]) {
      const batched = meterOutcomes(script({ minute, month }, 5), 5, limit, monthLimit, period);
      const single = { minute, month };
      const oneByOne = Array.from({ length: 5 }, () => meterOutcomes(script(single, 1), 1, limit, monthLimit, period)[0]);
      expect(batched).toEqual(oneByOne);
    }
  });
});
