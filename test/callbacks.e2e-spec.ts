import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { forWorkspace } from '#libs/db';
import { WebhookEndpoint } from '#libs/webhooks';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { lastCode, startApi, type TestApi } from './harness.js';
import { until as poll } from './render-helpers.js';

// Contract §4.1 (callback), §6 (payload, signature, retries); decisions.md "Webhooks" (render
// callback, workspace default callback URL, callback secret created with the workspace, rotatable).

interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** §6 signature check, written from the contract: HMAC-SHA256(secret, `${timestamp}.${raw body}`). */
function signedBy(secret: string, hit: Hit): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(`${hit.headers['x-service-timestamp']}.`).update(hit.body).digest('hex')}`;
  const got = String(hit.headers['x-service-signature']);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

/**
 * The waits between a delivery's 5 attempts (WEBHOOK_RETRY_DELAYS_MS, development only): the retry test
 * sees all 5 in about 3 s instead of §6's 30 s (the schedule itself is test/webhooks.e2e-spec.ts's subject).
 * After the second attempt a second at least passes before each next one: time for the test to raise the
 * failure streak before the last attempt fails.
 */
const RETRY_DELAYS = '100,1000,1000,1000';

const still = { timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 20 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 64, height: 64 } } };

describe('render callbacks (issue 7)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let receiver: Server;
  let base: string;
  let key: string;
  let callbackSecret: string;
  let token: string;
  let workspaceId: string;
  const hits: Hit[] = [];

  const hitsOn = (path: string) => hits.filter((h) => h.path === path);
  const until = <T>(fn: () => T | undefined | false, ms = 20_000) => poll(fn, 'the callback receiver', ms, 50);
  const render = (body: Record<string, unknown>) =>
    api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': key }, payload: { edit: still, ...body } });
  const org = (method: 'GET' | 'PATCH' | 'POST', url: string, payload?: unknown) =>
    api.app.inject({ method, url: `/api/organization${url}`, headers: { authorization: `Bearer ${token}`, 'x-service-org': workspaceId }, ...(payload === undefined ? {} : { payload: payload as object }) });

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hits.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(req.url === '/broken' ? 500 : 200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    api = await startApi({ WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS });
    worker = await createWorkerApp(api.config);
    const created = (await api.cli('workspace:create', '--name', 'Callbacks', '--plan', 'pro')).json as { workspaceId: string; liveKey: string; callbackSecret: string };
    ({ workspaceId, liveKey: key, callbackSecret } = created);
    await api.cli('user:create', '--phone', '+4915100000088', '--workspace', workspaceId, '--role', 'owner');
    await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone: '+4915100000088' } });
    const code = await lastCode(api, '+4915100000088');
    token = (await api.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { phone: '+4915100000088', otp: code } })).json().data.token;
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
    receiver.closeAllConnections();
    receiver.close();
  });

  it("a render's callback receives its settle event: the default payload, signed with the workspace's callback secret", async () => {
    const res = await render({ callback: `${base}/mine` });
    expect(res.statusCode).toBe(200);
    const id = res.json().data.id as string;
    const hit = await until(() => hitsOn('/mine')[0]);
    expect(hit.headers['x-service-event']).toBe('render.completed');
    expect(hit.headers['x-service-attempt']).toBe('1');
    expect(signedBy(callbackSecret, hit)).toBe(true);
    const body = JSON.parse(hit.body.toString());
    expect(body).toMatchObject({ type: 'render.completed', data: { id, status: 'done', kind: 'image', url: res.json().data.url, credits: 1 } });
    // Callback targets are not webhook endpoints of the workspace.
    const listed = await api.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: { 'x-api-key': key } });
    expect(listed.json().pagination.total).toBe(0);
  });

  it('a failed render notifies its callback with render.failed', async () => {
    const res = await render({ callback: `${base}/failed`, edit: { ...still, timeline: { tracks: [{ clips: [{ asset: { type: 'html', html: '<p/>', width: 10, height: 10 }, start: 0, length: 1 }] }] } } });
    expect(res.statusCode).toBe(422);
    const hit = await until(() => hitsOn('/failed')[0]);
    expect(JSON.parse(hit.body.toString())).toMatchObject({ type: 'render.failed', data: { id: res.json().data.id, status: 'failed', error: { code: 'UNSUPPORTED_ASSET' } } });
  });

  it('the workspace default callback receives renders that name none; a render callback overrides it', async () => {
    const set = await org('PATCH', '/callback', { defaultCallbackUrl: `${base}/default` });
    expect(set.statusCode).toBe(200);
    expect(set.json().data).toEqual({ defaultCallbackUrl: `${base}/default`, secretHint: `whsec_...${callbackSecret.slice(-4)}` });
    const plain = (await render({})).json().data.id as string;
    const own = (await render({ callback: `${base}/override` })).json().data.id as string;
    const atDefault = await until(() => hitsOn('/default').find((h) => JSON.parse(h.body.toString()).data.id === plain));
    expect(signedBy(callbackSecret, atDefault)).toBe(true);
    await until(() => hitsOn('/override').find((h) => JSON.parse(h.body.toString()).data.id === own));
    await new Promise((r) => setTimeout(r, 500));
    expect(hitsOn('/default').some((h) => JSON.parse(h.body.toString()).data.id === own)).toBe(false);
    // §7, decisions.md "Envelope and errors": a URL the outbound rules refuse, or none, is 422 by path.
    const ftp = await org('PATCH', '/callback', { defaultCallbackUrl: 'ftp://nope' });
    expect([ftp.statusCode, ftp.json().code, ftp.json().errors]).toEqual([422, 'VALIDATION_FAILED', { defaultCallbackUrl: ['must use http or https'] }]);
    const missing = await org('PATCH', '/callback', { defaultCallback: `${base}/x` });
    expect([missing.statusCode, Object.keys(missing.json().errors).sort()]).toEqual([422, ['defaultCallback', 'defaultCallbackUrl']]);
    expect((await org('PATCH', '/callback', { defaultCallbackUrl: null })).json().data.defaultCallbackUrl).toBeNull();
  });

  it('rotating the callback secret signs the next callbacks with the new secret, shown once', async () => {
    const rotated = await org('POST', '/callback/rotate-secret');
    expect(rotated.statusCode).toBe(200);
    const secret = rotated.json().data.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(callbackSecret);
    expect((await org('GET', '/callback')).json().data).toEqual({ defaultCallbackUrl: null, secretHint: `whsec_...${secret.slice(-4)}` });
    const id = (await render({ callback: `${base}/mine` })).json().data.id as string;
    const hit = await until(() => hitsOn('/mine').find((h) => JSON.parse(h.body.toString()).data.id === id));
    expect(signedBy(secret, hit)).toBe(true);
    expect(signedBy(callbackSecret, hit)).toBe(false);
  });

  it('callbacks retry like any delivery, and a failing callback URL is never disabled', async () => {
    await render({ callback: `${base}/broken` });
    const retried = await until(() => (hitsOn('/broken').length >= 2 ? hitsOn('/broken') : undefined), 15_000);
    expect(retried.map((h) => h.headers['x-service-attempt']).slice(0, 2)).toEqual(['1', '2']);
    // Far past the endpoint limit of 20 consecutive failures, the callback target stays active.
    const orm = await openAppDatabase(api.config.database, { migrate: false });
    await forWorkspace(orm, workspaceId).nativeUpdate(WebhookEndpoint, { kind: 'callback', url: `${base}/broken` }, { consecutiveFailures: 40 });
    // Raised before the last attempt was sent, so a failure is counted on top of the 40 below.
    expect(hitsOn('/broken').length).toBeLessThan(5);
    await until(() => hitsOn('/broken').length >= 5, 40_000);
    await new Promise((r) => setTimeout(r, 300));
    const target = await forWorkspace(orm, workspaceId).findOneOrFail(WebhookEndpoint, { kind: 'callback', url: `${base}/broken` });
    expect(target.isActive).toBe(true);
    expect(target.consecutiveFailures).toBeGreaterThanOrEqual(40);
    await orm.close(true);
  }, 60_000);

  it('§7: a callback URL refused by the outbound rules is 422 VALIDATION_FAILED before anything is rendered', async () => {
    const res = await render({ callback: 'not a url' });
    expect([res.statusCode, res.json().code, res.json().errors]).toEqual([422, 'VALIDATION_FAILED', { callback: ['must be an absolute URL'] }]);
  });
});
