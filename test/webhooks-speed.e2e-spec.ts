import { createHmac, timingSafeEqual } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent, writeEvent } from '#libs/events';
import { JobQueues } from '#libs/queue';
import { DELIVERIES_PER_JOB, WebhookDeliverer, WebhookDelivery } from '#libs/webhooks';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { startReceiver, type Hit, type Receiver } from './receiver.js';
import { until as poll } from './render-helpers.js';

/*
 * Issue 33 (webhook fan-out): an event's first attempts to all its endpoints run as ONE job
 * (`webhooks.deliver-event`; events fanned out together share one, up to DELIVERIES_PER_JOB
 * deliveries), and each delivery left due for a retry gets a `webhooks.deliver` job
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

  it('events fanned out together share first-attempts jobs of at most DELIVERIES_PER_JOB deliveries, each sent once; a sweep or a dispatcher run again while such a job waits leaves the sending to it', async () => {
    // A workspace of its own: 3 endpoints, 12 events written at once (one dispatch batch): 36 deliveries.
    const ws = (await api.cli('workspace:create', '--name', 'Batches')).json as { workspaceId: string; liveKey: string };
    const paths = ['/batch-a', '/batch-b', '/batch-c'];
    const secrets: string[] = [];
    for (const path of paths) {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { 'x-api-key': ws.liveKey }, payload: { url: `${base}${path}`, events: ['render.completed'] } });
      expect(res.statusCode).toBe(201);
      secrets.push(res.json().data.secret);
    }
    const eventIds = await orm.em.fork().transactional(async (em) => {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await writeEvent(em, ws.workspaceId, 'render.completed', { id: `rnd_batch${i}`, status: 'done' }, { mode: 'live' }));
      return ids;
    });
    const all = () => receiver.hits.filter((h) => paths.includes(h.path) && eventIds.includes(JSON.parse(h.body.toString()).id));
    await until(() => all().length >= 36, 'the 36 first attempts');

    // Each (endpoint, event) once, signed with its endpoint's secret.
    const hits = all();
    expect(new Set(hits.map((h) => `${h.path} ${JSON.parse(h.body.toString()).id}`)).size).toBe(36);
    expect(hits.every((h) => signedBy(secrets[paths.indexOf(h.path)], h))).toBe(true);
    // Two jobs: the first 10 events (30 deliveries; an 11th would pass 32), then the last 2.
    const em = forWorkspace(orm, ws.workspaceId);
    const rows = await em.fork().find(WebhookDelivery, { eventId: { $in: eventIds } }, { orderBy: { eventId: 'asc', id: 'asc' } });
    const jobs = new Map<string, WebhookDelivery[]>();
    for (const r of rows) jobs.set(r.jobId as string, [...(jobs.get(r.jobId as string) ?? []), r]);
    expect(DELIVERIES_PER_JOB).toBe(32);
    expect([...jobs.values()].map((j) => j.length).sort((a, b) => a - b)).toEqual([6, 30]);
    for (const [jobId, members] of jobs) {
      expect(members.some((m) => jobId === `first-${m.id}`)).toBe(true);
      // An event's deliveries are in one job.
      for (const m of members) expect(rows.filter((r) => r.eventId === m.eventId).every((r) => r.jobId === jobId)).toBe(true);
    }

    // The 6-delivery job's deliveries as a worker that died before sending them would leave them, more
    // than the sweep's 120 s ago, while their job still waits (a delayed copy of it under its id); and
    // their 2 events as a dispatcher that died before stamping them would (so it runs them again).
    // The waiting job first: the sweep or the dispatcher could otherwise enqueue the six under its id
    // before it is there, and that job would be the one to send them.
    const [jobId, lost] = [...jobs].find(([, m]) => m.length === 6)!;
    const sentBefore = all().length;
    const waitsMs = 4_000;
    await worker.get(JobQueues).add('webhooks.deliver-event', { eventId: lost[0].eventId, deliveryIds: lost.map((l) => l.id) }, { jobId, delay: waitsMs });
    const since = Date.now();
    await em.nativeUpdate(WebhookDelivery, { id: { $in: lost.map((l) => l.id) } }, { state: 'pending', attempts: 0, completedAt: null, createdAt: new Date(Date.now() - 130_000) });
    await em.nativeUpdate(OutboxEvent, { id: { $in: [...new Set(lost.map((l) => l.eventId))] } }, { dispatchedAt: null });
    // The sweep runs every second and the dispatcher takes the 2 events again: both find the six
    // rows and enqueue them under their job's id, so the waiting job takes them: nothing is sent
    // before it is due.
    await new Promise((r) => setTimeout(r, waitsMs - 1_500));
    expect(all().length).toBe(sentBefore);
    await until(() => all().length >= sentBefore + 6, 'the waiting job to send the six');
    expect(Date.now() - since).toBeGreaterThanOrEqual(waitsMs - 100);
    await new Promise((r) => setTimeout(r, 1500));
    const again = all().slice(sentBefore);
    expect(again).toHaveLength(6);
    expect(new Set(again.map((h) => `${h.path} ${JSON.parse(h.body.toString()).id}`)).size).toBe(6);
    expect(again.map((h) => h.headers['x-service-attempt'])).toEqual(Array(6).fill('1'));
    expect(await em.count(OutboxEvent, { id: { $in: eventIds }, dispatchedAt: null })).toBe(0);
    expect(await em.count(WebhookDelivery, { eventId: { $in: eventIds } })).toBe(36);
  });
});
