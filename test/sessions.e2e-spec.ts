import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AuthService, OtpCode, signJwt } from '#libs/auth';
import { deriveKey } from '#libs/core';
import { openAppDatabase } from '#libs/app';
import { secondApi, startApi, type TestApi } from './harness.js';

// Contract §5 "Session tokens", §4.7, §2 credit balance; decisions.md "Sessions", "Credit ledger".

type Ws = { workspaceId: string; liveKey: string };

describe('dashboard sessions', () => {
  let api: TestApi;
  let other: NestFastifyApplication;
  let a: Ws;
  let b: Ws;
  const ownerPhone = '+4915112345678';
  const memberPhone = '+4915100000001';
  const outsiderPhone = '+4915100000002';
  const burnPhone = '+4915100000003';
  let ownerCached: Promise<{ token: string; refreshToken: string; body: Record<string, unknown> }> | undefined;
  /** Sign-in codes are rate-limited per phone (5 per 15 min), so the owner's session is shared. */
  const owner = () => (ownerCached ??= signIn(ownerPhone));

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}, app = api.app) =>
    app.inject({ method: 'POST', url: `/api${url}`, payload: payload as object, headers });
  const get = (url: string, headers: Record<string, string>, app = api.app) => app.inject({ method: 'GET', url: `/api${url}`, headers });
  const as = (token: string, org: string) => ({ authorization: `Bearer ${token}`, 'x-service-org': org });

  async function signIn(phone: string): Promise<{ token: string; refreshToken: string; body: Record<string, unknown> }> {
    expect((await post('/auth/send-otp', { phone })).statusCode).toBe(200);
    await api.app.get(AuthService).sendsSettled();
    const { json } = await api.cli('otp:last', '--phone', phone);
    const res = await post('/auth/verify-otp', { phone, otp: json.code });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    return { token: data.token, refreshToken: data.refreshToken, body: data };
  }

  beforeAll(async () => {
    api = await startApi();
    other = await secondApi(api);
    a = (await api.cli('workspace:create', '--name', 'Alpha', '--plan', 'free', '--image-credits', '7')).json as unknown as Ws;
    b = (await api.cli('workspace:create', '--name', 'Beta')).json as unknown as Ws;
    expect(await api.cli('user:create', '--phone', '+49 151 1234-5678', '--workspace', a.workspaceId, '--role', 'owner')).toMatchObject({ code: 0 });
    expect((await api.cli('user:create', '--phone', memberPhone, '--workspace', a.workspaceId, '--role', 'member')).code).toBe(0);
    expect((await api.cli('user:create', '--phone', outsiderPhone, '--workspace', b.workspaceId, '--role', 'owner')).code).toBe(0);
    expect((await api.cli('user:create', '--phone', burnPhone, '--workspace', a.workspaceId)).code).toBe(0);
  });
  afterAll(async () => {
    await other.close();
    await api.close();
  });

  it('send-otp answers the same whether or not the number is known, and sends only to known ones', async () => {
    const known = await post('/auth/send-otp', { phone: '+49 (151) 123-45678' });
    const unknown = await post('/auth/send-otp', { phone: '+4915199999999' });
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.json()).toEqual(unknown.json());
    expect(known.json().data).toEqual({ sent: true, expiresInSec: 300 });
    await api.app.get(AuthService).sendsSettled();
    expect((await api.cli('otp:last', '--phone', ownerPhone)).json).toEqual({ phone: ownerPhone, code: expect.stringMatching(/^\d{6}$/) });
    expect((await api.cli('otp:last', '--phone', '+4915199999999')).json).toMatchObject({ error: { code: 'NOT_FOUND' } });
    // §7: a phone number that is not one is a value breaking a rule (422), a body that is not an object is malformed (400).
    const notAPhone = await post('/auth/send-otp', { phone: '12345' });
    expect([notAPhone.statusCode, notAPhone.json().code, Object.keys(notAPhone.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['phone']]);
    expect((await post('/auth/send-otp', { phone: 12345 })).json().code).toBe('VALIDATION_FAILED');
    expect((await post('/auth/send-otp', ['+4915199999999'])).json().code).toBe('INVALID_REQUEST');
  });

  it('verify-otp opens a session: token, refreshToken, user, organization, plan, credits; the code is single use', async () => {
    await post('/auth/send-otp', { phone: ownerPhone });
    await api.app.get(AuthService).sendsSettled();
    const { json } = await api.cli('otp:last', '--phone', ownerPhone);
    const res = await post('/auth/verify-otp', { phone: ownerPhone, otp: json.code });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data.token.split('.')).toHaveLength(3);
    expect(data.refreshToken).toMatch(/^rt_/);
    expect(data.user).toMatchObject({ id: expect.stringMatching(/^usr_/), phone: ownerPhone });
    expect(data.organization).toEqual({ id: a.workspaceId, name: 'Alpha', role: 'owner' });
    expect(data.plan).toEqual({ code: 'free', name: 'Free' });
    expect(data.credits.credits.image).toEqual({ granted: 50, topup: 7, available: 57, held: 0, used: 0 });
    const again = await post('/auth/verify-otp', { phone: ownerPhone, otp: json.code });
    expect(again.statusCode).toBe(401);
    expect(again.json().code).toBe('INVALID_OTP');
  });

  it('burns the code after 5 wrong tries', async () => {
    await post('/auth/send-otp', { phone: burnPhone });
    await api.app.get(AuthService).sendsSettled();
    const { code } = (await api.cli('otp:last', '--phone', burnPhone)).json as { code: string };
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await post('/auth/verify-otp', { phone: burnPhone, otp: wrong })).json().code).toBe('INVALID_OTP');
    const res = await post('/auth/verify-otp', { phone: burnPhone, otp: code });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('INVALID_OTP');
  });

  it('refuses an expired code', async () => {
    await post('/auth/send-otp', { phone: burnPhone });
    await api.app.get(AuthService).sendsSettled();
    const { code } = (await api.cli('otp:last', '--phone', burnPhone)).json as { code: string };
    const orm = await openAppDatabase(api.config.database, { migrate: false });
    await orm.em.fork().nativeUpdate(OtpCode, { phone: burnPhone, closedAt: null }, { expiresAt: new Date(Date.now() - 1000) });
    await orm.close(true);
    expect((await post('/auth/verify-otp', { phone: burnPhone, otp: code })).json().code).toBe('INVALID_OTP');
  });

  it('session routes need the token, X-Service-Org and membership; keys and sessions do not cross', async () => {
    const { token } = await owner();
    const ok = await get('/credits', as(token, a.workspaceId));
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toMatchObject({
      credits: { image: { granted: 50, topup: 7, available: 57, held: 0 }, video: { granted: 5, topup: 0, available: 5, held: 0 } },
      grants: { imageCredits: 50, videoCredits: 5 },
      planCode: 'free',
      periodEnd: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    // Workspace isolation: a member of A naming B is refused.
    const foreign = await get('/credits', as(token, b.workspaceId));
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().code).toBe('NOT_A_MEMBER');
    const noOrg = await get('/credits', { authorization: `Bearer ${token}` });
    expect([noOrg.statusCode, noOrg.json().code, Object.keys(noOrg.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['headers.x-service-org']]);
    const withKey = await get('/credits', { 'x-api-key': a.liveKey, 'x-service-org': a.workspaceId });
    expect(withKey.statusCode).toBe(401);
    expect(withKey.json().code).toBe('SESSION_REQUIRED');
    expect((await get('/credits', { authorization: `Bearer ${a.liveKey}`, 'x-service-org': a.workspaceId })).json().code).toBe('SESSION_REQUIRED');
    expect((await get('/v1/keys/current', { authorization: `Bearer ${token}` })).json().code).toBe('NO_API_KEY');
    expect((await get('/credits', as('not.a.token', a.workspaceId))).json().code).toBe('INVALID_TOKEN');
  });

  it('401 TOKEN_EXPIRED for an expired access token; a forged or alg-none token is INVALID_TOKEN', async () => {
    const { body } = await owner();
    const userId = (body.user as { id: string }).id;
    const key = deriveKey(api.config.appSecret, 'session-jwt');
    const now = Math.floor(Date.now() / 1000);
    const expired = signJwt(key, { sub: userId, sep: 0, fam: 'fam_x', iat: now - 50_000, exp: now - 10, jti: 'x' });
    const res = await get('/credits', as(expired, a.workspaceId));
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('TOKEN_EXPIRED');
    const forged = signJwt(Buffer.alloc(32, 1), { sub: userId, sep: 0, fam: 'fam_x', iat: now, exp: now + 100, jti: 'x' });
    expect((await get('/credits', as(forged, a.workspaceId))).json().code).toBe('INVALID_TOKEN');
    const [, payload] = expired.split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect((await get('/credits', as(none, a.workspaceId))).json().code).toBe('INVALID_TOKEN');
  });

  it('refresh rotates; reusing a rotated token revokes the whole family', async () => {
    const first = await signIn(ownerPhone);
    const r1 = await post('/auth/refresh', { refreshToken: first.refreshToken });
    expect(r1.statusCode).toBe(200);
    const second = r1.json().data as { token: string; refreshToken: string };
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await get('/credits', as(second.token, a.workspaceId))).statusCode).toBe(200);
    const reuse = await post('/auth/refresh', { refreshToken: first.refreshToken });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().code).toBe('INVALID_REFRESH_TOKEN');
    // The family is gone: the newer token no longer refreshes either.
    expect((await post('/auth/refresh', { refreshToken: second.refreshToken })).json().code).toBe('INVALID_REFRESH_TOKEN');
    expect((await post('/auth/refresh', { refreshToken: 'rt_nothing' })).json().code).toBe('INVALID_REFRESH_TOKEN');
  });

  it('sign-out kills every token of the account on its next use, in every API process', async () => {
    const s1 = await signIn(memberPhone);
    const s2 = await signIn(memberPhone);
    for (const app of [api.app, other]) expect((await get('/credits', as(s1.token, a.workspaceId), app)).statusCode).toBe(200);
    const out = await post('/auth/sign-out', {}, { authorization: `Bearer ${s2.token}` });
    expect(out.statusCode).toBe(200);
    for (const app of [api.app, other]) {
      for (const token of [s1.token, s2.token]) {
        const res = await get('/credits', as(token, a.workspaceId), app);
        expect(res.statusCode).toBe(401);
        expect(res.json().code).toBe('INVALID_TOKEN');
      }
    }
    expect((await post('/auth/refresh', { refreshToken: s1.refreshToken })).json().code).toBe('INVALID_REFRESH_TOKEN');
    // Signing in again works.
    expect((await get('/credits', as((await signIn(memberPhone)).token, a.workspaceId))).statusCode).toBe(200);
  });

  it('owners manage API keys from the dashboard; a key is shown once; members may only list', async () => {
    const { token: ownerToken } = await owner();
    const created = await post('/organization/api-keys', { mode: 'test', name: 'ci', scopes: ['renders:read'] }, as(ownerToken, a.workspaceId));
    expect(created.statusCode).toBe(201);
    const { id, key } = created.json().data as { id: string; key: string };
    expect(key).toMatch(/^pk_test_/);
    expect((await get('/v1/keys/current', { 'x-api-key': key })).json().data).toMatchObject({ id, scopes: ['renders:read'] });
    const list = await get('/organization/api-keys?mode=test&status=active', as(ownerToken, a.workspaceId));
    expect(list.statusCode).toBe(200);
    expect(list.json().pagination).toMatchObject({ page: 1, limit: 20 });
    expect(list.json().data.map((k: { id: string }) => k.id)).toContain(id);
    expect(list.body).not.toContain(key.slice(8));
    expect((await get('/organization/api-keys?sort=secret', as(ownerToken, a.workspaceId))).json().code).toBe('INVALID_LIST_QUERY');
    const member = await signIn(memberPhone);
    expect((await get('/organization/api-keys', as(member.token, a.workspaceId))).statusCode).toBe(200);
    const denied = await post('/organization/api-keys', {}, as(member.token, a.workspaceId));
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('ROLE_REQUIRED');
    const badScope = await post('/organization/api-keys', { scopes: ['renders:fly'], ipAllowlist: ['not-an-address'] }, as(ownerToken, a.workspaceId));
    expect([badScope.statusCode, badScope.json().code, Object.keys(badScope.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['scopes']]);
    const badIp = await post('/organization/api-keys', { ipAllowlist: ['not-an-address'] }, as(ownerToken, a.workspaceId));
    expect([badIp.statusCode, badIp.json().code, Object.keys(badIp.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['ipAllowlist']]);
    const del = await api.app.inject({ method: 'DELETE', url: `/api/organization/api-keys/${id}`, headers: as(ownerToken, a.workspaceId) });
    expect(del.json()).toMatchObject({ success: true, data: { id, revoked: true } });
    expect((await get('/v1/keys/current', { 'x-api-key': key })).json().code).toBe('INVALID_API_KEY');
    // Another workspace's key id is not found here, never forbidden.
    const foreignKey = ((await api.cli('key:create', '--workspace', b.workspaceId, '--mode', 'test')).json as { id: string }).id;
    const foreign = await api.app.inject({ method: 'DELETE', url: `/api/organization/api-keys/${foreignKey}`, headers: as(ownerToken, a.workspaceId) });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('API_KEY_NOT_FOUND');
  });

  it('lists members', async () => {
    const res = await get('/organization/members', as((await owner()).token, a.workspaceId));
    expect(res.json().data.map((m: { role: string }) => m.role).sort()).toEqual(['member', 'member', 'owner']);
    expect(res.body).not.toContain(ownerPhone);
  });

  it('pages the credit ledger with tamper-evident cursors and filters', async () => {
    for (let i = 1; i <= 3; i++) expect((await api.cli('credits:grant', '--workspace', a.workspaceId, '--video', String(i))).code).toBe(0);
    const { token: ownerToken } = await owner();
    const seen: string[] = [];
    let url = '/credits/history?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const res = await get(url, as(ownerToken, a.workspaceId));
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().data.map((e: { id: string }) => e.id));
      const next = res.json().nextPageToken;
      if (!next) break;
      url = `/credits/history?limit=2&pageToken=${encodeURIComponent(next)}`;
    }
    // grant image + grant video + topup image (7) + three video top-ups
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    expect([...seen].sort().reverse()).toEqual(seen);
    const topups = await get('/credits/history?reason=topup&kind=video', as(ownerToken, a.workspaceId));
    expect(topups.json().data.map((e: { amount: number }) => e.amount)).toEqual([3, 2, 1]);
    expect(topups.json().data[0]).toMatchObject({ kind: 'video', reason: 'topup', balanceAfter: 11, createdAt: expect.any(String) });
    const first = await get('/credits/history?limit=2', as(ownerToken, a.workspaceId));
    const token = first.json().nextPageToken as string;
    const tampered = await get(`/credits/history?limit=2&pageToken=${encodeURIComponent(`x${token}`)}`, as(ownerToken, a.workspaceId));
    expect(tampered.statusCode).toBe(422);
    expect(tampered.json().code).toBe('INVALID_LIST_QUERY');
    // A token is bound to its filters.
    expect((await get(`/credits/history?limit=2&kind=image&pageToken=${encodeURIComponent(token)}`, as(ownerToken, a.workspaceId))).statusCode).toBe(422);
    expect((await get('/credits/history?kind=audio', as(ownerToken, a.workspaceId))).json().message).toContain('image, video');
    expect((await get('/credits/history?page=2', as(ownerToken, a.workspaceId))).statusCode).toBe(422);
  });

  it('rate-limits sign-in codes per phone with 429 and Retry-After', async () => {
    const phone = '+4915155555555';
    for (let i = 0; i < 5; i++) expect((await post('/auth/send-otp', { phone })).statusCode).toBe(200);
    const res = await post('/auth/send-otp', { phone });
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('SMS through the Twilio adapter (loopback server speaking Twilio\'s Messages API)', () => {
  let server: Server;
  let api: TestApi;
  const received: { path: string; auth: string; form: URLSearchParams }[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', auth: req.headers.authorization ?? '', form: new URLSearchParams(body) });
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ sid: 'SM123', status: 'queued' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    api = await startApi({
      SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC123', TWILIO_AUTH_TOKEN: 'secret', TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE: `http://127.0.0.1:${port}`,
    });
  });
  afterAll(async () => {
    await api.close();
    server.close();
  });

  it('posts the code to the Messages endpoint with basic auth and a form body', async () => {
    const ws = (await api.cli('workspace:create', '--name', 'Sms')).json as { workspaceId: string };
    await api.cli('user:create', '--phone', '+447700900123', '--workspace', ws.workspaceId);
    const res = await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone: '+447700900123' } });
    expect(res.statusCode).toBe(200);
    // Sent after the answer (issue 28: the same time for every number).
    await api.app.get(AuthService).sendsSettled();
    expect(received).toHaveLength(1);
    expect(received[0].path).toBe('/2010-04-01/Accounts/AC123/Messages.json');
    expect(received[0].auth).toBe(`Basic ${Buffer.from('AC123:secret').toString('base64')}`);
    expect(received[0].form.get('To')).toBe('+447700900123');
    expect(received[0].form.get('From')).toBe('+15005550006');
    const code = /\b(\d{6})\b/.exec(received[0].form.get('Body') ?? '')?.[1];
    expect(code).toBeDefined();
    // Development also keeps the message in the outbox.
    expect((await api.cli('otp:last', '--phone', '+447700900123')).json).toEqual({ phone: '+447700900123', code });
  });
});
