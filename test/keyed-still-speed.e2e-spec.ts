import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces } from '#libs/db';
import { ApiKey } from '#libs/keys';
import { secondApi, startApi, type TestApi } from './harness.js';

// Issue 33, keyed reads: GET /v1/keys/current answers from the key record that authentication checked this
// request (decisions.md "Speed (issue 33): keyed reads and the still engine"), not from a read of its row.
// What a caller sees must be the row as stored, and what changes the row or the workspace must show on the
// very next request in every API process.
describe('GET /v1/keys/current answers the key as stored (issue 33, keyed reads)', () => {
  let api: TestApi;
  let other: NestFastifyApplication;
  let workspaceId: string;

  const current = (app: NestFastifyApplication, key: string) =>
    app.inject({ method: 'GET', url: '/api/v1/keys/current', headers: { 'x-api-key': key } });

  async function newKey(...flags: string[]): Promise<{ id: string; key: string }> {
    const res = await api.cli('key:create', '--workspace', workspaceId, ...flags);
    expect(res.code).toBe(0);
    return res.json as { id: string; key: string };
  }

  /** The body a caller must see for key `id`: its row read through the ORM, as the contract words it. */
  async function stored(id: string, plan: string) {
    const db = await openAppDatabase(api.config.database, { migrate: false });
    try {
      const k = await allWorkspaces(db).findOneOrFail(ApiKey, { id });
      return {
        id: k.id, mode: k.mode, name: k.name, hint: k.hint, scopes: k.scopes, ipAllowlist: k.ipAllowlist,
        expiresAt: k.expiresAt?.toISOString() ?? null, createdAt: k.createdAt.toISOString(), workspace: { id: workspaceId, plan },
      };
    } finally {
      await db.close(true);
    }
  }

  beforeAll(async () => {
    api = await startApi();
    other = await secondApi(api);
    const ws = await api.cli('workspace:create', '--name', 'Keyed', '--plan', 'pro');
    expect(ws.code).toBe(0);
    workspaceId = (ws.json as { workspaceId: string }).workspaceId;
  });
  afterAll(async () => {
    await other.close();
    await api.close();
  });

  it('every field is the row\'s (name, hint, scopes in their order, allowlist, expiry, creation to the millisecond), first and cached answers alike', async () => {
    const expires = new Date(Date.now() + 86_400_000);
    const { id, key } = await newKey('--name', 'Nightly export', '--scopes', 'templates:read,renders:read,assets:write',
      '--ip', '127.0.0.1,10.0.0.0/8', '--expires', expires.toISOString());
    const want = await stored(id, 'pro');
    expect(want).toMatchObject({ name: 'Nightly export', scopes: ['templates:read', 'renders:read', 'assets:write'], ipAllowlist: ['127.0.0.1/32', '10.0.0.0/8'] });
    for (const app of [api.app, other, api.app, other]) {
      const res = await current(app, key);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: expect.any(String), data: want });
      // Still metered: the plan's rate on every answer (§8).
      expect(res.headers['x-ratelimit-limit']).toBe('300');
    }
  });

  it('keys of one workspace asked in the same turn each see their own row', async () => {
    const a = await newKey('--name', 'first', '--scopes', 'renders:read');
    const b = await newKey('--name', 'second', '--mode', 'test');
    const [wantA, wantB] = await Promise.all([stored(a.id, 'pro'), stored(b.id, 'pro')]);
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all([current(api.app, a.key), current(api.app, b.key), current(api.app, a.key), current(api.app, b.key)]);
      expect(answers.map((r) => r.json().data)).toEqual([wantA, wantB, wantA, wantB]);
    }
  });

  it('a plan change and a revocation by another process show on the next request of a cached key (§5, §7)', async () => {
    const { id, key } = await newKey('--name', 'cached');
    for (const app of [api.app, other]) expect((await current(app, key)).json().data.workspace.plan).toBe('pro');
    expect((await api.cli('workspace:plan', '--workspace', workspaceId, '--plan', 'business')).code).toBe(0);
    for (const app of [api.app, other]) {
      const res = await current(app, key);
      expect(res.json().data).toEqual(await stored(id, 'business'));
      expect(res.headers['x-ratelimit-limit']).toBe('600');
    }
    expect((await api.cli('key:revoke', '--id', id)).json).toEqual({ id, revoked: true });
    for (const app of [api.app, other]) {
      const res = await current(app, key);
      expect([res.statusCode, res.json().code, res.json().message]).toEqual([401, 'INVALID_API_KEY', 'The API key has been revoked']);
    }
  });
});
