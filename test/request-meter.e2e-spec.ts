import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type KeyMode } from '#libs/core';
import { PLANS } from '#libs/workspaces';
import { RequestMeter, type MeteredCaller } from '#libs/keys';
import { RedisKeys } from '#libs/redis';

// The meter's Lua script against a real Redis (decisions.md "Rate limits and allowances"): what the
// counters hold after 429s, 402s and stale answers. The HTTP answers are in api-keys.e2e-spec.ts.
describe('request meter script', () => {
  const redis = new Redis(process.env.REDIS_URL ?? '');
  const keys = new RedisKeys(`t${randomBytes(6).toString('hex')}`);
  const meter = new RequestMeter(redis, keys);
  afterAll(() => redis.quit());

  let n = 0;
  function entry(mode: KeyMode = 'live', version = '0'): MeteredCaller {
    const workspaceId = `ws_${++n}`;
    return { workspaceId, mode, plan: PLANS.free, version };
  }
  /** One event-loop turn of `count` requests with the same key. */
  const turn = (e: MeteredCaller, count: number) => Promise.all(Array.from({ length: count }, () => meter.count(e)));
  /** The keys of the current minute window and month (UTC). */
  const now = () => {
    const t = Date.now();
    return { windowStart: t - (t % 60_000), month: new Date(t).toISOString().slice(0, 7), monthEnd: Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1) };
  };
  const counters = async (e: MeteredCaller) => {
    const { windowStart, month } = now();
    const [minute, monthly] = await redis.mget(keys.rateWindow(e.workspaceId, e.mode, windowStart), keys.monthlyRequests(e.workspaceId, month));
    return { minute: Number(minute), month: Number(monthly) };
  };

  /** Keeps a test inside one minute window. */
  beforeEach(async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await new Promise((r) => setTimeout(r, left + 50));
  });

  it('requests refused with 429 do not count toward the month', async () => {
    const e = entry();
    const first = await turn(e, 25);
    expect(first.map((o) => o.state)).toEqual([...Array<string>(20).fill('ok'), ...Array<string>(5).fill('rate')]);
    expect(await counters(e)).toEqual({ minute: 25, month: 20 });
    expect((await turn(e, 3)).map((o) => o.state)).toEqual(['rate', 'rate', 'rate']);
    expect(await counters(e)).toEqual({ minute: 28, month: 20 });
  });

  it('test keys count in a budget of their own, toward the same month', async () => {
    const live = entry();
    const test = { ...entry('test'), workspaceId: live.workspaceId };
    expect((await turn(test, 11)).map((o) => o.state)).toEqual([...Array<string>(10).fill('ok'), 'rate']);
    expect((await turn(live, 2)).map((o) => o.state)).toEqual(['ok', 'ok']);
    expect(await counters(test)).toEqual({ minute: 11, month: 12 });
    expect(await counters(live)).toEqual({ minute: 2, month: 12 });
  });

  it('beyond the month\'s allowance requests are refused (402) and still count', async () => {
    const e = entry();
    const month = keys.monthlyRequests(e.workspaceId, now().month);
    await redis.set(month, String(PLANS.free.apiRequestsPerMonth - 2));
    expect((await turn(e, 4)).map((o) => o.state)).toEqual(['ok', 'ok', 'month', 'month']);
    expect(await counters(e)).toEqual({ minute: 4, month: PLANS.free.apiRequestsPerMonth + 2 });
  });

  it('a stale auth version counts nothing; the current one counts', async () => {
    const e = entry('live', '2');
    await redis.set(keys.authVersion(e.workspaceId), '3');
    expect(await turn(e, 3)).toEqual([{ state: 'stale' }, { state: 'stale' }, { state: 'stale' }]);
    expect(await counters(e)).toEqual({ minute: 0, month: 0 });
    expect((await turn({ ...e, version: '3' }, 1))[0].state).toBe('ok');
    // A workspace whose version was never bumped is at version 0.
    expect((await turn(entry('live', '0'), 1))[0].state).toBe('ok');
    expect((await turn(entry('live', '1'), 1))[0].state).toBe('stale');
  });

  it('the minute\'s counter expires 61 s after the window\'s first request, the month\'s a day after the month', async () => {
    const e = entry();
    await turn(e, 1);
    await new Promise((r) => setTimeout(r, 300));
    await turn(e, 1); // a later request does not push the expiry back
    const { windowStart, month, monthEnd } = now();
    const minuteTtl = await redis.pttl(keys.rateWindow(e.workspaceId, e.mode, windowStart));
    expect(minuteTtl).toBeGreaterThan(55_000);
    expect(minuteTtl).toBeLessThanOrEqual(60_750);
    const monthTtl = await redis.ttl(keys.monthlyRequests(e.workspaceId, month));
    const untilMonthEnd = (monthEnd - Date.now()) / 1000;
    expect(monthTtl).toBeGreaterThan(untilMonthEnd + 86_400 - 5);
    expect(monthTtl).toBeLessThanOrEqual(untilMonthEnd + 86_400 + 2);
  });
});
