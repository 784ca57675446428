import { createHmac, timingSafeEqual } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { forWorkspace, type Orm } from '#libs/db';
import { writeEvent } from '#libs/events';
import { createRedis } from '#libs/redis';
import { DeliveryAllowance, LAST_SUCCESS_GRANULARITY_MS, WebhookEndpoint } from '#libs/webhooks';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { lastCode, startApi, type TestApi } from './harness.js';
import { startReceiver, type Hit, type Receiver } from './receiver.js';
import { until as poll } from './render-helpers.js';

// Contract §2 (Webhook endpoint), §3, §4.6, §4.7, §6, §8; decisions.md "Webhooks".

/** An independent verifier written from §6: HMAC-SHA256(secret, `${timestamp}.${raw body}`), hex, 5-minute window. */
function verify(secret: string, hit: Hit): boolean {
  const ts = String(hit.headers['x-service-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(hit.body).digest('hex')}`;
  const got = String(hit.headers['x-service-signature']);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected)) && Math.abs(Date.now() / 1000 - Number(ts)) <= 300;
}

describe('webhooks: endpoints and signed, retried deliveries', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let receiver: Receiver;
  let base: string;
  let key: string;
  let workspaceId: string;

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const hitsOn = (path: string) => receiver.hits.filter((h) => h.path === path);
  const until = <T>(fn: () => T | undefined | false, ms = 20_000) => poll(fn, 'the webhook receiver', ms, 50);
  async function publish(type: 'render.completed' | 'render.failed' | 'render.cancelled', data: Record<string, unknown>, ws = workspaceId): Promise<string> {
    return orm.em.fork().transactional((em) => writeEvent(em, ws, type, data, { mode: 'live' }));
  }
  async function register(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
    const res = await call('POST', '/v1/webhooks', body);
    expect(res.statusCode).toBe(201);
    return res.json().data;
  }

  beforeAll(async () => {
    // /bad answers 400, /busy 429, /flaky-* 503 twice then 200, the rest 200.
    receiver = await startReceiver((hit, n) => (hit.path === '/bad' ? 400 : hit.path === '/busy' ? 429 : hit.path.startsWith('/flaky') ? (n <= 2 ? 503 : 200) : 200));
    base = receiver.base;
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    const ws = (await api.cli('workspace:create', '--name', 'Hooks')).json as { workspaceId: string; liveKey: string };
    key = ws.liveKey;
    workspaceId = ws.workspaceId;
  });
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await receiver.close();
  });

  it('registers with the §4.6 defaults and shows the secret once', async () => {
    const res = await call('POST', '/v1/webhooks', { url: `${base}/ok`, description: 'main' });
    expect(res.statusCode).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({
      id: expect.stringMatching(/^whk_/), events: ['render.completed', 'render.failed', 'render.cancelled'], method: 'POST',
      bodyFormat: 'json', payloadMode: 'default', isActive: true, consecutiveFailures: 0,
    });
    expect(data.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(data.secretHint).toBe(`whsec_...${data.secret.slice(-4)}`);
    const again = await call('GET', `/v1/webhooks/${data.id}`);
    expect(again.body).not.toContain(data.secret);
    const list = await call('GET', '/v1/webhooks?isActive=true&events=render.completed');
    expect(list.json().pagination).toMatchObject({ page: 1, limit: 50 });
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(data.id);
    expect((await call('GET', '/v1/webhooks?sort=secret')).json().code).toBe('INVALID_LIST_QUERY');
    expect((await call('GET', `/v1/webhooks?search=${'x'.repeat(129)}`)).statusCode).toBe(422);
  });

  it('§7, decisions.md "Envelope and errors": refuses bad endpoints with 422 VALIDATION_FAILED naming each problem by path', async () => {
    const refused = async (method: 'POST' | 'PATCH', url: string, body: unknown) => {
      const res = await call(method, url, body);
      expect([res.statusCode, res.json().code]).toEqual([422, 'VALIDATION_FAILED']);
      return res.json().errors as Record<string, string[]>;
    };
    // The shape first (the DTO: §8 sizes, §6 sets, unknown fields) …
    const shape = await refused('POST', '/v1/webhooks', { url: 'ftp://x', description: 'd'.repeat(201), payloadMode: 'custom', headers: [{ key: 'X-Service-Event', value: 'x' }], colour: 'red' });
    expect(Object.keys(shape).sort()).toEqual(['colour', 'description']);
    expect(shape.colour).toEqual(['Unknown field "colour"']);
    // … then the rules of the deployment and the delivery.
    const rules = await refused('POST', '/v1/webhooks', { url: 'ftp://x', payloadMode: 'custom', headers: [{ key: 'X-Service-Event', value: 'x' }] });
    expect(Object.keys(rules).sort()).toEqual(['headers[0].key', 'payloadTemplate', 'url']);
    // §8: a 21st header; a 201-character description.
    const headers = Array.from({ length: 21 }, (_, i) => ({ key: `X-H${i}`, value: 'v' }));
    expect(Object.keys(await refused('POST', '/v1/webhooks', { url: `${base}/ok`, headers }))).toEqual(['headers']);
    expect((await refused('POST', '/v1/webhooks', { url: `${base}/ok`, description: 'd'.repeat(201) })).description).toEqual([expect.stringContaining('200')]);
    // §6: an unknown event name, method or body format.
    expect((await refused('POST', '/v1/webhooks', { url: `${base}/ok`, events: ['render.completed', 'render.exploded'] })).events).toEqual([expect.stringContaining('"render.exploded" not an event')]);
    expect(Object.keys(await refused('POST', '/v1/webhooks', { url: `${base}/ok`, method: 'DELETE', bodyFormat: 'xml' })).sort()).toEqual(['bodyFormat', 'method']);
    // §4.6: a URL that is not absolute, or not http(s); a custom payload that is not a JSON object.
    expect(await refused('POST', '/v1/webhooks', { url: '/relative' })).toEqual({ url: ['must be an absolute URL'] });
    expect(await refused('POST', '/v1/webhooks', { url: 'ftp://hooks.example.com/' })).toEqual({ url: ['must use http or https'] });
    expect(Object.keys(await refused('POST', '/v1/webhooks', { url: `${base}/ok`, payloadMode: 'custom', payloadTemplate: '[1]' }))).toEqual(['payloadTemplate']);
    // An update is checked the same way, and merged with the stored endpoint (custom mode needs a template).
    const { id } = await register({ url: `${base}/ok` });
    expect(Object.keys(await refused('PATCH', `/v1/webhooks/${id}`, { headers, url: null })).sort()).toEqual(['headers', 'url']);
    expect(Object.keys(await refused('PATCH', `/v1/webhooks/${id}`, { payloadMode: 'custom' }))).toEqual(['payloadTemplate']);
    // A JSON body that is not an object is malformed: 400.
    const array = await call('POST', '/v1/webhooks', [{ url: `${base}/ok` }]);
    expect([array.statusCode, array.json().code]).toEqual([400, 'INVALID_REQUEST']);
    expect((await call('POST', '/v1/webhooks', { url: `${base}/ok`, method: 'GET' })).json().data.bodyFormat).toBe('none');
  });

  it('bodiless POSTs (test, redeliver) accept Content-Type: application/json with an empty body', async () => {
    const { id } = await register({ url: `${base}/empty-body` });
    const res = await api.app.inject({ method: 'POST', url: `/api/v1/webhooks/${id}/test`, headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '' });
    expect([res.statusCode, res.json().data]).toEqual([200, { ok: true, status: 200 }]);
  });

  it('test deliveries go through the real path with X-Service-Test and a valid signature', async () => {
    const { id, secret } = await register({ url: `${base}/test-target`, headers: [{ key: 'X-Tenant', value: '{{org.id}}' }] });
    const res = await call('POST', `/v1/webhooks/${id}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ ok: true, status: 200 });
    const [hit] = hitsOn('/test-target');
    expect(hit.headers['x-service-test']).toBe('true');
    expect(hit.headers['x-service-event']).toBe('render.completed');
    expect(hit.headers['x-service-attempt']).toBe('1');
    expect(hit.headers['user-agent']).toBe('service-webhooks/1.0');
    expect(hit.headers['x-tenant']).toBe(workspaceId);
    expect(verify(secret, hit)).toBe(true);
    const body = JSON.parse(hit.body.toString());
    expect(body).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'render.completed', data: { id: expect.stringMatching(/^rnd_test_/), status: 'done' } });
    const failing = await register({ url: `${base}/bad` });
    const bad = await call('POST', `/v1/webhooks/${failing.id}/test`);
    expect(bad.json().data).toEqual({ ok: false, status: 400 });
    // Test failures never count toward the streak.
    expect((await call('GET', `/v1/webhooks/${failing.id}`)).json().data.consecutiveFailures).toBe(0);
  });

  it('delivers outbox events to every subscribed endpoint, signed, once each', async () => {
    const a = await register({ url: `${base}/a`, events: ['render.completed'] });
    const b = await register({ url: `${base}/b`, events: ['render.failed'] });
    const eventId = await publish('render.completed', { id: 'rnd_1', status: 'done', url: 'https://x/y.png' });
    const hit = await until(() => hitsOn('/a').find((h) => JSON.parse(h.body.toString()).id === eventId));
    expect(verify(a.secret, hit)).toBe(true);
    expect(JSON.parse(hit.body.toString())).toMatchObject({ id: eventId, type: 'render.completed', data: { id: 'rnd_1' } });
    await new Promise((r) => setTimeout(r, 1500));
    expect(hitsOn('/a').filter((h) => JSON.parse(h.body.toString()).id === eventId)).toHaveLength(1);
    expect(hitsOn('/b')).toHaveLength(0);
    const log = await call('GET', `/v1/webhooks/${a.id}/deliveries`);
    expect(log.json().data[0]).toMatchObject({ eventId, event: 'render.completed', state: 'succeeded', attempts: 1, lastStatus: 200 });
    expect(log.json().data[0].log).toEqual([expect.objectContaining({ attempt: 1, status: 200 })]);
    expect((await call('GET', `/v1/webhooks/${b.id}`)).json().data.lastSuccessAt).toBeNull();
  });

  it('retries on 5xx at 1 s then 4 s, numbering attempts; a success resets the streak', async () => {
    const { id } = await register({ url: `${base}/flaky-1`, events: ['render.failed'] });
    await publish('render.failed', { id: 'rnd_2', status: 'failed' });
    await until(() => hitsOn('/flaky-1').length >= 3, 25_000);
    const got = hitsOn('/flaky-1');
    expect(got.map((h) => h.headers['x-service-attempt'])).toEqual(['1', '2', '3']);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(900);
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(3900);
    await waitFor(async () => (await call('GET', `/v1/webhooks/${id}`)).json().data.lastSuccessAt !== null);
    const endpoint = (await call('GET', `/v1/webhooks/${id}`)).json().data;
    expect(endpoint.consecutiveFailures).toBe(0);
    expect(endpoint.lastSuccessAt).not.toBeNull();
  }, 40_000);

  it('does not retry a 400; the failed delivery counts toward the streak; 20 in a row disable the endpoint', async () => {
    const { id } = await register({ url: `${base}/bad`, events: ['render.completed'] });
    await forWorkspace(orm, workspaceId).nativeUpdate(WebhookEndpoint, { id }, { consecutiveFailures: 18 });
    await publish('render.completed', { id: 'rnd_3' });
    await waitFor(async () => (await call('GET', `/v1/webhooks/${id}`)).json().data.consecutiveFailures === 19);
    let view = (await call('GET', `/v1/webhooks/${id}`)).json().data;
    expect(view).toMatchObject({ isActive: true, disabled: false });
    await publish('render.completed', { id: 'rnd_4' });
    await waitFor(async () => (await call('GET', `/v1/webhooks/${id}`)).json().data.consecutiveFailures === 20);
    view = (await call('GET', `/v1/webhooks/${id}`)).json().data;
    expect(view).toMatchObject({ isActive: false, disabled: true, lastFailureAt: expect.any(String) });
    const log = (await call('GET', `/v1/webhooks/${id}/deliveries`)).json().data;
    expect(log.filter((d: { state: string }) => d.state === 'refused').every((d: { attempts: number }) => d.attempts === 1)).toBe(true);
    // Re-enabling clears the streak.
    const re = await call('PATCH', `/v1/webhooks/${id}`, { isActive: true });
    expect(re.json().data).toMatchObject({ isActive: true, disabled: false, consecutiveFailures: 0 });
  }, 40_000);

  it('a success clears a streak even right after another success, and keeps lastSuccessAt within its granularity', async () => {
    const { id } = await register({ url: `${base}/streak`, events: ['render.cancelled'] });
    const first = await publish('render.cancelled', { id: 'rnd_7' });
    await until(() => hitsOn('/streak').find((h) => JSON.parse(h.body.toString()).id === first));
    await waitFor(async () => (await call('GET', `/v1/webhooks/${id}`)).json().data.lastSuccessAt !== null);
    // Failures counted elsewhere (another worker) since that success, which was a moment ago.
    await forWorkspace(orm, workspaceId).nativeUpdate(WebhookEndpoint, { id }, { consecutiveFailures: 7 });
    const sentAt = Date.now();
    await publish('render.cancelled', { id: 'rnd_8' });
    await waitFor(async () => (await call('GET', `/v1/webhooks/${id}`)).json().data.consecutiveFailures === 0);
    const view = (await call('GET', `/v1/webhooks/${id}`)).json().data;
    expect(Date.parse(view.lastSuccessAt)).toBeGreaterThanOrEqual(sentAt - LAST_SUCCESS_GRANULARITY_MS);
  });

  it('beyond the monthly allowance deliveries are skipped (all of an event or none) and a test answers 402', async () => {
    const ws = (await api.cli('workspace:create', '--name', 'Allowance', '--plan', 'free')).json as { workspaceId: string; liveKey: string };
    const as = (method: 'GET' | 'POST', url: string, payload?: object) =>
      api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': ws.liveKey }, ...(payload ? { payload } : {}) });
    const one = (await as('POST', '/v1/webhooks', { url: `${base}/quota-1`, events: ['render.completed'] })).json().data;
    await as('POST', '/v1/webhooks', { url: `${base}/quota-2`, events: ['render.completed'] });
    // The free plan's 1,000 deliveries a month, 999 of them used.
    const redis = createRedis(api.config, 'test');
    try {
      const key = new DeliveryAllowance(api.config.redisPrefix, async () => 0).key(ws.workspaceId, new Date());
      await redis.set(key, 999, 'EX', 600);
      const eventId = await publish('render.completed', { id: 'rnd_9' }, ws.workspaceId);
      let log: { eventId: string; state: string; attempts: number }[] = [];
      await waitFor(async () => {
        log = (await as('GET', `/v1/webhooks/${one.id}/deliveries`)).json().data;
        return log.some((d) => d.eventId === eventId);
      });
      expect(log.find((d) => d.eventId === eventId)).toMatchObject({ state: 'skipped', attempts: 0 });
      await new Promise((r) => setTimeout(r, 300));
      expect(hitsOn('/quota-1')).toHaveLength(0);
      expect(hitsOn('/quota-2')).toHaveLength(0);
      // The last delivery of the month fits; the next one does not.
      expect((await as('POST', `/v1/webhooks/${one.id}/test`)).json().data).toEqual({ ok: true, status: 200 });
      const refused = await as('POST', `/v1/webhooks/${one.id}/test`);
      expect(refused.statusCode).toBe(402);
      expect(refused.json().code).toBe('LIMIT_WEBHOOKDELIVERIES');
      expect(await redis.get(key)).toBe('1000');
    } finally {
      redis.disconnect();
    }
  });

  it('a paused endpoint gets nothing; a deleted endpoint gets nothing', async () => {
    const paused = await register({ url: `${base}/paused`, events: ['render.completed'] });
    const deleted = await register({ url: `${base}/deleted`, events: ['render.completed'] });
    expect((await call('PATCH', `/v1/webhooks/${paused.id}`, { isActive: false })).json().data.isActive).toBe(false);
    expect((await call('DELETE', `/v1/webhooks/${deleted.id}`)).json()).toMatchObject({ success: true, data: null });
    expect((await call('GET', `/v1/webhooks/${deleted.id}`)).json().code).toBe('WEBHOOK_NOT_FOUND');
    const control = await register({ url: `${base}/control`, events: ['render.completed'] });
    const eventId = await publish('render.completed', { id: 'rnd_5' });
    await until(() => hitsOn('/control').find((h) => JSON.parse(h.body.toString()).id === eventId));
    await new Promise((r) => setTimeout(r, 500));
    expect(hitsOn('/paused')).toHaveLength(0);
    expect(hitsOn('/deleted')).toHaveLength(0);
    expect((await call('GET', `/v1/webhooks/${control.id}`)).json().data.lastSuccessAt).not.toBeNull();
  });

  it('custom payloads keep types and survive quotes and newlines; form bodies carry nested values as JSON text', async () => {
    const { secret } = await register({
      url: `${base}/custom?e={{event.type}}`, events: ['render.completed'], payloadMode: 'custom', bodyFormat: 'form',
      payloadTemplate: JSON.stringify({ event: '{{event.id}}', render: '{{data}}', width: '{{data.width}}', note: 'id={{data.id}}', missing: '{{data.nope}}' }),
    });
    const eventId = await publish('render.completed', { id: 'rnd_"6"\n', width: 1280 });
    const hit = await until(() => hitsOn('/custom').find((h) => h.body.toString().includes(eventId)));
    expect(hit.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(verify(secret, hit)).toBe(true);
    const form = new URLSearchParams(hit.body.toString());
    expect(form.get('event')).toBe(eventId);
    expect(JSON.parse(form.get('render') ?? '')).toEqual({ id: 'rnd_"6"\n', width: 1280 });
    expect(form.get('width')).toBe('1280');
    expect(form.get('note')).toBe('id=rnd_"6"\n');
    expect(form.get('missing')).toBe('');
  });

  it('the dashboard routes manage the same endpoints with a session', async () => {
    await api.cli('user:create', '--phone', '+4915100000077', '--workspace', workspaceId, '--role', 'owner');
    await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone: '+4915100000077' } });
    const code = await lastCode(api, '+4915100000077');
    const token = (await api.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { phone: '+4915100000077', otp: code } })).json().data.token;
    const headers = { authorization: `Bearer ${token}`, 'x-service-org': workspaceId };
    const created = await api.app.inject({ method: 'POST', url: '/api/organization/webhooks', headers, payload: { url: `${base}/dash`, events: ['credits.low'] } });
    expect(created.statusCode).toBe(201);
    const list = await api.app.inject({ method: 'GET', url: '/api/organization/webhooks', headers });
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(created.json().data.id);
    // The session route has no default subscription: events are required.
    const noEvents = await api.app.inject({ method: 'POST', url: '/api/organization/webhooks', headers, payload: { url: `${base}/dash` } });
    expect([noEvents.statusCode, noEvents.json().code, noEvents.json().errors]).toEqual([422, 'VALIDATION_FAILED', { events: ['is required'] }]);
    const tooMany = await api.app.inject({ method: 'POST', url: '/api/organization/webhooks', headers, payload: { url: `${base}/dash`, events: ['credits.low'], headers: Array.from({ length: 21 }, (_, i) => ({ key: `X-H${i}`, value: 'v' })) } });
    expect([tooMany.statusCode, Object.keys(tooMany.json().errors)]).toEqual([422, ['headers']]);
    const renamed = await api.app.inject({ method: 'PATCH', url: `/api/organization/webhooks/${created.json().data.id}`, headers, payload: { description: 'd'.repeat(201) } });
    expect([renamed.statusCode, Object.keys(renamed.json().errors)]).toEqual([422, ['description']]);
  });
});

async function waitFor(fn: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}
