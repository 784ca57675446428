import { openAppDatabase } from '#libs/app';
import { allWorkspaces } from '#libs/db';
import { IntegrationConnection, IntegrationsService } from '#libs/integrations';
import { startApi, type TestApi } from './harness.js';
import { ProbeModule } from './probe.module.js';

// Contract §2 "Integration connection", §3 (connection states), §4.5 "List connected accounts", §5
// (integrations:read), §7 (integration codes; rule 2: auth first), decisions.md (409 for the
// integration codes; `integration:connect` in the CLI).

type Workspace = { workspaceId: string; liveKey: string };

describe('Integrations: connected accounts and the integration guard', () => {
  let api: TestApi;
  let ws: Workspace;
  let other: Workspace;
  const SECRET = 'sk_live_do-not-leak-4242';

  const get = (key: string, url: string) => api.app.inject({ method: 'GET', url: `/api${url}`, headers: { 'x-api-key': key } });
  const connect = (workspace: string, ...flags: string[]) => api.cli('integration:connect', '--workspace', workspace, ...flags);

  async function newWorkspace(plan = 'pro'): Promise<Workspace> {
    const res = await api.cli('workspace:create', '--name', 'Acme', '--plan', plan);
    expect(res.code).toBe(0);
    return res.json as unknown as Workspace;
  }

  beforeAll(async () => {
    api = await startApi({}, [ProbeModule]);
    ws = await newWorkspace();
    other = await newWorkspace();
  });
  afterAll(() => api.close());

  it('lists nothing before anything is connected', async () => {
    const res = await get(ws.liveKey, '/v1/integrations');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([]);
  });

  it('integration:connect prints the §2 record; the list shows it without its credentials', async () => {
    // The built CLI's process: what it prints on stdout.
    const res = await api.spawnCli('integration:connect', '--workspace', ws.workspaceId, '--provider', 'workspace-suite', '--access-token', SECRET, '--refresh-token', `${SECRET}-r`,
      '--account-email', 'ops@example.com', '--account-name', 'Acme Ops');
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ provider: 'workspace-suite', status: 'connected', engine: 'provider', account: { email: 'ops@example.com', name: 'Acme Ops' } });
    expect(res.json.id).toMatch(/^con_[0-9A-Z]{26}$/);
    expect(Date.parse(res.json.connectedAt as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.stringify(res.json)).not.toContain(SECRET);

    const list = await get(ws.liveKey, '/v1/integrations');
    expect(list.json().data).toEqual([res.json]);
    expect(list.body).not.toContain(SECRET);
  });

  it('keeps the credentials sealed at rest', async () => {
    const orm = await openAppDatabase(api.config.database, { migrate: false });
    try {
      const row = await allWorkspaces(orm).findOneOrFail(IntegrationConnection, { workspaceId: ws.workspaceId, provider: 'workspace-suite' });
      expect(row.credentialsSealed).not.toContain(SECRET);
      expect(row.credentialsSealed).not.toContain(Buffer.from(SECRET).toString('base64'));
    } finally {
      await orm.close(true);
    }
  });

  it('reconnecting replaces the connection (one per workspace and provider)', async () => {
    const first = (await get(ws.liveKey, '/v1/integrations')).json().data[0];
    const again = await connect(ws.workspaceId, '--provider', 'workspace-suite', '--access-token', 'another-token', '--account-email', 'new@example.com');
    expect(again.json).toMatchObject({ id: first.id, account: { email: 'new@example.com', name: null } });
    expect((await get(ws.liveKey, '/v1/integrations')).json().data).toHaveLength(1);
  });

  it('refuses incomplete or unknown connections with the field named', async () => {
    expect(await connect(ws.workspaceId, '--provider', 'fax-machine', '--api-key', 'k')).toMatchObject({ code: 1, json: { error: { code: 'VALIDATION_FAILED' } } });
    const noCreds = await connect(ws.workspaceId, '--provider', 'voice-provider');
    expect(noCreds).toMatchObject({ code: 1, json: { error: { code: 'VALIDATION_FAILED' } } });
    const localSuite = await connect(ws.workspaceId, '--provider', 'workspace-suite', '--engine', 'local');
    expect(localSuite).toMatchObject({ code: 1, json: { error: { code: 'VALIDATION_FAILED' } } });
    const badUrl = await connect(ws.workspaceId, '--provider', 'voice-provider', '--api-key', 'k', '--base-url', 'ftp://x');
    expect(badUrl).toMatchObject({ code: 1, json: { error: { code: 'VALIDATION_FAILED' } } });
    expect((await connect('org_00000000000000000000000000', '--provider', 'voice-provider', '--api-key', 'k')).code).toBe(1);
    // Nothing was stored by the refusals.
    expect((await get(ws.liveKey, '/v1/integrations')).json().data.map((c: { provider: string }) => c.provider)).toEqual(['workspace-suite']);
  });

  it('a speech provider can run on the offline engine with no credentials', async () => {
    const res = await connect(ws.workspaceId, '--provider', 'speech-gamma', '--engine', 'local');
    expect(res.json).toMatchObject({ provider: 'speech-gamma', engine: 'local', status: 'connected' });
  });

  it('keeps workspaces apart', async () => {
    expect((await get(other.liveKey, '/v1/integrations')).json().data).toEqual([]);
    expect((await get(other.liveKey, '/v1/probe/suite')).json()).toMatchObject({ code: 'INTEGRATION_NOT_CONNECTED' });
  });

  it('the guard: connected → the route runs with the connection', async () => {
    const res = await get(ws.liveKey, '/v1/probe/suite');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ hasKey: true });
  });

  it('the guard: auth and scope come before the integration checks (§7 rule 2)', async () => {
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/probe/suite' })).json().code).toBe('NO_API_KEY');
    const narrow = await api.cli('key:create', '--workspace', other.workspaceId, '--scopes', 'renders:read');
    const res = await get((narrow.json as { key: string }).key, '/v1/probe/suite');
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('INSUFFICIENT_SCOPE');
  });

  it('the guard: never connected → 409 INTEGRATION_NOT_CONNECTED', async () => {
    const res = await get(other.liveKey, '/v1/probe/suite');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ success: false, code: 'INTEGRATION_NOT_CONNECTED' });
  });

  it('the guard: a lapsed grant → 409 INTEGRATION_REAUTH_REQUIRED until connected again', async () => {
    const row = (await get(ws.liveKey, '/v1/integrations')).json().data.find((c: { provider: string }) => c.provider === 'workspace-suite');
    await api.app.get(IntegrationsService).markLapsed(row.id, 'invalid_grant: Token has been expired or revoked.');
    const res = await get(ws.liveKey, '/v1/probe/suite');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'INTEGRATION_REAUTH_REQUIRED' });
    expect(res.json().message).toContain('invalid_grant');
    const listed = (await get(ws.liveKey, '/v1/integrations')).json().data.find((c: { provider: string }) => c.provider === 'workspace-suite');
    expect(listed).toMatchObject({ status: 'reauth_required', reauthReason: 'invalid_grant: Token has been expired or revoked.' });

    await connect(ws.workspaceId, '--provider', 'workspace-suite', '--access-token', 'fresh');
    expect((await get(ws.liveKey, '/v1/probe/suite')).statusCode).toBe(200);
  });

  it('the guard: a plan without integrations → 402 LIMIT_INTEGRATION_NOT_ALLOWED, even when connected', async () => {
    const free = await newWorkspace('free');
    await connect(free.workspaceId, '--provider', 'workspace-suite', '--api-key', 'k');
    const res = await get(free.liveKey, '/v1/probe/suite');
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('LIMIT_INTEGRATION_NOT_ALLOWED');
  });

  it('integration:disconnect removes the connection; a second time is refused', async () => {
    const res = await api.cli('integration:disconnect', '--workspace', ws.workspaceId, '--provider', 'speech-gamma');
    expect(res).toMatchObject({ code: 0, json: { provider: 'speech-gamma', disconnected: true } });
    expect((await get(ws.liveKey, '/v1/integrations')).json().data.map((c: { provider: string }) => c.provider)).toEqual(['workspace-suite']);
    expect(await api.cli('integration:disconnect', '--workspace', ws.workspaceId, '--provider', 'speech-gamma')).toMatchObject({ code: 1, json: { error: { code: 'INTEGRATION_NOT_CONNECTED' } } });
  });
});
