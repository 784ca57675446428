import type { INestApplicationContext } from '@nestjs/common';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { lastCode, signIn, startApi, userSession, type TestApi } from './harness.js';

// Issue 18 (the dashboard's server side): sessions on the /v1 routes; decisions.md "Sessions (dashboard)".
// The route walk of test/routes.e2e-spec.ts covers every key route; this file what a dashboard user sees.

const still = { timeline: { background: '#1d3557', tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi', font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 160, height: 100 } } };

describe('dashboard sessions on /v1 routes', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let ws: { workspaceId: string; liveKey: string };
  let owner: string;
  let member: string;

  const as = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'x-service-org': ws.workspaceId, ...extra });
  const credits = async () => (await api.app.inject({ method: 'GET', url: '/api/credits', headers: as(owner) })).json().data.credits.image as { available: number; used: number };

  beforeAll(async () => {
    api = await startApi();
    worker = await createWorkerApp(api.config);
    ws = (await api.cli('workspace:create', '--name', 'Dash', '--plan', 'pro')).json as typeof ws;
    owner = await userSession(api, ws.workspaceId, '+4915100004001', 'owner');
    member = await userSession(api, ws.workspaceId, '+4915100004002', 'member');
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await api.close();
  });

  it('a member renders a still live (credits spent) or with X-Service-Mode: test (free, watermarked), and sees it in the list', async () => {
    const before = await credits();
    const live = await api.app.inject({ method: 'POST', url: '/api/v1/render', headers: as(member), payload: { edit: still } });
    expect(live.statusCode).toBe(200);
    expect(live.json().data).toMatchObject({ status: 'done', mode: 'live', credits: 1, watermarked: false });
    const preview = await api.app.inject({ method: 'POST', url: '/api/v1/render', headers: as(member, { 'x-service-mode': 'test' }), payload: { edit: still } });
    expect(preview.statusCode).toBe(200);
    expect(preview.json().data).toMatchObject({ status: 'done', mode: 'test', credits: 0, watermarked: true });
    const after = await credits();
    expect(after.used - before.used).toBe(1);
    // The same renders through the workspace's API key: one workspace, whoever calls.
    const listed = await api.app.inject({ method: 'GET', url: '/api/v1/render', headers: { 'x-api-key': ws.liveKey } });
    expect(listed.json().data.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([live.json().data.id, preview.json().data.id]));
    // Sessions are not metered against the plan's rate: no X-RateLimit headers (decisions.md).
    expect(live.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('X-Service-Mode other than live or test is 422 VALIDATION_FAILED at headers.x-service-mode', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/render', headers: as(owner, { 'x-service-mode': 'sandbox' }) });
    expect([res.statusCode, res.json().code, res.json().errors]).toEqual([422, 'VALIDATION_FAILED', { 'headers.x-service-mode': ['must be live or test'] }]);
  });

  it('a member may not change webhooks or connected accounts: 403 ROLE_REQUIRED; the owner may', async () => {
    const hook = { url: 'http://127.0.0.1:9/hook', events: ['render.completed'] };
    const denied = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: as(member), payload: hook });
    expect([denied.statusCode, denied.json().code]).toEqual([403, 'ROLE_REQUIRED']);
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: as(member) })).statusCode).toBe(200);
    const created = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: as(owner), payload: hook });
    expect(created.statusCode).toBe(201);
    // The §4.7 twins answer the same: members list, owners change.
    const twin = await api.app.inject({ method: 'POST', url: '/api/organization/webhooks', headers: as(member), payload: hook });
    expect([twin.statusCode, twin.json().code]).toEqual([403, 'ROLE_REQUIRED']);
    const id = created.json().data.id as string;
    for (const [method, url] of [['PATCH', `/api/organization/webhooks/${id}`], ['POST', `/api/organization/webhooks/${id}/test`], ['DELETE', `/api/organization/webhooks/${id}`]] as const) {
      expect((await api.app.inject({ method, url, headers: as(member), payload: {} })).json().code).toBe('ROLE_REQUIRED');
    }
    expect((await api.app.inject({ method: 'GET', url: '/api/organization/webhooks', headers: as(member) })).json().data.map((w: { id: string }) => w.id)).toEqual([id]);
    // The dashboard's delivery log and re-enable are the /v1 routes (no twins): a member reads the log, the owner re-enables.
    expect((await api.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries`, headers: as(member) })).statusCode).toBe(200);
    const reenabled = await api.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, headers: as(owner), payload: { isActive: true } });
    expect([reenabled.statusCode, reenabled.json().data.isActive]).toEqual([200, true]);
  });

  it('issue 29 "Run the team": an owner invites a member by phone (they sign in with a code), changes a role, and the last owner stays one; a member may do none of it', async () => {
    const members = async () => (await api.app.inject({ method: 'GET', url: '/api/organization/members', headers: as(owner) })).json().data as { userId: string; phone: string; role: string; name: string | null }[];
    const invite = (token: string, payload: Record<string, unknown>) => api.app.inject({ method: 'POST', url: '/api/organization/members', headers: as(token), payload });
    const setRole = (token: string, userId: string, role: string) => api.app.inject({ method: 'PATCH', url: `/api/organization/members/${userId}`, headers: as(token), payload: { role } });
    const phone = '+4915100004010';
    expect((await invite(member, { phone })).json().code).toBe('ROLE_REQUIRED');
    const bad = await invite(owner, { phone: '12', role: 'admin' });
    expect([bad.statusCode, bad.json().code, Object.keys(bad.json().errors).sort()]).toEqual([422, 'VALIDATION_FAILED', ['role']]);
    const badPhone = await invite(owner, { phone: 'not a phone' });
    expect([badPhone.statusCode, Object.keys(badPhone.json().errors)]).toEqual([422, ['phone']]);
    const made = await invite(owner, { phone, name: 'Grace' });
    expect(made.statusCode).toBe(201);
    const invited = made.json().data as { userId: string; phone: string; role: string; name: string };
    expect(invited).toMatchObject({ role: 'member', name: 'Grace', phone: '+49151…010' });
    expect((await members()).map((m) => m.userId)).toContain(invited.userId);
    const twice = await invite(owner, { phone: '+49 151 00004010' });
    expect([twice.statusCode, twice.json().errors]).toEqual([422, { phone: ['is already a member of this workspace'] }]);
    // The invited number signs in with a code as usual and finds the workspace.
    const token = await signIn(api, phone);
    const theirs = (await api.app.inject({ method: 'GET', url: '/api/auth/memberships', headers: { authorization: `Bearer ${token}` } })).json().data as { id: string; role: string }[];
    expect(theirs).toEqual([expect.objectContaining({ id: ws.workspaceId, role: 'member' })]);
    expect((await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: as(token), payload: { url: 'http://127.0.0.1:9/h', events: ['render.completed'] } })).json().code).toBe('ROLE_REQUIRED');
    // Made an owner: from their next request they may what owners may.
    expect((await setRole(member, invited.userId, 'owner')).json().code).toBe('ROLE_REQUIRED');
    const promoted = await setRole(owner, invited.userId, 'owner');
    expect([promoted.statusCode, promoted.json().data.role]).toEqual([200, 'owner']);
    expect((await invite(token, { phone: '+4915100004011' })).statusCode).toBe(201);
    expect((await setRole(owner, 'usr_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'member')).json().code).toBe('NOT_FOUND');
    // Back to member; then the last owner cannot be made a member.
    expect((await setRole(owner, invited.userId, 'member')).statusCode).toBe(200);
    const owners = (await members()).filter((m) => m.role === 'owner');
    expect(owners).toHaveLength(1);
    const last = await setRole(owner, owners[0]!.userId, 'member');
    expect([last.statusCode, last.json().code, Object.keys(last.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['role']]);
  });

  it('a session is counted against its account: beyond 600 requests a minute, 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    const token = await userSession(api, ws.workspaceId, '+4915100004003', 'member');
    const counted: number[] = [];
    for (let batch = 0; batch < 6; batch++) {
      counted.push(...(await Promise.all(Array.from({ length: 100 }, () => api.app.inject({ method: 'GET', url: '/api/v1/templates?limit=1', headers: as(token) })))).map((r) => r.statusCode));
    }
    expect(counted.filter((s) => s !== 200)).toEqual([]);
    const over = await api.app.inject({ method: 'GET', url: '/api/organization/members', headers: as(token) });
    expect([over.statusCode, over.json().code]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    // Another account of the same workspace is not held back.
    expect((await api.app.inject({ method: 'GET', url: '/api/organization/members', headers: as(owner) })).statusCode).toBe(200);
  });

  it('GET /auth/memberships lists the user\'s workspaces with role, plan and suspension, without X-Service-Org; nobody else\'s', async () => {
    const second = (await api.cli('workspace:create', '--name', 'Side project', '--plan', 'starter')).json as { workspaceId: string };
    const stranger = (await api.cli('workspace:create', '--name', 'Not mine')).json as { workspaceId: string };
    expect((await api.cli('user:create', '--phone', '+4915100004002', '--workspace', second.workspaceId, '--role', 'owner')).code).toBe(0);
    expect((await api.cli('user:create', '--phone', '+4915100004009', '--workspace', stranger.workspaceId, '--role', 'owner')).code).toBe(0);
    expect((await api.cli('workspace:suspend', '--workspace', second.workspaceId)).code).toBe(0);
    const res = await api.app.inject({ method: 'GET', url: '/api/auth/memberships', headers: { authorization: `Bearer ${member}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { id: ws.workspaceId, name: 'Dash', role: 'member', plan: { code: 'pro', name: 'Pro' }, suspended: false },
      { id: second.workspaceId, name: 'Side project', role: 'owner', plan: { code: 'starter', name: 'Starter' }, suspended: true },
    ]);
    // The switcher's choice is then the X-Service-Org of the other routes.
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/render', headers: { authorization: `Bearer ${member}`, 'x-service-org': second.workspaceId } })).json().code).toBe('ORG_SUSPENDED');
    const anonymous = await api.app.inject({ method: 'GET', url: '/api/auth/memberships' });
    expect([anonymous.statusCode, anonymous.json().code]).toEqual([401, 'SESSION_REQUIRED']);
    expect((await api.app.inject({ method: 'GET', url: '/api/auth/memberships', headers: { 'x-api-key': ws.liveKey } })).json().code).toBe('SESSION_REQUIRED');
  });

  describe('the refresh token in an HttpOnly cookie (X-Service-Client: dashboard)', () => {
    const dashboard = { 'x-service-client': 'dashboard' };
    const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie'] ?? '');
    const valueOf = (setCookie: string) => /^service_refresh=([^;]*)/.exec(setCookie)?.[1] ?? null;
    const refresh = (headers: Record<string, string>, payload: object = {}) => api.app.inject({ method: 'POST', url: '/api/auth/refresh', headers, payload });
    let cookie = '';

    it('verify-otp sets it (HttpOnly, SameSite=Strict, on /api/auth, 60 days; not Secure in development over http) and leaves it out of the body', async () => {
      const phone = '+4915100004004';
      expect((await api.cli('user:create', '--phone', phone, '--workspace', ws.workspaceId)).code).toBe(0);
      await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone } });
      const otp = await lastCode(api, phone);
      const res = await api.app.inject({ method: 'POST', url: '/api/auth/verify-otp', headers: dashboard, payload: { phone, otp } });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.token.split('.')).toHaveLength(3);
      expect(res.json().data).not.toHaveProperty('refreshToken');
      const set = cookieOf(res);
      expect(set.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=5184000', 'Path=/api/auth', 'SameSite=Strict']);
      expect(valueOf(set)).toMatch(/^rt_/);
      cookie = `service_refresh=${valueOf(set)}`;
      // Without the header the answer is as before: the refresh token in the body, no cookie.
      await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone } });
      const plain = await api.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { phone, otp: await lastCode(api, phone) } });
      expect(plain.json().data.refreshToken).toMatch(/^rt_/);
      expect(plain.headers['set-cookie']).toBeUndefined();
    });

    it('refresh takes the cookie only with the header (CSRF), rotates it, and a reused cookie revokes the family', async () => {
      // The cookie alone (what a cross-site form could send) is not enough.
      const alone = await refresh({ cookie });
      expect([alone.statusCode, alone.json().code, Object.keys(alone.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['refreshToken']]);
      const noCookie = await refresh(dashboard);
      expect([noCookie.statusCode, noCookie.json().code]).toEqual([401, 'INVALID_REFRESH_TOKEN']);
      const first = await refresh({ ...dashboard, cookie: `theme=dark; ${cookie}` });
      expect(first.statusCode).toBe(200);
      expect(first.json().data).not.toHaveProperty('refreshToken');
      const rotated = `service_refresh=${valueOf(cookieOf(first))}`;
      expect(rotated).not.toBe(cookie);
      expect((await api.app.inject({ method: 'GET', url: '/api/v1/render', headers: as(first.json().data.token) })).statusCode).toBe(200);
      // Reuse of the rotated-out cookie: the whole family goes (reuse detection unchanged).
      expect((await refresh({ ...dashboard, cookie })).json().code).toBe('INVALID_REFRESH_TOKEN');
      expect((await refresh({ ...dashboard, cookie: rotated })).json().code).toBe('INVALID_REFRESH_TOKEN');
    });

    it('sign-out clears the cookie', async () => {
      const res = await api.app.inject({ method: 'POST', url: '/api/auth/sign-out', headers: { ...dashboard, authorization: `Bearer ${member}` }, payload: {} });
      expect(res.statusCode).toBe(200);
      expect(cookieOf(res)).toMatch(/^service_refresh=; Path=\/api\/auth; Max-Age=0; HttpOnly; SameSite=Strict/);
      member = await signIn(api, '+4915100004002');
    });
  });
});
