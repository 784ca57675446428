import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Redis } from 'ioredis';
import { RedisKeys } from '#libs/redis';
import { secondApi, startApi, type TestApi } from './harness.js';
import { ProbeModule } from './probe.module.js';

// Contract §5 (API keys), §7 (auth rows and rule 2: the order of failures), §8 (rate), decisions.md (CLI).

type Workspace = { workspaceId: string; liveKey: string; testKey: string; callbackSecret: string };

describe('API keys: authentication in the §7 order', () => {
  let api: TestApi;
  let other: NestFastifyApplication;
  let ws: Workspace;

  const get = (app: NestFastifyApplication, url: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
    app.inject({ method: 'GET', url: `/api${url}`, headers, remoteAddress });

  async function newWorkspace(plan = 'pro'): Promise<Workspace> {
    const res = await api.cli('workspace:create', '--name', 'Acme', '--plan', plan);
    expect(res.code).toBe(0);
    return res.json as unknown as Workspace;
  }

  async function newKey(...flags: string[]): Promise<string> {
    const res = await api.cli('key:create', '--workspace', ws.workspaceId, ...flags);
    expect(res).toMatchObject({ code: 0 });
    return (res.json as { key: string }).key;
  }

  beforeAll(async () => {
    api = await startApi({}, [ProbeModule]);
    other = await secondApi(api, [ProbeModule]);
    ws = await newWorkspace();
  });
  afterAll(async () => {
    await other.close();
    await api.close();
  });

  it('workspace:create prints one JSON object with live and test keys and a callback secret', () => {
    expect(ws.workspaceId).toMatch(/^org_[0-9A-Z]{26}$/);
    expect(ws.liveKey).toMatch(/^pk_live_[0-9A-Za-z]{33}$/);
    expect(ws.testKey).toMatch(/^pk_test_[0-9A-Za-z]{33}$/);
    expect(ws.callbackSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });

  it('accepts x-api-key and Authorization: Bearer alike', async () => {
    const a = await get(api.app, '/v1/keys/current', { 'x-api-key': ws.liveKey });
    const b = await get(api.app, '/v1/keys/current', { authorization: `Bearer ${ws.liveKey}` });
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(a.json().data).toMatchObject({ mode: 'live', workspace: { id: ws.workspaceId, plan: 'pro' } });
    expect(a.json().data.scopes).toHaveLength(10);
    expect(a.json().data.hint).toBe(`${ws.liveKey.slice(0, 8)}…${ws.liveKey.slice(-4)}`);
    expect(b.json().data.id).toBe(a.json().data.id);
  });

  it('stores keys only as a keyed hash', async () => {
    const orm = (await import('#libs/app')).openAppDatabase;
    const db = await orm(api.config.database, { migrate: false });
    const rows = await db.em.getConnection().execute('select * from api_key');
    await db.close(true);
    const dump = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(dump).not.toContain(ws.liveKey.slice(8));
    expect(dump).not.toContain(ws.testKey.slice(8));
    expect(dump).not.toContain(ws.callbackSecret);
  });

  it('401 NO_API_KEY when no key is sent (also for a non-bearer Authorization)', async () => {
    for (const headers of <Record<string, string>[]>[{}, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, { 'x-api-key': '' }]) {
      const res = await get(api.app, '/v1/keys/current', headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ success: false, code: 'NO_API_KEY', message: expect.any(String), data: null });
    }
  });

  it('a bearer value that is not a key is read as a session (issue 18): 401 INVALID_TOKEN; the key-only /v1/keys/current answers NO_API_KEY', async () => {
    const res = await get(api.app, '/v1/keys/current', { authorization: 'Bearer eyJhbGciOi.x.y' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'NO_API_KEY', message: expect.stringContaining('session token') });
    const render = await get(api.app, '/v1/render', { authorization: 'Bearer eyJhbGciOi.x.y', 'x-service-org': 'ws_x' });
    expect([render.statusCode, render.json().code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('401 INVALID_API_KEY for unknown and malformed keys', async () => {
    const unknown = `pk_live_${'A'.repeat(33)}`;
    for (const headers of <Record<string, string>[]>[{ 'x-api-key': unknown }, { 'x-api-key': 'pk_live_short' }, { 'x-api-key': 'hello' }]) {
      const res = await get(api.app, '/v1/keys/current', headers);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('INVALID_API_KEY');
    }
  });

  it('403 INSUFFICIENT_SCOPE when the key lacks a scope the route declares', async () => {
    const key = await newKey('--scopes', 'renders:read,webhooks:read');
    expect((await get(api.app, '/v1/probe/renders', { 'x-api-key': key })).statusCode).toBe(200);
    const res = await get(api.app, '/v1/probe/webhooks', { 'x-api-key': key });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('INSUFFICIENT_SCOPE');
    expect(res.json().message).toContain('webhooks:write');
  });

  it('refuses unknown scopes and bad IP entries at creation', async () => {
    const bad = await api.cli('key:create', '--workspace', ws.workspaceId, '--scopes', 'renders:delete');
    expect(bad.code).toBe(1);
    // decisions.md "Envelope and errors": a value that breaks a rule is VALIDATION_FAILED (422 over HTTP), named by field.
    expect(bad.json).toEqual({ error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/^The request is not valid: scopes: .*renders:delete/) } });
    const ip = await api.cli('key:create', '--workspace', ws.workspaceId, '--ip', '10.0.0.0/40');
    expect(ip.json).toMatchObject({ error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('ipAllowlist') } });
  });

  it('403 IP_NOT_ALLOWED outside the allowlist; IPv4, IPv6 and IPv4-mapped IPv6 all match', async () => {
    const key = await newKey('--ip', '203.0.113.0/24,2001:db8::/32');
    const call = (addr: string) => get(api.app, '/v1/keys/current', { 'x-api-key': key }, addr);
    expect((await call('203.0.113.77')).statusCode).toBe(200);
    expect((await call('::ffff:203.0.113.77')).statusCode).toBe(200);
    expect((await call('2001:db8:1::5')).statusCode).toBe(200);
    const refused = await call('198.51.100.1');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('IP_NOT_ALLOWED');
    expect((await call('2001:db9::1')).json().code).toBe('IP_NOT_ALLOWED');
    // X-Forwarded-For is not believed from an untrusted peer.
    const spoofed = await get(api.app, '/v1/keys/current', { 'x-api-key': key, 'x-forwarded-for': '203.0.113.1' }, '198.51.100.1');
    expect(spoofed.json().code).toBe('IP_NOT_ALLOWED');
  });

  it('applies the failures in order: unknown/revoked → scope → IP → suspension', async () => {
    const narrow = await newKey('--scopes', 'templates:read', '--ip', '203.0.113.0/24');
    const outside = '198.51.100.1';
    const inside = '203.0.113.5';
    await api.cli('workspace:suspend', '--workspace', ws.workspaceId);
    try {
      // suspended + wrong IP + missing scope → scope first
      expect((await get(api.app, '/v1/probe/renders', { 'x-api-key': narrow }, outside)).json().code).toBe('INSUFFICIENT_SCOPE');
      // suspended + wrong IP → IP
      expect((await get(api.app, '/v1/keys/current', { 'x-api-key': narrow }, outside)).json().code).toBe('IP_NOT_ALLOWED');
      // suspended only → suspension
      const suspended = await get(api.app, '/v1/keys/current', { 'x-api-key': narrow }, inside);
      expect(suspended.statusCode).toBe(403);
      expect(suspended.json().code).toBe('ORG_SUSPENDED');
      // revoked beats everything after it
      const revokedKey = await newKey('--scopes', 'templates:read', '--ip', '203.0.113.0/24');
      const id = (await get(api.app, '/v1/keys/current', { 'x-api-key': ws.liveKey })).json();
      expect(id.code).toBe('ORG_SUSPENDED');
      const list = await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'test');
      const keyId = (list.json as { id: string }).id;
      const testKey = (list.json as { key: string }).key;
      await api.cli('key:revoke', '--id', keyId);
      expect((await get(api.app, '/v1/probe/renders', { 'x-api-key': testKey }, outside)).json().code).toBe('INVALID_API_KEY');
      expect((await get(api.app, '/v1/probe/renders', { 'x-api-key': revokedKey }, outside)).json().code).toBe('INSUFFICIENT_SCOPE');
    } finally {
      await api.cli('workspace:unsuspend', '--workspace', ws.workspaceId);
    }
    expect((await get(api.app, '/v1/keys/current', { 'x-api-key': narrow }, inside)).statusCode).toBe(200);
  });

  it('suspension and unsuspension take effect on the very next request in every API process', async () => {
    for (const app of [api.app, other]) expect((await get(app, '/v1/keys/current', { 'x-api-key': ws.testKey })).statusCode).toBe(200);
    await api.cli('workspace:suspend', '--workspace', ws.workspaceId);
    for (const app of [api.app, other]) expect((await get(app, '/v1/keys/current', { 'x-api-key': ws.testKey })).json().code).toBe('ORG_SUSPENDED');
    await api.cli('workspace:unsuspend', '--workspace', ws.workspaceId);
    for (const app of [api.app, other]) expect((await get(app, '/v1/keys/current', { 'x-api-key': ws.testKey })).statusCode).toBe(200);
  });

  it('revocation is effective on the very next request in every API process', async () => {
    const created = await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'test');
    const { id, key } = created.json as { id: string; key: string };
    // Both processes have the key cached.
    for (const app of [api.app, other]) expect((await get(app, '/v1/keys/current', { 'x-api-key': key })).statusCode).toBe(200);
    expect((await api.cli('key:revoke', '--id', id)).json).toEqual({ id, revoked: true });
    for (const app of [api.app, other]) {
      const res = await get(app, '/v1/keys/current', { 'x-api-key': key });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('INVALID_API_KEY');
    }
  });

  it('an expired key stops working at its expiry', async () => {
    const past = await newKey('--mode', 'test', '--expires', new Date(Date.now() - 1000).toISOString());
    expect((await get(api.app, '/v1/keys/current', { 'x-api-key': past })).json().code).toBe('INVALID_API_KEY');
    // Expiring 6 s from now: the CLI process that creates it takes ~1-3 s on a busy machine.
    const expiresAt = Date.now() + 6000;
    const soon = await newKey('--mode', 'test', '--expires', new Date(expiresAt).toISOString());
    expect((await get(api.app, '/v1/keys/current', { 'x-api-key': soon })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, expiresAt - Date.now() + 100));
    const res = await get(api.app, '/v1/keys/current', { 'x-api-key': soon });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/expired/);
  });

  it('enforces the plan\'s live-key quota; test keys do not count', async () => {
    const free = await newWorkspace('free'); // free allows 2 live keys; workspace:create made one
    const second = await api.cli('key:create', '--workspace', free.workspaceId);
    expect(second.code).toBe(0);
    const third = await api.cli('key:create', '--workspace', free.workspaceId);
    expect(third.json).toMatchObject({ error: { code: 'LIMIT_APIKEYS' } });
    expect((await api.cli('key:create', '--workspace', free.workspaceId, '--mode', 'test')).code).toBe(0);
  });

  it('402 with the plan feature code on a route needing a feature the plan lacks', async () => {
    const free = await newWorkspace('free');
    const res = await get(api.app, '/v1/probe/workflows', { 'x-api-key': free.liveKey });
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('FEATURE_WORKFLOWSENABLED');
    expect((await get(api.app, '/v1/probe/workflows', { 'x-api-key': ws.liveKey })).statusCode).toBe(200);
  });
});

describe('rate limits and the monthly allowance (§8, decisions.md "Plans")', () => {
  let api: TestApi;
  let other: NestFastifyApplication;
  beforeAll(async () => {
    api = await startApi();
    other = await secondApi(api);
  });
  afterAll(async () => {
    await other.close();
    await api.close();
  });

  /** Keeps a burst inside one minute window. */
  async function freshWindow(): Promise<void> {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 8_000) await new Promise((r) => setTimeout(r, left + 50));
  }

  const call = (app: NestFastifyApplication, key: string) => app.inject({ method: 'GET', url: '/api/v1/keys/current', headers: { 'x-api-key': key } });

  it('free: 20/min per workspace shared by every API process, then 429 with Retry-After and X-RateLimit-*', async () => {
    const { json } = await api.cli('workspace:create', '--name', 'Free', '--plan', 'free');
    const { liveKey, workspaceId } = json as { liveKey: string; workspaceId: string };
    const second = ((await api.cli('key:create', '--workspace', workspaceId)).json as { key: string }).key;
    await freshWindow();
    const remaining: number[] = [];
    for (let i = 0; i < 20; i++) {
      // Alternate processes and keys of the same workspace: one budget.
      const res = await call(i % 2 ? other : api.app, i % 3 ? liveKey : second);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('20');
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
    const refused = await call(other, liveKey);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED', data: null });
    const retry = Number(refused.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
  });

  it('a concurrent burst is counted exactly: 20 pass with distinct remaining counts, the rest get 429', async () => {
    const { json } = await api.cli('workspace:create', '--name', 'Burst', '--plan', 'free');
    const { liveKey } = json as { liveKey: string };
    await freshWindow();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call(i % 2 ? other : api.app, liveKey)));
    const passed = results.filter((r) => r.statusCode === 200);
    expect(passed).toHaveLength(20);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(10);
    expect(passed.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('test keys get half the plan rate, in their own budget', async () => {
    const { json } = await api.cli('workspace:create', '--name', 'Free2', '--plan', 'free');
    const { liveKey, testKey } = json as { liveKey: string; testKey: string };
    await freshWindow();
    for (let i = 0; i < 10; i++) expect((await call(api.app, testKey)).headers['x-ratelimit-limit']).toBe('10');
    expect((await call(api.app, testKey)).statusCode).toBe(429);
    expect((await call(api.app, liveKey)).statusCode).toBe(200);
  });

  it('a plan change applies to the next request', async () => {
    const { json } = await api.cli('workspace:create', '--name', 'Grow', '--plan', 'free');
    const { liveKey, workspaceId } = json as { liveKey: string; workspaceId: string };
    expect((await call(api.app, liveKey)).headers['x-ratelimit-limit']).toBe('20');
    expect((await api.cli('workspace:plan', '--workspace', workspaceId, '--plan', 'enterprise')).json).toEqual({ workspaceId, plan: 'enterprise' });
    expect((await call(api.app, liveKey)).headers['x-ratelimit-limit']).toBe('1200');
    expect((await call(other, liveKey)).headers['x-ratelimit-limit']).toBe('1200');
    expect((await api.cli('workspace:plan', '--workspace', workspaceId, '--plan', 'gold')).json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
  });

  it('402 LIMIT_APIREQUESTS once the month\'s allowance is used up', async () => {
    const { json } = await api.cli('workspace:create', '--name', 'Busy', '--plan', 'free');
    const { liveKey, workspaceId } = json as { liveKey: string; workspaceId: string };
    expect((await call(api.app, liveKey)).statusCode).toBe(200);
    const redis = new Redis(api.config.redisUrl);
    const now = new Date();
    const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const key = new RedisKeys(api.config.redisPrefix).monthlyRequests(workspaceId, month);
    expect(await redis.get(key)).toBe('1');
    await redis.set(key, '10000', 'KEEPTTL'); // the free plan's whole allowance
    redis.disconnect();
    const res = await call(api.app, liveKey);
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('LIMIT_APIREQUESTS');
  });
});
