import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import type { Orm } from '#libs/db';
import { writeEvent } from '#libs/events';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { startReceiver, type Hit, type Receiver } from './receiver.js';
import { until } from './render-helpers.js';

// Issue 28 "Stored secrets and limits": a GET delivery's signature covers the query that carries the
// event. §6 "Delivery headers and signature"; decisions.md "Stored secrets and limits (issue 28)".

/** The receiver's check as docs/decisions.md gives it (X-Service-Signature-V2), word for word. */
function verifyDelivery(secret: string, req: { method: string; url: string; headers: IncomingHttpHeaders }, body: Buffer, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const ts = String(req.headers['x-service-timestamp'] ?? '');
  if (!/^\d+$/.test(ts) || Math.abs(nowSec - Number(ts)) > 300) return false;
  const mac = createHmac('sha256', secret).update(`${ts}.${req.method}.${req.url}.`).update(body).digest('hex');
  const expected = Buffer.from(`sha256=${mac}`);
  const given = Buffer.from(String(req.headers['x-service-signature-v2'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** §6 as written: HMAC over `<timestamp>.<raw body>` in X-Service-Signature. */
function contractAccepts(secret: string, hit: Hit): boolean {
  const ts = String(hit.headers['x-service-timestamp']);
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${ts}.`).update(hit.body).digest('hex')}`);
  const given = Buffer.from(String(hit.headers['x-service-signature']));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('issue 28: a delivery\'s signature covers its method, path, query and body', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let receiver: Receiver;
  let base: string;
  let ws: { workspaceId: string; liveKey: string; callbackSecret: string };
  const key = () => ({ 'x-api-key': ws.liveKey });
  const hitOn = (path: string) => until(() => receiver.hits.find((h) => h.url.startsWith(path)), `a delivery to ${path}`, 20_000, 50);
  /** The same request with its query changed (what someone replaying a captured GET would send). */
  const withQuery = (hit: Hit, from: string, to: string) => ({ ...hit, url: hit.url.replace(from, to) });

  beforeAll(async () => {
    receiver = await startReceiver();
    base = receiver.base;
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = (await api.cli('workspace:create', '--name', 'Signed')).json as typeof ws;
  }, 60_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await receiver.close();
  });

  it('§6 GET: the test delivery and a dispatched event verify; the same request with a changed query does not', async () => {
    const created = await api.app.inject({
      method: 'POST', url: '/api/v1/webhooks', headers: key(),
      payload: { url: `${base}/get-hook?event={{event.type}}&render={{data.id}}`, method: 'GET', events: ['render.completed'] },
    });
    const { id, secret } = created.json().data;
    const test = await api.app.inject({ method: 'POST', url: `/api/v1/webhooks/${id}/test`, headers: key() });
    expect(test.json().data).toEqual({ ok: true, status: 200 });
    const sample = await hitOn('/get-hook');
    expect(sample.method).toBe('GET');
    expect(sample.url).toMatch(/^\/get-hook\?event=render\.completed&render=rnd_test_/);
    expect(verifyDelivery(secret, sample, sample.body)).toBe(true);
    expect(verifyDelivery(secret, withQuery(sample, 'render=rnd_test_', 'render=rnd_other_'), sample.body)).toBe(false);
    expect(verifyDelivery(secret, withQuery(sample, 'event=render.completed', 'event=render.failed'), sample.body)).toBe(false);
    // A GET's X-Service-Signature is the V2 signature: §6's `<timestamp>.` alone no longer verifies.
    expect(sample.headers['x-service-signature']).toBe(sample.headers['x-service-signature-v2']);
    expect(contractAccepts(secret, sample)).toBe(false);

    // A real event, through the outbox, the dispatcher and the worker.
    receiver.hits.length = 0;
    await orm.em.fork().transactional((em) => writeEvent(em, ws.workspaceId, 'render.completed', { id: 'rnd_signed_get', status: 'done' }, { mode: 'live' }));
    const real = await hitOn('/get-hook');
    expect(real.url).toBe('/get-hook?event=render.completed&render=rnd_signed_get');
    expect(verifyDelivery(secret, real, real.body)).toBe(true);
    expect(verifyDelivery(secret, withQuery(real, 'rnd_signed_get', 'rnd_forged'), real.body)).toBe(false);
    // The worker still answers: the delivery is logged as succeeded.
    const states = async () => ((await api.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries`, headers: key() })).json().data as { test: boolean; state: string }[])
      .filter((d) => !d.test).map((d) => d.state);
    await until(async () => (await states()).join() === 'succeeded', 'the delivery logged as succeeded', 20_000, 50);
  });

  it('§6 POST: X-Service-Signature stays `<timestamp>.<raw body>`; V2 adds the method, path and query', async () => {
    receiver.hits.length = 0;
    const created = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: key(), payload: { url: `${base}/post-hook?tenant={{org.id}}`, events: ['render.failed'] } });
    const { id, secret } = created.json().data;
    await orm.em.fork().transactional((em) => writeEvent(em, ws.workspaceId, 'render.failed', { id: 'rnd_signed_post', status: 'failed' }, { mode: 'live' }));
    const hit = await hitOn('/post-hook');
    expect(hit.method).toBe('POST');
    expect(contractAccepts(secret, hit)).toBe(true);
    expect(verifyDelivery(secret, hit, hit.body)).toBe(true);
    expect(verifyDelivery(secret, withQuery(hit, `tenant=${ws.workspaceId}`, 'tenant=org_other'), hit.body)).toBe(false);
    expect(verifyDelivery(secret, { ...hit, method: 'PUT' }, hit.body)).toBe(false);
    expect(verifyDelivery(secret, hit, Buffer.concat([hit.body, Buffer.from(' ')]))).toBe(false);
    expect((await api.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}`, headers: key() })).json().data.consecutiveFailures).toBe(0);
  });

  it('render callbacks are signed the same way, with the workspace\'s callback secret', async () => {
    receiver.hits.length = 0;
    await orm.em.fork().transactional((em) => writeEvent(em, ws.workspaceId, 'render.completed', { id: 'rnd_signed_callback', status: 'done' }, { mode: 'live', target: `${base}/callback?ref=order-7` }));
    const hit = await hitOn('/callback');
    expect(hit.url).toBe('/callback?ref=order-7');
    expect(contractAccepts(ws.callbackSecret, hit)).toBe(true);
    expect(verifyDelivery(ws.callbackSecret, hit, hit.body)).toBe(true);
    expect(verifyDelivery(ws.callbackSecret, withQuery(hit, 'order-7', 'order-8'), hit.body)).toBe(false);
  });
});
