import type { INestApplicationContext } from '@nestjs/common';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';

// Issue 18 (the dashboard's server side): sessions on the /v1 routes; decisions.md "Sessions (dashboard)".
// The route walk of test/routes.e2e-spec.ts covers every key route; this file what a dashboard user sees.

const still = { timeline: { background: '#1d3557', tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi', font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 160, height: 100 } } };

describe('dashboard sessions on /v1 routes', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let ws: { workspaceId: string; liveKey: string };
  let owner: string;
  let member: string;

  const signIn = async (phone: string) => {
    expect((await api.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { phone } })).statusCode).toBe(200);
    const otp = (await api.cli('otp:last', '--phone', phone)).json.code as string;
    return (await api.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { phone, otp } })).json().data.token as string;
  };
  const as = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'x-service-org': ws.workspaceId, ...extra });
  const credits = async () => (await api.app.inject({ method: 'GET', url: '/api/credits', headers: as(owner) })).json().data.credits.image as { available: number; used: number };

  beforeAll(async () => {
    api = await startApi();
    worker = await createWorkerApp(api.config);
    ws = (await api.cli('workspace:create', '--name', 'Dash', '--plan', 'pro')).json as typeof ws;
    expect((await api.cli('user:create', '--phone', '+4915100004001', '--workspace', ws.workspaceId, '--role', 'owner')).code).toBe(0);
    expect((await api.cli('user:create', '--phone', '+4915100004002', '--workspace', ws.workspaceId, '--role', 'member')).code).toBe(0);
    owner = await signIn('+4915100004001');
    member = await signIn('+4915100004002');
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
  });

  it('a session is counted against its account: beyond 600 requests a minute, 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    const solo = await api.cli('user:create', '--phone', '+4915100004003', '--workspace', ws.workspaceId, '--role', 'member');
    expect(solo.code).toBe(0);
    const token = await signIn('+4915100004003');
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
});
