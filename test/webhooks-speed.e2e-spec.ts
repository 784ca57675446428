import { createHmac, timingSafeEqual } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { forWorkspace, type Orm } from '#libs/db';
import { writeEvent } from '#libs/events';
import { WebhookDeliverer, WebhookDelivery } from '#libs/webhooks';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { startReceiver, type Hit, type Receiver } from './receiver.js';
import { until as poll } from './render-helpers.js';

/*
 * Issue 33 (webhook fan-out): an event's first attempts to all its endpoints run as ONE job
 * (`webhooks.deliver-event`), and each delivery left due for a retry gets a `webhooks.deliver` job
 * that carries the attempts already made. What a receiver notices must not change: each endpoint
 * gets its own request signed with its own secret, once; a failing one gets §6's numbered retries
 * on §6's schedule, counted from the event job's attempt; a rerun of the event job (a worker that
 * died) sends nothing that was already recorded.
 */

/** §6 "Delivery headers and signature", written from the contract: HMAC-SHA256(secret, `${timestamp}.${raw body}`). */
function signedBy(secret: string, hit: Hit): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(`${String(hit.headers['x-service-timestamp'])}.`).update(hit.body).digest('hex')}`;
  const got = String(hit.headers['x-service-signature']);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

/**
 * The worker's waits between attempts (WEBHOOK_RETRY_DELAYS_MS, development only): the second wait
 * is long and the others short, so a retry job that lost count of the event job's attempt (it would
 * wait the first wait again before attempt 3) shows.
 */
const RETRY_DELAYS = [150, 1500, 150, 150];

describe('webhooks speed (issue 33): one job per event, retries per delivery', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let receiver: Receiver;
  let base: string;
  let key: string;
  let workspaceId: string;

  const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
  const hitsOf = (path: string, eventId: string) => receiver.hits.filter((h) => h.path === path && JSON.parse(h.body.toString()).id === eventId);
  const until = <T>(fn: () => T | undefined | false | Promise<T | undefined | false>, what: string) => poll(fn, what, 20_000, 50);
  async function register(path: string): Promise<{ id: string; secret: string }> {
    const res = await call('POST', '/v1/webhooks', { url: `${base}${path}`, events: ['render.completed'] });
    expect(res.statusCode).toBe(201);
    return res.json().data;
  }
  async function deliveries(endpointId: string): Promise<{ id: string; eventId: string; state: string; attempts: number; log: { attempt: number; status: number }[] }[]> {
    return (await call('GET', `/v1/webhooks/${endpointId}/deliveries`)).json().data;
  }

  beforeAll(async () => {
    // /flaky-*: 503 twice, then 200; /down-*: always 500; the rest 200.
    receiver = await startReceiver((hit, n) => (hit.path.startsWith('/flaky') ? (n <= 2 ? 503 : 200) : hit.path.startsWith('/down') ? 500 : 200));
    base = receiver.base;
    api = await startApi();
    worker = await createWorkerApp({ ...api.config, webhookRetryDelaysMs: RETRY_DELAYS });
    orm = await openAppDatabase(api.config.database, { migrate: false });
    const ws = (await api.cli('workspace:create', '--name', 'Fan-out')).json as { workspaceId: string; liveKey: string };
    key = ws.liveKey;
    workspaceId = ws.workspaceId;
  });
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await receiver.close();
  });

  it('§6 "Delivery headers and signature", "Retries": one event to three endpoints: each gets its own signature once; the failing one is retried as attempts 2 and 3 on the schedule', async () => {
    const a = await register('/ok-a');
    const b = await register('/ok-b');
    const flaky = await register('/flaky-1');
    const eventId = await orm.em.fork().transactional((em) => writeEvent(em, workspaceId, 'render.completed', { id: 'rnd_fan1', status: 'done' }, { mode: 'live' }));

    await until(() => hitsOf('/flaky-1', eventId).length >= 3, 'the third attempt to /flaky-1');
    const [okA, okB, tries] = [hitsOf('/ok-a', eventId), hitsOf('/ok-b', eventId), hitsOf('/flaky-1', eventId)];
    // Each endpoint's request is signed with that endpoint's secret, and not with another's.
    expect([okA.length, okB.length]).toEqual([1, 1]);
    expect([signedBy(a.secret, okA[0]), signedBy(b.secret, okB[0]), signedBy(a.secret, okB[0])]).toEqual([true, true, false]);
    expect(tries.every((h) => signedBy(flaky.secret, h))).toBe(true);
    expect([okA[0], okB[0], ...tries].map((h) => h.headers['x-service-attempt'])).toEqual(['1', '1', '1', '2', '3']);
    // The waits after attempts 1 and 2 are the first and the second of the schedule.
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(RETRY_DELAYS[0] - 10);
    expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(RETRY_DELAYS[1] - 10);

    // The log says the same, and nothing more is sent.
    await until(async () => (await deliveries(flaky.id)).find((d) => d.eventId === eventId && d.state === 'succeeded'), 'the flaky delivery to settle');
    await new Promise((r) => setTimeout(r, 300));
    expect(hitsOf('/flaky-1', eventId)).toHaveLength(3);
    const flakyLog = (await deliveries(flaky.id)).find((d) => d.eventId === eventId);
    expect(flakyLog).toMatchObject({ state: 'succeeded', attempts: 3 });
    expect(flakyLog?.log.map((l) => [l.attempt, l.status]).sort()).toEqual([[1, 503], [2, 503], [3, 200]]);
    for (const ok of [a, b]) expect((await deliveries(ok.id)).find((d) => d.eventId === eventId)).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect((await call('GET', `/v1/webhooks/${flaky.id}`)).json().data.consecutiveFailures).toBe(0);
  });

  it('a rerun of an event\'s job (its worker died) sends nothing already recorded, and hands a failed first attempt to its retry', async () => {
    const ok = await register('/ok-c');
    const down = await register('/down-1');
    const eventId = await orm.em.fork().transactional((em) => writeEvent(em, workspaceId, 'render.completed', { id: 'rnd_fan2', status: 'done' }, { mode: 'live' }));
    await until(() => hitsOf('/ok-c', eventId).length === 1 && hitsOf('/down-1', eventId).length >= 1, 'the first attempts');
    await until(async () => (await deliveries(down.id)).find((d) => d.eventId === eventId && d.attempts >= 1), 'the first attempt to /down-1 recorded');
    const ids = [...(await deliveries(ok.id)), ...(await deliveries(down.id))].filter((d) => d.eventId === eventId).map((d) => d.id);
    expect(ids).toHaveLength(2);
    const sentBefore = receiver.hits.length;

    // The event job's work run again, as BullMQ would after the worker's death.
    const rerun = await worker.get(WebhookDeliverer).firstAttempts(ids);
    const byId = new Map(rerun.map((o) => [o.deliveryId, o]));
    expect(byId.get(ids[0])).toMatchObject({ outcome: 'cancelled' });
    expect(byId.get(ids[1])).toMatchObject({ outcome: 'retry', after: expect.any(Number) });
    expect(byId.get(ids[1])!.after).toBeGreaterThanOrEqual(1);
    expect(receiver.hits.slice(sentBefore).filter((h) => h.path === '/ok-c' || (h.path === '/down-1' && h.headers['x-service-attempt'] === '1'))).toEqual([]);

    // The failing delivery goes on to its 5 attempts (§6), each numbered once, and ends failed.
    await until(async () => (await deliveries(down.id)).find((d) => d.eventId === eventId && d.state === 'failed'), 'the down delivery to fail');
    expect(hitsOf('/down-1', eventId).map((h) => h.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4', '5']);
    expect(hitsOf('/ok-c', eventId)).toHaveLength(1);
    // The worker still delivers afterwards.
    const later = await orm.em.fork().transactional((em) => writeEvent(em, workspaceId, 'render.completed', { id: 'rnd_fan3', status: 'done' }, { mode: 'live' }));
    await until(() => hitsOf('/ok-c', later).length === 1, 'a later event');
  });

  it('the safety net sends a delivery whose job was lost: a first attempt through its event\'s job (even one that already ran), a retry as the next attempt', async () => {
    const first = await register('/lost-first');
    const retry = await register('/lost-retry');
    const eventId = await orm.em.fork().transactional((em) => writeEvent(em, workspaceId, 'render.completed', { id: 'rnd_fan4', status: 'done' }, { mode: 'live' }));
    await until(async () => (await deliveries(first.id)).find((d) => d.eventId === eventId && d.state === 'succeeded')
      && (await deliveries(retry.id)).find((d) => d.eventId === eventId && d.state === 'succeeded'), 'both deliveries');
    const [a, b] = [(await deliveries(first.id))[0], (await deliveries(retry.id))[0]];
    // As a worker that died would leave them, more than the sweep's 120 s ago: one never attempted
    // (its event's job, which has run, would have sent it), one after its first attempt (its retry job lost).
    const em = forWorkspace(orm, workspaceId);
    const long = new Date(Date.now() - 130_000);
    await em.nativeUpdate(WebhookDelivery, { id: a.id }, { state: 'pending', attempts: 0, completedAt: null, createdAt: long });
    await em.nativeUpdate(WebhookDelivery, { id: b.id }, { state: 'pending', attempts: 1, completedAt: null, createdAt: long });

    await until(() => hitsOf('/lost-first', eventId).length === 2 && hitsOf('/lost-retry', eventId).length === 2, 'the sweep to send both again');
    expect(hitsOf('/lost-first', eventId).map((h) => h.headers['x-service-attempt'])).toEqual(['1', '1']);
    expect(hitsOf('/lost-retry', eventId).map((h) => h.headers['x-service-attempt'])).toEqual(['1', '2']);
    await until(async () => (await deliveries(retry.id))[0].state === 'succeeded' && (await deliveries(first.id))[0].state === 'succeeded', 'both settled again');
    expect((await deliveries(retry.id))[0]).toMatchObject({ attempts: 2 });
    await new Promise((r) => setTimeout(r, 1500));
    expect([hitsOf('/lost-first', eventId).length, hitsOf('/lost-retry', eventId).length]).toEqual([2, 2]);
  });
});
