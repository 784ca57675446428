import type { Redis } from 'ioredis';
import { type KeyMode } from '#libs/core';
import { PLANS, type PlanCode } from '#libs/workspaces';
import { RedisKeys } from '#libs/redis';
import { meterPeriod, type MeterOutcome, type MeterReply } from './metering.js';
import { RequestMeter, type MeteredCaller } from './request-meter.js';

/** The one Redis call the meter makes, recorded; `reply` answers it. */
class FakeRedis {
  readonly calls: { keys: string[]; args: (string | number)[] }[] = [];
  reply: (keys: string[]) => MeterReply | Promise<MeterReply> = () => [0, 0, 0];

  defineCommand(name: string, def: { numberOfKeys: number; lua: string }): void {
    expect(name).toBe('meterRequests');
    expect(def.numberOfKeys).toBe(3);
    expect(def.lua).toContain("redis.call('INCRBY', KEYS[2], n)");
  }

  meterRequests(k1: string, k2: string, k3: string, ...args: (string | number)[]): Promise<MeterReply> {
    this.calls.push({ keys: [k1, k2, k3], args });
    return Promise.resolve(this.reply([k1, k2, k3]));
  }
}

const keys = new RedisKeys('t');

function entry(workspaceId: string, mode: KeyMode = 'live', plan: PlanCode = 'free', version = '0'): MeteredCaller {
  return { workspaceId, mode, plan: PLANS[plan], version };
}

function setup(multiplier?: number) {
  const redis = new FakeRedis();
  const meter = new RequestMeter(redis as unknown as Redis, keys, multiplier);
  return { redis, meter };
}

describe('RequestMeter', () => {
  it('counts the requests of one event-loop turn with one script call per workspace and key mode', async () => {
    const { redis, meter } = setup();
    const a = entry('ws_a');
    const before = Date.now();
    const turn = [
      meter.count(a), meter.count(entry('ws_b')), meter.count(a), meter.count(entry('ws_a', 'test')), meter.count(a),
    ];
    expect(redis.calls).toHaveLength(0); // nothing is sent before the turn ends
    await Promise.all(turn);
    const after = Date.now();
    expect(redis.calls).toHaveLength(3);
    // ARGV: expected auth version, requests in the batch, rate limit, window TTL (ms), month TTL (s).
    const byWindow = Object.fromEntries(redis.calls.map((c) => [c.keys[1].replace(/:\d+$/, ''), c.args.slice(0, 4)]));
    expect(byWindow).toEqual({
      't:{ws:ws_a}:rate:live': ['0', 3, 20, 61_000],
      't:{ws:ws_a}:rate:test': ['0', 1, 10, 61_000],
      't:{ws:ws_b}:rate:live': ['0', 1, 20, 61_000],
    });
    for (const { keys: [authv, window, month], args } of redis.calls) {
      const ws = /{ws:(\w+)}/.exec(window)![1];
      expect(authv).toBe(keys.authVersion(ws));
      // Counted at flush time: the window and the month of a moment between the first count and the answer.
      const p = [before, after].map(meterPeriod).find((x) => window.endsWith(`:${x.windowStart}`));
      expect(p).toBeDefined();
      expect(month).toBe(keys.monthlyRequests(ws, p!.month));
      expect(args[4]).toBeGreaterThanOrEqual(meterPeriod(after).monthTtlSec);
      expect(args[4]).toBeLessThanOrEqual(meterPeriod(before).monthTtlSec);
    }

    await Promise.all([meter.count(a), meter.count(a)]);
    expect(redis.calls).toHaveLength(4); // the next turn is a call of its own
    expect(redis.calls[3].args[1]).toBe(2);
  });

  it('while a caller\'s call is out, its next requests wait and go together in one call after the answer (issue 33)', async () => {
    const { redis, meter } = setup();
    let answer: (r: MeterReply) => void = () => undefined;
    redis.reply = (k) => (k[0] === keys.authVersion('ws_a') ? new Promise((resolve) => { answer = resolve; }) : [0, 0, 0]);
    const a = entry('ws_a');
    const first = meter.count(a);
    await new Promise((r) => setImmediate(r));
    expect(redis.calls).toHaveLength(1);
    const later = [meter.count(a), meter.count(a)];
    await new Promise((r) => setImmediate(r));
    const other = await meter.count(entry('ws_b')); // another workspace does not wait
    await new Promise((r) => setImmediate(r));
    expect(redis.calls.map((c) => [c.keys[0], c.args[1]])).toEqual([[keys.authVersion('ws_a'), 1], [keys.authVersion('ws_b'), 1]]);
    answer([0, 5, 0]);
    expect(await first).toMatchObject({ state: 'ok', remaining: 14 });
    const next = new Promise<MeterOutcome[]>((resolve) => { setTimeout(() => { answer([0, 6, 1]); resolve(Promise.all(later)); }, 10); });
    expect((await next).map((o) => ('remaining' in o ? o.remaining : null))).toEqual([13, 12]);
    expect(redis.calls.map((c) => c.args[1])).toEqual([1, 1, 2]);
    expect(other).toMatchObject({ state: 'ok' });
  });

  it('gives each request of a batch its own place in the window, in the order they came', async () => {
    const { redis, meter } = setup();
    redis.reply = () => [0, 18, 42];
    const a = entry('ws_a');
    const out = await Promise.all([meter.count(a), meter.count(a), meter.count(a), meter.count(a)]);
    expect(out.map((o) => o.state)).toEqual(['ok', 'ok', 'rate', 'rate']);
    expect(out.map((o) => ('remaining' in o ? o.remaining : null))).toEqual([1, 0, 0, 0]);
  });

  it('test keys get half the rate; RATE_LIMIT_MULTIPLIER scales both', async () => {
    const { redis, meter } = setup(3);
    const [live, test] = await Promise.all([meter.count(entry('ws_a', 'live', 'starter')), meter.count(entry('ws_a', 'test', 'starter'))]);
    expect(live).toMatchObject({ state: 'ok', limit: 180, remaining: 179 });
    expect(test).toMatchObject({ state: 'ok', limit: 90, remaining: 89 });
    expect(redis.calls.map((c) => c.args[2]).sort()).toEqual([180, 90]);
  });

  it('a stale auth version answers stale; entries of different versions are not counted together', async () => {
    const { redis, meter } = setup();
    redis.reply = () => [-1, 0, 0];
    const out = await Promise.all([meter.count(entry('ws_a', 'live', 'free', '4')), meter.count(entry('ws_a', 'live', 'free', '5'))]);
    expect(out).toEqual([{ state: 'stale' }, { state: 'stale' }]);
    expect(redis.calls.map((c) => c.args[0]).sort()).toEqual(['4', '5']);
  });

  it('a failed call rejects the requests of its batch only', async () => {
    const { redis, meter } = setup();
    // ws_b's answer comes after ws_a's failure.
    redis.reply = (k) => k[0] === keys.authVersion('ws_a')
      ? Promise.reject(new Error('connection lost'))
      : new Promise((resolve) => setTimeout(() => resolve([0, 0, 0]), 20));
    const results = await Promise.allSettled([meter.count(entry('ws_a')), meter.count(entry('ws_b')), meter.count(entry('ws_a'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toEqual(new Error('connection lost'));
  });
});
