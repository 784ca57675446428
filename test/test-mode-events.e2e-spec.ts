import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { get, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import { createServicesContext, openAppDatabase, PROCESS_ROLES } from '#libs/app';
import { newId } from '#libs/core';
import { forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent, RenderFeed } from '#libs/events';
import { createRedis, RedisKeys } from '#libs/redis';
import { Render } from '#libs/renders';
import { WebhookDelivery, WebhookEndpoint } from '#libs/webhooks';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { multipart, startApi, userSession, type TestApi } from './harness.js';
import { startReceiver, type Hit, type Receiver } from './receiver.js';
import { eventsOf, ledgerOf, until } from './render-helpers.js';

// Issue 28 "A test key cannot touch live mode": records carry their mode, a test caller (pk_test_ key,
// or a session with X-Service-Mode: test) changes only test records (403 LIVE_MODE_REQUIRED), events
// carry `livemode` (envelope, X-Service-Livemode), endpoints take the event modes of their `modes`, and
// a test caller's render event stream carries test events only. docs/decisions.md "Test mode (issue 28):
// the rule" and "Test mode (issue 28): events, webhooks, renders, assets"; contract §2, §4.6, §4.7, §5, §6.


/** §6's check, written from the contract: HMAC-SHA256(secret, `${timestamp}.${raw body}`). */
function verify(secret: string, hit: Hit): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(`${String(hit.headers['x-service-timestamp'])}.`).update(hit.body).digest('hex')}`;
  const got = String(hit.headers['x-service-signature']);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

interface Sse { id?: string; event?: string; data?: { id?: string; type: string; livemode?: boolean; data: { id: string; progress?: number } } }

/** A render event stream over real HTTP: the events parsed so far, and a way to hang up. */
class Stream {
  readonly events: Sse[] = [];
  status = 0;
  private req: ClientRequest | null = null;
  private ended: Promise<void> = Promise.resolve();

  open(url: string, headers: Record<string, string>): Promise<this> {
    return new Promise((resolve, reject) => {
      const req = get(url, { headers, agent: false }, (res) => {
        this.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        let buffer = '';
        this.ended = new Promise((done) => res.on('close', done));
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const ev: Sse = {};
            for (const line of buffer.slice(0, end).split('\n')) {
              if (line.startsWith('id: ')) ev.id = line.slice(4);
              else if (line.startsWith('event: ')) ev.event = line.slice(7);
              else if (line.startsWith('data: ')) ev.data = JSON.parse(line.slice(6)) as Sse['data'];
            }
            buffer = buffer.slice(end + 2);
            if (ev.event) this.events.push(ev);
          }
        });
        resolve(this);
      });
      req.on('error', (err) => (this.status ? undefined : reject(err)));
      this.req = req;
    });
  }

  about(renderId: string): Sse[] {
    return this.events.filter((e) => e.data?.data.id === renderId);
  }

  async close(): Promise<void> {
    this.req?.destroy();
    await this.ended;
  }
}

const still = (text: string) => ({
  timeline: { background: '#264653', tracks: [{ clips: [{ asset: { type: 'text', text, font: { family: 'Open Sans', size: 20, color: '#ffffff' } }, start: 0, length: 1 }] }] },
  output: { format: 'png', size: { width: 120, height: 80 } },
});
const video = { timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 10 }, fill: { color: '#e63946' } }, start: 0, length: 1 }] }] }, output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 } };

describe('test mode (issue 28): events, webhooks, renders, assets', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let services: INestApplicationContext;
  let orm: Orm;
  let receiver: Receiver;
  let hookBase: string;
  let apiBase: string;
  let ws: { workspaceId: string; liveKey: string; testKey: string };
  /** Owner sessions: live (no header) and test (X-Service-Mode: test). */
  let ownerLive: Record<string, string>;
  let ownerTest: Record<string, string>;
  const streams: Stream[] = [];

  type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
  const as = (headers: Record<string, string>) => (method: Method, url: string, payload?: unknown) =>
    api.app.inject({ method, url: `/api${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const live = (method: Method, url: string, payload?: unknown) => as({ 'x-api-key': ws.liveKey })(method, url, payload);
  const test = (method: Method, url: string, payload?: unknown) => as({ 'x-api-key': ws.testKey })(method, url, payload);
  const hitsOn = (path: string) => receiver.hits.filter((h) => h.path === path);
  const bodyOf = (h: Hit) => JSON.parse(h.body.toString('utf8')) as { id: string; type: string; livemode: boolean; data: { id: string } };
  const refusedLiveMode = (res: { statusCode: number; json: () => { code: string; message: string } }) => {
    expect([res.statusCode, res.json().code]).toEqual([403, 'LIVE_MODE_REQUIRED']);
    expect(res.json().message).toMatch(/live mode.*test/i);
  };

  const register = async (call: typeof live, body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/webhooks', body);
    expect(res.statusCode).toBe(201);
    return res.json().data as { id: string; secret: string; mode: string; modes: string[] };
  };
  const renderStill = async (call: typeof live, text: string) => {
    const res = await call('POST', '/v1/render', { edit: still(text) });
    expect(res.statusCode).toBe(200);
    return res.json().data.id as string;
  };
  const queueVideo = async (call: typeof live) => {
    const res = await call('POST', '/v1/render', { edit: video });
    expect(res.statusCode).toBe(202);
    return res.json().data.id as string;
  };
  const endpointRow = (id: string) => forWorkspace(orm, ws.workspaceId).fork().findOneOrFail(WebhookEndpoint, { id });
  const deliveriesOf = (endpointId: string) => forWorkspace(orm, ws.workspaceId).fork().find(WebhookDelivery, { endpointId }, { orderBy: { id: 'asc' } });

  beforeAll(async () => {
    receiver = await startReceiver();
    hookBase = receiver.base;
    api = await startApi();
    worker = await createWorkerApp(api.config);
    services = await createServicesContext(api.config, PROCESS_ROLES.cli);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    apiBase = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}/api`;
    // The heartbeat of a worker running the video engine, set by hand: videos are accepted and stay queued (no engine here).
    const redis = createRedis(api.config, 'test');
    await redis.set(new RedisKeys(api.config.redisPrefix).videoEngine(), 'test', 'PX', 600_000);
    redis.disconnect();
    ws = (await api.cli('workspace:create', '--name', 'Sandbox', '--plan', 'pro', '--video-credits', '50')).json as typeof ws;
    const token = await userSession(api, ws.workspaceId, '+4915100028001', 'owner');
    ownerLive = { authorization: `Bearer ${token}`, 'x-service-org': ws.workspaceId };
    ownerTest = { ...ownerLive, 'x-service-mode': 'test' };
  }, 120_000);
  afterAll(async () => {
    for (const s of streams) await s.close();
    await services.close();
    await worker.close();
    await orm.close(true);
    await api.close();
    await receiver.close();
  });

  it('§6 events carry livemode (envelope {id, type, created, livemode, data} and X-Service-Livemode), signed as before; an endpoint with modes ["live"] receives no test event', async () => {
    const liveOnly = await register(live, { url: `${hookBase}/live-only`, modes: ['live'] });
    const both = await register(live, { url: `${hookBase}/both` });
    const testMade = await register(test, { url: `${hookBase}/test-made` });
    expect([liveOnly.mode, liveOnly.modes]).toEqual(['live', ['live']]);
    // §6 default "as today" for a live key; a test key's endpoint takes test events only.
    expect([both.mode, both.modes]).toEqual(['live', ['live', 'test']]);
    expect([testMade.mode, testMade.modes]).toEqual(['test', ['test']]);

    // A test render first, then a live one: once the live one's event reached /live-only, the test one's
    // (older, dispatched first) would have too.
    const testRender = await renderStill(test, 'test');
    const liveRender = await renderStill(live, 'live');
    await until(() => hitsOn('/live-only').some((h) => bodyOf(h).data.id === liveRender), 'the live render\'s event at /live-only', 20_000);
    await until(() => hitsOn('/both').length >= 2 && hitsOn('/test-made').length >= 1, 'both events at /both, the test one at /test-made', 20_000);
    await until(() => deliveriesOf(both.id).then((d) => d.every((x) => x.state === 'succeeded') && d.length === 2), 'the deliveries settled', 10_000);

    expect(hitsOn('/live-only').map((h) => bodyOf(h).data.id)).toEqual([liveRender]);
    expect(hitsOn('/test-made').map((h) => bodyOf(h).data.id)).toEqual([testRender]);
    const byRender = new Map(hitsOn('/both').map((h) => [bodyOf(h).data.id, h]));
    for (const [renderId, livemode] of [[testRender, false], [liveRender, true]] as const) {
      const hit = byRender.get(renderId)!;
      const body = bodyOf(hit);
      expect(Object.keys(body)).toEqual(['id', 'type', 'created', 'livemode', 'data']);
      expect([body.type, body.livemode, hit.headers['x-service-livemode']]).toEqual(['render.completed', livemode, String(livemode)]);
      expect(verify(both.secret, hit)).toBe(true);
    }
    expect(verify(liveOnly.secret, hitsOn('/live-only')[0])).toBe(true);
    // Deliveries carry the event's mode; the render's own events say it too.
    expect((await deliveriesOf(both.id)).map((d) => [d.eventType, d.mode]).sort()).toEqual([['render.completed', 'live'], ['render.completed', 'test']]);
    const log = (await live('GET', `/v1/webhooks/${both.id}/deliveries`)).json().data as { mode: string }[];
    expect(log.map((d) => d.mode).sort()).toEqual(['live', 'test']);
    const events = (await test('GET', `/v1/render/${testRender}/events`)).json().data as { type: string; livemode: boolean }[];
    expect(events.map((e) => [e.type, e.livemode])).toEqual([['render.completed', false]]);
  });

  it('§4.6 a test key may not subscribe an endpoint to live events: 422 VALIDATION_FAILED at modes, on create and on update', async () => {
    for (const modes of [['live'], ['live', 'test']]) {
      const res = await test('POST', '/v1/webhooks', { url: `${hookBase}/x`, modes });
      expect([res.statusCode, res.json().code, Object.keys(res.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['modes']]);
    }
    for (const modes of [[], ['prod'], 'live']) {
      const res = await live('POST', '/v1/webhooks', { url: `${hookBase}/x`, modes });
      expect([res.statusCode, res.json().code, Object.keys(res.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['modes']]);
    }
    const own = await register(test, { url: `${hookBase}/own` });
    const widen = await test('PATCH', `/v1/webhooks/${own.id}`, { modes: ['test', 'live'] });
    expect([widen.statusCode, Object.keys(widen.json().errors)]).toEqual([422, ['modes']]);
    // A test-mode session is held to the same rule on §4.7's twin.
    const twin = await as(ownerTest)('POST', '/organization/webhooks', { url: `${hookBase}/x`, events: ['render.completed'], modes: ['live'] });
    expect([twin.statusCode, Object.keys(twin.json().errors)]).toEqual([422, ['modes']]);
    const made = await as(ownerTest)('POST', '/organization/webhooks', { url: `${hookBase}/twin`, events: ['render.completed'] });
    expect([made.statusCode, made.json().data.mode, made.json().data.modes]).toEqual([201, 'test', ['test']]);
    expect((await endpointRow(own.id)).modes).toEqual(['test']);
  });

  it('a test key (or a test-mode session) cannot update, re-enable, test, redeliver or delete a live endpoint: 403 LIVE_MODE_REQUIRED, the endpoint unchanged; unknown ids stay 404', async () => {
    const target = await register(live, { url: `${hookBase}/live-target`, events: ['render.completed'] });
    const liveRender = await renderStill(live, 'to redeliver');
    await until(() => hitsOn('/live-target').some((h) => bodyOf(h).data.id === liveRender), 'the live delivery', 20_000);
    const [delivery] = await deliveriesOf(target.id);
    await until(async () => (await deliveriesOf(target.id))[0].state === 'succeeded', 'the delivery settled', 10_000);
    // Disabled after a failure streak (as the deliverer leaves it).
    await forWorkspace(orm, ws.workspaceId).fork().nativeUpdate(WebhookEndpoint, { id: target.id }, { isActive: false, disabledAt: new Date(), consecutiveFailures: 20 });
    const before = await endpointRow(target.id);
    const targetHits = hitsOn('/live-target').length;

    for (const [who, call] of [['test key', test], ['test-mode session', as(ownerTest)]] as const) {
      const v1 = who === 'test key';
      const base = v1 ? '/v1/webhooks' : '/organization/webhooks';
      refusedLiveMode(await call('PATCH', `${base}/${target.id}`, { url: `${hookBase}/stolen` }));
      refusedLiveMode(await call('PATCH', `${base}/${target.id}`, { isActive: true }));
      // The mode is checked before the body: a bad body still answers 403.
      refusedLiveMode(await call('PATCH', `${base}/${target.id}`, { url: 'ftp://nope' }));
      refusedLiveMode(await call('POST', `${base}/${target.id}/test`));
      refusedLiveMode(await call('DELETE', `${base}/${target.id}`));
      if (v1) refusedLiveMode(await call('POST', `${base}/${target.id}/deliveries/${delivery.id}/redeliver`));
      // Reading stays open (keys belong to the workspace, §5.1).
      expect((await call('GET', base)).statusCode).toBe(200);
      // Unknown ids are 404 whoever asks (the record's existence first).
      expect((await call('PATCH', `${base}/whk_nope`, { isActive: true })).json().code).toBe('WEBHOOK_NOT_FOUND');
      expect((await call('DELETE', `${base}/whk_nope`)).json().code).toBe('WEBHOOK_NOT_FOUND');
    }
    expect((await test('POST', `/v1/webhooks/${target.id}/deliveries/dlv_nope/redeliver`)).json().code).toBe('DELIVERY_NOT_FOUND');
    // A session's re-enable through /v1 (the dashboard's way) is refused as well.
    refusedLiveMode(await as(ownerTest)('PATCH', `/v1/webhooks/${target.id}`, { isActive: true }));
    refusedLiveMode(await as(ownerTest)('POST', `/v1/webhooks/${target.id}/deliveries/${delivery.id}/redeliver`));
    // The workspace's render callback settings are live too.
    refusedLiveMode(await as(ownerTest)('PATCH', '/organization/callback', { defaultCallbackUrl: `${hookBase}/stolen` }));
    refusedLiveMode(await as(ownerTest)('POST', '/organization/callback/rotate-secret'));

    const after = await endpointRow(target.id);
    expect(after).toMatchObject({ url: before.url, isActive: false, consecutiveFailures: 20, mode: 'live', modes: ['live', 'test'] });
    expect(after.disabledAt).not.toBeNull();
    expect((await deliveriesOf(target.id)).map((d) => d.id)).toEqual([delivery.id]);
    await new Promise((r) => setTimeout(r, 300));
    expect([hitsOn('/live-target').length, hitsOn('/stolen').length]).toEqual([targetHits, 0]);
    expect((await as(ownerLive)('GET', '/organization/callback')).json().data.defaultCallbackUrl).toBeNull();

    // A live key (and a live session) keeps full rights.
    expect((await live('PATCH', `/v1/webhooks/${target.id}`, { isActive: true })).json().data).toMatchObject({ isActive: true, disabled: false, consecutiveFailures: 0 });
    const redelivered = await live('POST', `/v1/webhooks/${target.id}/deliveries/${delivery.id}/redeliver`);
    expect(redelivered.statusCode).toBe(202);
    await until(() => hitsOn('/live-target').length >= 2, 'the redelivery', 20_000);
    expect(hitsOn('/live-target')[1].headers['x-service-livemode']).toBe('true');
    const tested = await as(ownerLive)('POST', `/organization/webhooks/${target.id}/test`);
    expect([tested.statusCode, tested.json().data.ok]).toEqual([200, true]);
    expect((await as(ownerLive)('PATCH', '/organization/callback', { defaultCallbackUrl: null })).statusCode).toBe(200);
    expect((await live('DELETE', `/v1/webhooks/${target.id}`)).statusCode).toBe(200);
  });

  it('a test key acts on its own test endpoint and deliveries; a live key on both; an endpoint a live key gives live events becomes live', async () => {
    const own = await register(test, { url: `${hookBase}/own-test`, events: ['render.completed'] });
    const testRender = await renderStill(test, 'own');
    await until(() => hitsOn('/own-test').some((h) => bodyOf(h).data.id === testRender), 'the test delivery', 20_000);
    await until(async () => (await deliveriesOf(own.id))[0]?.state === 'succeeded', 'the delivery settled', 10_000);
    const [delivery] = await deliveriesOf(own.id);
    expect(delivery.mode).toBe('test');

    // The test send of a test endpoint is a test event (livemode false), with X-Service-Test.
    const tested = await test('POST', `/v1/webhooks/${own.id}/test`);
    expect([tested.statusCode, tested.json().data.ok]).toEqual([200, true]);
    const sample = hitsOn('/own-test').at(-1)!;
    expect([bodyOf(sample).livemode, sample.headers['x-service-livemode'], sample.headers['x-service-test']]).toEqual([false, 'false', 'true']);
    expect(verify(own.secret, sample)).toBe(true);
    expect((await test('POST', `/v1/webhooks/${own.id}/deliveries/${delivery.id}/redeliver`)).statusCode).toBe(202);
    await until(() => hitsOn('/own-test').filter((h) => bodyOf(h).data.id === testRender).length >= 2, 'the redelivery', 20_000);
    expect((await test('PATCH', `/v1/webhooks/${own.id}`, { isActive: false })).json().data.isActive).toBe(false);
    expect((await test('PATCH', `/v1/webhooks/${own.id}`, { isActive: true, url: `${hookBase}/own-test-2` })).json().data).toMatchObject({ isActive: true, url: `${hookBase}/own-test-2`, mode: 'test' });

    // A live key may change it too, and once it takes live events it is a live endpoint: out of the test key's reach.
    const widened = await live('PATCH', `/v1/webhooks/${own.id}`, { modes: ['live', 'test'] });
    expect(widened.json().data).toMatchObject({ mode: 'live', modes: ['live', 'test'] });
    refusedLiveMode(await test('PATCH', `/v1/webhooks/${own.id}`, { url: `${hookBase}/stolen` }));
    // The sample of an endpoint that takes live events is live.
    expect((await live('POST', `/v1/webhooks/${own.id}/test`)).json().data.ok).toBe(true);
    expect(hitsOn('/own-test-2').at(-1)!.headers['x-service-livemode']).toBe('true');

    const other = await register(test, { url: `${hookBase}/own-test-3` });
    expect((await test('DELETE', `/v1/webhooks/${other.id}`)).statusCode).toBe(200);
    expect((await live('DELETE', `/v1/webhooks/${own.id}`)).statusCode).toBe(200);
  });

  it('§3 cancel: a test key (or test session) cannot cancel a live render (403, still queued, its hold and events unchanged); it cancels its own; a live key cancels both', async () => {
    const liveVideo = await queueVideo(live);
    const testVideo = await queueVideo(test);
    const otherTestVideo = await queueVideo(test);
    for (const call of [test, as(ownerTest)]) refusedLiveMode(await call('POST', `/v1/render/${liveVideo}/cancel`));
    expect((await test('GET', `/v1/render/${liveVideo}`)).json().data).toMatchObject({ status: 'queued', cancelRequested: false, mode: 'live' });
    expect(await ledgerOf(orm, liveVideo)).toEqual(['hold']);
    expect(await eventsOf(orm, ws.workspaceId, liveVideo)).toEqual(['render.queued']);
    expect((await test('POST', '/v1/render/rnd_nope/cancel')).json().code).toBe('RENDER_NOT_FOUND');

    const own = await test('POST', `/v1/render/${testVideo}/cancel`);
    expect([own.statusCode, own.json().data.status]).toEqual([200, 'cancelled']);
    const byLive = await live('POST', `/v1/render/${otherTestVideo}/cancel`);
    expect([byLive.statusCode, byLive.json().data.status]).toEqual([200, 'cancelled']);
    const liveCancel = await live('POST', `/v1/render/${liveVideo}/cancel`);
    expect([liveCancel.statusCode, liveCancel.json().data.status]).toEqual([200, 'cancelled']);
    expect(await ledgerOf(orm, liveVideo)).toEqual(['hold', 'release']);
    expect(await eventsOf(orm, ws.workspaceId, liveVideo)).toEqual(['render.queued', 'render.cancelled']);
    expect((await forWorkspace(orm, ws.workspaceId).fork().findOneOrFail(Render, { id: testVideo })).mode).toBe('test');
  });

  it('§4.4 assets carry their mode; a test key cannot delete a live asset (403, still there) but deletes its own; asset events carry their mode', async () => {
    const hook = await register(live, { url: `${hookBase}/assets`, events: ['asset.ready'] });
    const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#2a9d8f' } }).png().toBuffer();
    const upload = async (call: typeof live) => {
      const body = multipart([{ name: 'file', file: png, filename: 'dot.png', type: 'image/png' }]);
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { ...body.headers, 'x-api-key': call === live ? ws.liveKey : ws.testKey }, payload: body.payload });
      expect(res.statusCode).toBe(201);
      return res.json().data.id as string;
    };
    const testAsset = await upload(test);
    const liveAsset = await upload(live);
    await until(() => hitsOn('/assets').some((h) => bodyOf(h).data.id === liveAsset) && hitsOn('/assets').some((h) => bodyOf(h).data.id === testAsset), 'both asset.ready events', 30_000);
    for (const [id, livemode] of [[testAsset, false], [liveAsset, true]] as const) {
      const hit = hitsOn('/assets').find((h) => bodyOf(h).data.id === id)!;
      expect([bodyOf(hit).type, bodyOf(hit).livemode, hit.headers['x-service-livemode']]).toEqual(['asset.ready', livemode, String(livemode)]);
      expect(verify(hook.secret, hit)).toBe(true);
    }
    expect((await test('GET', `/v1/assets/${liveAsset}`)).json().data.mode).toBe('live');
    expect((await test('GET', `/v1/assets/${testAsset}`)).json().data.mode).toBe('test');

    refusedLiveMode(await test('DELETE', `/v1/assets/${liveAsset}`));
    refusedLiveMode(await as(ownerTest)('DELETE', `/v1/assets/${liveAsset}`));
    expect((await live('GET', `/v1/assets/${liveAsset}`)).json().data.status).toBe('ready');
    expect((await test('DELETE', '/v1/assets/ast_nope')).json().code).toBe('ASSET_NOT_FOUND');
    expect((await test('DELETE', `/v1/assets/${testAsset}`)).statusCode).toBe(200);
    expect((await live('DELETE', `/v1/assets/${liveAsset}`)).statusCode).toBe(200);
    expect((await live('GET', `/v1/assets/${liveAsset}`)).statusCode).toBe(404);
  });

  it('GET /v1/renders/events: a test key\'s or test session\'s stream carries test events only (settle events, progress, the Last-Event-ID replay); a live key\'s carries both, each with livemode', async () => {
    const open = async (headers: Record<string, string>) => {
      const s = await new Stream().open(`${apiBase}/v1/renders/events`, headers);
      streams.push(s);
      expect(s.status).toBe(200);
      return s;
    };
    const byTestKey = await open({ 'x-api-key': ws.testKey });
    const byTestSession = await open(ownerTest);
    const byLiveKey = await open({ 'x-api-key': ws.liveKey });
    const liveRender = await renderStill(live, 'stream live');
    const testRender = await renderStill(test, 'stream test');
    // Progress figures of running renders (a video worker's), live first.
    expect(await services.get(RenderFeed).progress(ws.workspaceId, 'rnd_liveprogress', 'live', 0.4)).toBe(true);
    expect(await services.get(RenderFeed).progress(ws.workspaceId, 'rnd_testprogress', 'test', 0.6)).toBe(true);

    for (const s of [byTestKey, byTestSession]) {
      await until(() => s.about(testRender).length > 0 && s.about('rnd_testprogress').length > 0, 'the test render\'s events', 20_000);
      expect(s.about(liveRender)).toEqual([]);
      expect(s.about('rnd_liveprogress')).toEqual([]);
      expect(s.about(testRender).every((e) => e.data?.livemode === false)).toBe(true);
    }
    await until(() => byLiveKey.about(liveRender).length > 0 && byLiveKey.about(testRender).length > 0 && byLiveKey.about('rnd_testprogress').length > 0, 'every event on the live stream', 20_000);
    expect(byLiveKey.about(liveRender)[0].data).toMatchObject({ type: 'render.completed', livemode: true });
    expect(byLiveKey.about(testRender)[0].data).toMatchObject({ type: 'render.completed', livemode: false });
    expect(byLiveKey.about('rnd_liveprogress')[0].data).toMatchObject({ type: 'render.progress', livemode: true });
    expect(byLiveKey.about('rnd_testprogress')[0].data).toMatchObject({ type: 'render.progress', livemode: false });

    // Resuming from before both: the test stream replays the test render's event only.
    const from = byLiveKey.events.filter((e) => e.id).at(-1)!.id!;
    const later = [await renderStill(live, 'after live'), await renderStill(test, 'after test')];
    await until(() => later.every((id) => byLiveKey.about(id).length > 0), 'the later events announced', 20_000);
    const resumed = await open({ 'x-api-key': ws.testKey, 'last-event-id': from });
    await until(() => resumed.about(later[1]).length > 0, 'the replayed test event', 10_000);
    expect(resumed.about(later[0])).toEqual([]);
    expect(resumed.events.every((e) => e.data?.livemode === false)).toBe(true);
  });

  it('Last-Event-ID: an event replayed from the outbox is sent once, even when its announcement arrives after the replay (the dispatcher stamps, then announces)', async () => {
    // Three render events already stamped as dispatched (as the dispatcher leaves them just before it announces).
    const em = forWorkspace(orm, ws.workspaceId).fork();
    const now = Date.now();
    const rows = ['rnd_dupanchor', 'rnd_dupreplayed', 'rnd_duplater'].map((renderId, i) => em.create(OutboxEvent, {
      id: newId('event', now + i), workspaceId: ws.workspaceId, type: 'render.completed', mode: i === 1 ? 'test' : 'live', data: { id: renderId, status: 'done' },
      target: null, createdAt: new Date(), dispatchedAt: new Date(),
    }));
    await em.flush();
    const [anchor, replayed, later] = rows;
    const byTest = await new Stream().open(`${apiBase}/v1/renders/events`, { 'x-api-key': ws.testKey, 'last-event-id': anchor.id });
    const byLive = await new Stream().open(`${apiBase}/v1/renders/events`, { 'x-api-key': ws.liveKey, 'last-event-id': anchor.id });
    streams.push(byTest, byLive);
    await until(() => byTest.about('rnd_dupreplayed').length > 0 && byLive.about('rnd_duplater').length > 0, 'the replay', 10_000);
    // The announcement of the replayed event (late), then of a new test event: the new one arrives, the replayed one not again.
    await services.get(RenderFeed).announce([replayed]);
    const fresh = { ...replayed, id: newId('event', now + 10), data: { id: 'rnd_dupfresh', status: 'done' } };
    await services.get(RenderFeed).announce([fresh]);
    await until(() => byTest.about('rnd_dupfresh').length > 0 && byLive.about('rnd_dupfresh').length > 0, 'the fresh announcement', 10_000);
    expect(byTest.events.filter((e) => e.id).map((e) => e.data?.data.id)).toEqual(['rnd_dupreplayed', 'rnd_dupfresh']);
    expect(byLive.events.filter((e) => e.id).map((e) => e.data?.data.id)).toEqual(['rnd_dupreplayed', 'rnd_duplater', 'rnd_dupfresh']);
    expect(later.mode).toBe('live');
  });

  it('openapi.json shows livemode, mode and modes', () => {
    const doc = JSON.parse(readFileSync('openapi.json', 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[]; items?: { enum?: string[] } }> }> } };
    const s = doc.components.schemas;
    expect(s.WebhookEndpointDto.properties.mode.enum).toEqual(['live', 'test']);
    expect(s.WebhookEndpointDto.properties.modes.items?.enum).toEqual(['live', 'test']);
    expect(s.CreateWebhookDto.properties.modes.items?.enum).toEqual(['live', 'test']);
    expect(s.UpdateWebhookDto.properties.modes).toBeDefined();
    expect(s.DeliveryDto.properties.mode.enum).toEqual(['live', 'test']);
    expect(s.RenderEventDto.properties.livemode).toBeDefined();
    expect(s.AssetDto.properties.mode.enum).toEqual(['live', 'test']);
    expect(s.TranscriptionDto.properties.mode.enum).toEqual(['live', 'test']);
  });
});
