import { openAppDatabase } from '#libs/app';
import { OffloadPool } from '#libs/suite';
import { allWorkspaces, type Orm } from '#libs/db';
import { IntegrationConnection, IntegrationsService } from '#libs/integrations';
import { OFFLOAD_MIN_BYTES } from '#libs/suite';
import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { startApi, type TestApi } from './harness.js';

// Contract §4.5 (the workspace-suite sheets rows and their parameters), §2 (Spreadsheet file,
// Spreadsheet detail, Rows read), §5 (integrations:read / :write), §7 (402/409), §8 (spreadsheets
// limit 1–100, default 25); decisions: writes are POST, the integration codes 409; docs/suite.md.

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string };
const BASE = '/v1/integrations/workspace-suite/sheets/spreadsheets';

describe('workspace-suite sheets (§4.5)', () => {
  let api: TestApi;
  let orm: Orm;
  let google: GoogleFake;
  let ws: Ws;
  let bare: Ws;
  let people: string;

  beforeAll(async () => {
    google = await startGoogleFake();
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, GOOGLE_TIMEOUT_MS: '3000' });
    orm = await openAppDatabase(api.config.database, { migrate: false });
    [ws, bare] = [await create(), await create()];
    await connect(ws, google);
    people = google.seed('People directory', [
      { title: 'Sheet1', rows: [['Name', 'Email', 'Name', '', 'Age'], ['Ada', 'ada@example.com', 'Lovelace', 'x', 36], [], ['Bob', 'bob@example.com'], ['Cy', '', '', '', 41, 'extra']] },
      { title: 'Q1 sales', rows: [['Region', 'Total'], ['North', 1200.5], ['South', 800]] },
    ], '2025-03-01T10:00:00.000Z');
  }, 120_000);
  afterAll(async () => {
    await orm.close(true);
    await api.close();
    await google.close();
  });

  const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Sheets', '--plan', plan)).json as Ws;
  const connect = async (w: Ws, g: GoogleFake, expiresAt = new Date(Date.now() + 3600_000).toISOString()) => {
    const res = await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'workspace-suite', '--access-token', g.accessToken,
      '--refresh-token', g.refreshToken, '--expires-at', expiresAt, '--base-url', g.baseUrl, '--account-email', 'ops@example.com');
    expect(res.code).toBe(0);
  };
  const inject = (method: 'GET' | 'POST', url: string, key: string, payload?: Json) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
  const read = (key: string, id: string, query = '') => inject('GET', `${BASE}/${id}/values${query}`, key);
  const row = (w: Ws) => allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: w.workspaceId, provider: 'workspace-suite' });
  /** The credentials as sealed in the database now. */
  const sealed = async (w: Ws) => new IntegrationsService(orm, api.config).usable(await row(w), 'workspace-suite').credentials;

  it('§7 not connected → 409 on every route; a plan without integrations → 402; Google is not asked', async () => {
    const calls = google.requests.length;
    for (const [method, path, body] of [['GET', '', undefined], ['POST', '', { title: 'x' }], ['GET', `/${people}`, undefined], ['GET', `/${people}/values`, undefined], ['POST', `/${people}/values`, { range: 'A1', values: [[1]] }]] as const) {
      const res = await inject(method, `${BASE}${path}`, bare.liveKey, body);
      expect([method, path, res.statusCode, res.json().code]).toEqual([method, path, 409, 'INTEGRATION_NOT_CONNECTED']);
    }
    const free = await create('free');
    await connect(free, google);
    const res = await inject('GET', BASE, free.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_INTEGRATION_NOT_ALLOWED']);
    expect(google.requests.length).toBe(calls);
  });

  it('§5 scopes: reads need integrations:read, writes integrations:write', async () => {
    const key = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'integrations:read')).json.key as string;
    expect((await inject('GET', `${BASE}/${people}`, key)).statusCode).toBe(200);
    for (const [path, body] of [['', { title: 'x' }], [`/${people}/values`, { range: 'A1', values: [[1]] }]] as const) {
      const res = await inject('POST', `${BASE}${path}`, key, body);
      expect([res.statusCode, res.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    }
  });

  it('§2 list spreadsheets: Drive\'s spreadsheet filter, search, limit 1–100 (25), a cursor walk', async () => {
    const res = await inject('GET', BASE, ws.liveKey);
    expect(res.statusCode).toBe(200);
    const call = google.apiCalls.at(-1)!;
    expect(call.path).toBe('/drive/v3/files');
    expect(call.query.q).toBe("mimeType = 'application/vnd.google-apps.spreadsheet' and trashed = false");
    expect(call.query.pageSize).toBe('25');
    expect(call.authorization).toBe(`Bearer ${google.accessToken}`);
    expect(res.json().data).toContainEqual({ id: people, name: 'People directory', url: `https://docs.google.com/spreadsheets/d/${people}/edit?usp=drivesdk`, modifiedAt: '2025-03-01T10:00:00.000Z' });
    for (let i = 0; i < 5; i++) google.seed(`Walk ${i} o'clock`);
    const seen: string[] = [];
    let token: string | null = null;
    do {
      const page = await inject('GET', `${BASE}?search=${encodeURIComponent("o'clock")}&limit=2${token ? `&pageToken=${token}` : ''}`, ws.liveKey);
      expect(page.statusCode).toBe(200);
      seen.push(...(page.json().data as { name: string }[]).map((f) => f.name));
      token = page.json().nextPageToken as string | null;
    } while (token);
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4].map((i) => `Walk ${i} o'clock`));
    expect(google.apiCalls.at(-1)!.query.q).toContain("name contains 'o\\'clock'");
    for (const q of ['limit=0', 'limit=101', 'limit=ten', `search=${'x'.repeat(129)}`, 'pageToken=%20bad']) {
      const bad = await inject('GET', `${BASE}?${q}`, ws.liveKey);
      expect([q, bad.statusCode, bad.json().code]).toEqual([q, 422, 'VALIDATION_FAILED']);
    }
  });

  it('§2 spreadsheet detail: tabs in order with their grid sizes; unknown id → 404 SPREADSHEET_NOT_FOUND', async () => {
    const res = await inject('GET', `${BASE}/${people}`, ws.liveKey);
    expect(res.json().data).toEqual({
      id: people, name: 'People directory', url: `https://docs.google.com/spreadsheets/d/${people}/edit`,
      sheets: [{ id: 0, title: 'Sheet1', index: 0, rowCount: 1000, columnCount: 26 }, { id: 1001, title: 'Q1 sales', index: 1, rowCount: 1000, columnCount: 26 }],
    });
    expect(google.apiCalls.at(-1)!.query.fields).toContain('sheets.properties(sheetId,title,index,gridProperties(rowCount,columnCount))');
    for (const id of ['1NoSuchSpreadsheet', 'bad%20id']) {
      const missing = await inject('GET', `${BASE}/${id}`, ws.liveKey);
      expect([missing.statusCode, missing.json().code]).toEqual([404, 'SPREADSHEET_NOT_FOUND']);
    }
  });

  it('§2 rows read as records: the header row keys them (duplicates, empty headers), ragged rows padded with null, empty rows left out', async () => {
    const res = await read(ws.liveKey, people);
    expect(res.statusCode).toBe(200);
    expect(google.apiCalls.at(-1)!.path).toBe(`/v4/spreadsheets/${people}/values/Sheet1`);
    expect(google.apiCalls.at(-1)!.query.valueRenderOption).toBe('FORMATTED_VALUE');
    expect(res.json().data).toEqual({
      range: "'Sheet1'!A1:F5",
      headers: ['Name', 'Email', 'Name_2', 'D', 'Age', 'F'],
      records: [
        { Name: 'Ada', Email: 'ada@example.com', Name_2: 'Lovelace', D: 'x', Age: '36', F: null },
        { Name: 'Bob', Email: 'bob@example.com', Name_2: null, D: null, Age: null, F: null },
        { Name: 'Cy', Email: null, Name_2: null, D: null, Age: '41', F: 'extra' },
      ],
    });
    const typed = await read(ws.liveKey, people, `?range=${encodeURIComponent("'Q1 sales'!A1:B")}&renderOption=UNFORMATTED_VALUE`);
    expect(typed.json().data.records).toEqual([{ Region: 'North', Total: 1200.5 }, { Region: 'South', Total: 800 }]);
    expect(google.apiCalls.at(-1)!.path).toBe(`/v4/spreadsheets/${people}/values/${encodeURIComponent("'Q1 sales'!A1:B")}`);
    const grid = await read(ws.liveKey, people, `?range=${encodeURIComponent('Q1 sales')}&as=values`);
    expect(grid.json().data).toEqual({ range: "'Q1 sales'!A1:B3", values: [['Region', 'Total'], ['North', '1200.5'], ['South', '800']] });
    const rows = await read(ws.liveKey, people, '?range=2:3&as=values');
    expect(rows.json().data.values).toEqual([['Ada', 'ada@example.com', 'Lovelace', 'x', '36']]);
  });

  it('a large tab (Google answering more than OFFLOAD_MIN_BYTES) is read on an offload thread: the same records and grid, as JSON', async () => {
    const rows = [['Name', 'Email', 'Score'], ...Array.from({ length: 8000 }, (_, i) => [`Person ${i + 1}`, `p${i + 1}@example.com`, i % 7 === 0 ? '' : String(i / 4)])];
    const big = google.seed('Big list', [{ title: 'Sheet1', rows }]);
    expect(Buffer.byteLength(JSON.stringify({ range: "'Sheet1'!A1:C8001", majorDimension: 'ROWS', values: rows }))).toBeGreaterThan(OFFLOAD_MIN_BYTES);
    const pool = api.app.get(OffloadPool);
    const before = pool.answered;
    const res = await read(ws.liveKey, big);
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'application/json; charset=utf-8']);
    // A thread made it; a small read does not go to one.
    expect(pool.answered).toBe(before + 1);
    expect((await read(ws.liveKey, people)).statusCode).toBe(200);
    expect(pool.answered).toBe(before + 1);
    const body = res.json();
    expect([body.success, body.message, body.data.range, body.data.headers]).toEqual([true, 'OK', "'Sheet1'!A1:C8001", ['Name', 'Email', 'Score']]);
    expect(body.data.records).toHaveLength(8000);
    expect(body.data.records.slice(0, 2)).toEqual([{ Name: 'Person 1', Email: 'p1@example.com', Score: null }, { Name: 'Person 2', Email: 'p2@example.com', Score: '0.25' }]);
    expect(body.data.records.at(-1)).toEqual({ Name: 'Person 8000', Email: 'p8000@example.com', Score: '1999.75' });
    const grid = await read(ws.liveKey, big, '?as=values');
    const values = grid.json().data.values as string[][];
    expect([values.length, values[0], values[2], values.at(-1)]).toEqual([8001, rows[0], rows[2], rows[8000]]);
  });

  it('bad ranges → 422 naming query.range, Google not asked; an unknown tab → 422 from Google\'s own words', async () => {
    const calls = google.apiCalls.length;
    for (const range of ['A0', 'Sheet1!', '1:A', 'C1:A1', "'open!A1", 'My tab!A1', 'Sheet1!A1:B2:C3']) {
      const res = await read(ws.liveKey, people, `?range=${encodeURIComponent(range)}`);
      expect([range, res.statusCode, res.json().code, Object.keys(res.json().errors)]).toEqual([range, 422, 'VALIDATION_FAILED', ['query.range']]);
    }
    for (const q of ['as=rows', 'renderOption=PRETTY']) expect((await read(ws.liveKey, people, `?${q}`)).statusCode).toBe(422);
    expect(google.apiCalls.length).toBe(calls);
    const unknown = await read(ws.liveKey, people, '?range=Nope!A1:B2');
    expect([unknown.statusCode, unknown.json().errors['query.range'][0]]).toEqual([422, expect.stringContaining('Unable to parse range')]);
  });

  it('write rows (POST): append after the table, overwrite in place; raw → RAW, else USER_ENTERED', async () => {
    const id = google.seed('Leads', [{ title: 'Sheet1', rows: [['Name', 'Score', 'Sum']] }]);
    const res = await inject('POST', `${BASE}/${id}/values`, ws.liveKey, { range: 'Sheet1!A1', values: [['Ada', '42', '=1+2'], ['Bob', '7', true]] });
    expect([res.statusCode, res.json().data]).toEqual([200, { spreadsheetId: id, updatedRange: "'Sheet1'!A2:C3", updatedRows: 2, updatedColumns: 3, updatedCells: 6 }]);
    expect(google.apiCalls.at(-1)!).toMatchObject({ method: 'POST', path: `/v4/spreadsheets/${id}/values/${encodeURIComponent('Sheet1!A1')}:append`, query: { valueInputOption: 'USER_ENTERED', insertDataOption: 'INSERT_ROWS' } });
    expect(google.grid(id, 'Sheet1')).toEqual([['Name', 'Score', 'Sum'], ['Ada', 42, 3], ['Bob', 7, true]]);
    const raw = await inject('POST', `${BASE}/${id}/values`, ws.liveKey, { range: 'Sheet1', values: [['Cy', '5', '=1+2']], raw: true });
    expect(raw.json().data.updatedRange).toBe("'Sheet1'!A4:C4");
    expect(google.grid(id, 'Sheet1')[3]).toEqual(['Cy', '5', '=1+2']);
    const over = await inject('POST', `${BASE}/${id}/values`, ws.liveKey, { range: 'Sheet1!B2', values: [['99']], mode: 'overwrite' });
    expect([over.statusCode, over.json().data.updatedRange]).toEqual([200, "'Sheet1'!B2:B2"]);
    expect(google.apiCalls.at(-1)!).toMatchObject({ method: 'PUT', query: { valueInputOption: 'USER_ENTERED' } });
    expect(google.grid(id, 'Sheet1')[1]).toEqual(['Ada', 99, 3]);
    const formulas = await read(ws.liveKey, id, '?renderOption=FORMULA&as=values');
    expect(formulas.json().data.values[1]).toEqual(['Ada', '99', '=1+2']);
  });

  it('bad writes → 422 naming the field; nothing reaches Google', async () => {
    const id = google.seed('Untouched');
    const calls = google.apiCalls.length;
    for (const [body, field] of [
      [{ range: 'A1', values: 'a,b' }, 'values'],
      [{ range: 'A1', values: [1, 2] }, 'values'],
      [{ range: 'A1', values: [] }, 'values'],
      [{ range: 'A1', values: [[{ a: 1 }]] }, 'values'],
      [{ range: 'A1', values: Array.from({ length: 10_001 }, () => [1]) }, 'values'],
      [{ range: 'A1', values: Array.from({ length: 101 }, () => Array.from({ length: 1000 }, () => 1)) }, 'values'],
      [{ values: [[1]] }, 'range'],
      [{ range: 'A1:', values: [[1]] }, 'range'],
      [{ range: 'A1', values: [[1]], mode: 'replace' }, 'mode'],
      [{ range: 'A1', values: [[1]], raw: 'yes' }, 'raw'],
    ] as [Json, string][]) {
      const res = await inject('POST', `${BASE}/${id}/values`, ws.liveKey, body);
      expect([field, res.statusCode, res.json().code, Object.keys(res.json().errors ?? {})]).toEqual([field, 422, 'VALIDATION_FAILED', [field]]);
    }
    expect(google.apiCalls.length).toBe(calls);
    expect(google.grid(id, 'Sheet1')).toEqual([]);
  });

  it('create a spreadsheet (POST): one call carrying the tab and its header row', async () => {
    const res = await inject('POST', BASE, ws.liveKey, { title: 'Spring leads', sheetTitle: 'Leads', headers: ['Name', 'Email'] });
    expect(res.statusCode).toBe(201);
    const created = res.json().data as { id: string; sheets: Json[] };
    expect(created).toMatchObject({ name: 'Spring leads', sheets: [{ title: 'Leads', index: 0 }] });
    expect(google.grid(created.id, 'Leads')).toEqual([['Name', 'Email']]);
    const plain = await inject('POST', BASE, ws.liveKey, { title: 'Blank' });
    expect(plain.json().data.sheets[0].title).toBe('Sheet1');
    for (const [body, field] of [[{}, 'title'], [{ title: '  ' }, 'title'], [{ title: 'x', headers: 'a,b' }, 'headers'], [{ title: 'x', sheetTitle: '' }, 'sheetTitle']] as [Json, string][]) {
      const bad = await inject('POST', BASE, ws.liveKey, body);
      expect([field, bad.statusCode, Object.keys(bad.json().errors ?? {})]).toEqual([field, 422, [field]]);
    }
  });

  it('OAuth: an expired access token is refreshed once for 5 concurrent requests, sealed back, and used after', async () => {
    const fresh = await create();
    google.expireAccessToken();
    await connect(fresh, google, new Date(Date.now() - 1000).toISOString());
    const before = google.refreshes.length;
    const answers = await Promise.all(Array.from({ length: 5 }, () => read(fresh.liveKey, people, '?range=Sheet1!A1:B2')));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(google.refreshes.length - before).toBe(1);
    expect(google.refreshes.at(-1)!.form).toEqual({ grant_type: 'refresh_token', refresh_token: google.refreshToken, client_id: google.clientId, client_secret: google.clientSecret });
    const credentials = await sealed(fresh);
    expect(credentials.accessToken).toBe(google.accessToken);
    expect(Date.parse(credentials.expiresAt!)).toBeGreaterThan(Date.now() + 3000_000);
    expect(credentials.refreshToken).toBe(google.refreshToken);
    expect((await read(fresh.liveKey, people)).statusCode).toBe(200);
    expect(google.refreshes.length - before).toBe(1);
    // A token Google stops taking before its expiry (401) is refreshed once and the call tried again.
    google.expireAccessToken();
    const again = await inject('GET', `${BASE}/${people}`, fresh.liveKey);
    expect(again.statusCode).toBe(200);
    expect(google.refreshes.length - before).toBe(2);
  });

  it('OAuth: invalid_grant → 409 INTEGRATION_REAUTH_REQUIRED, the connection lapsed; reconnecting restores it', async () => {
    const other = await startGoogleFake(google);
    try {
      const lapsing = await create();
      await connect(lapsing, other);
      other.revokeGrant();
      const res = await inject('GET', BASE, lapsing.liveKey);
      expect([res.statusCode, res.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
      expect(res.json().message).toContain('invalid_grant');
      expect(res.json().message).not.toContain(other.refreshToken);
      expect(other.refreshes).toHaveLength(1);
      expect((await row(lapsing)).status).toBe('reauth_required');
      const calls = other.requests.length;
      const next = await read(lapsing.liveKey, people);
      expect([next.statusCode, next.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
      expect(other.requests.length).toBe(calls);
      expect((await inject('GET', BASE, ws.liveKey)).statusCode).toBe(200);
      await connect(lapsing, google);
      expect((await inject('GET', BASE, lapsing.liveKey)).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('provider failures: 500/429 retried then 503 with Retry-After; a brief 429 is ridden out; an append is not retried after a 500; slow → 503; not JSON → 502', async () => {
    const id = google.seed('Fragile', [{ title: 'Sheet1', rows: [['a']] }]);
    try {
      for (const mode of ['server-error', 'rate-limit'] as const) {
        google.failure = mode;
        google.failTimes = Infinity;
        const calls = google.apiCalls.length;
        const res = await read(ws.liveKey, id);
        expect([mode, res.statusCode, res.json().code, res.headers['retry-after']]).toEqual([mode, 503, 'PROVIDER_UNAVAILABLE', '30']);
        expect(google.apiCalls.length - calls).toBe(3);
      }
      google.failure = 'rate-limit';
      google.failTimes = 2;
      expect((await read(ws.liveKey, id)).statusCode).toBe(200);
      google.failure = 'server-error';
      google.failTimes = Infinity;
      const calls = google.apiCalls.length;
      const append = await inject('POST', `${BASE}/${id}/values`, ws.liveKey, { range: 'Sheet1', values: [['b']] });
      expect([append.statusCode, google.apiCalls.length - calls]).toEqual([503, 1]);
      const created = await inject('POST', BASE, ws.liveKey, { title: 'Never' });
      expect(created.statusCode).toBe(503);
      google.failure = 'malformed';
      const garbled = await read(ws.liveKey, id);
      expect([garbled.statusCode, garbled.json().code]).toEqual([502, 'PROVIDER_ERROR']);
      google.failure = 'hang';
      const started = Date.now();
      const slow = await read(ws.liveKey, id);
      expect([slow.statusCode, slow.json().code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);
      expect(Date.now() - started).toBeLessThan(6000);
    } finally {
      google.failure = null;
    }
    expect(google.grid(id, 'Sheet1')).toEqual([['a']]);
    expect(google.spreadsheets().filter((s) => s.title === 'Never')).toEqual([]);
    expect((await row(ws)).status).toBe('connected');
  });

  it('isolation: each workspace reaches its own account with its own token', async () => {
    const second = await startGoogleFake(google);
    try {
      const theirs = await create();
      await connect(theirs, second);
      second.seed('Their budget');
      const mine = (await inject('GET', BASE, ws.liveKey)).json().data as { name: string }[];
      const their = (await inject('GET', BASE, theirs.liveKey)).json().data as { name: string }[];
      expect(their.map((f) => f.name)).toEqual(['Their budget']);
      expect(mine.map((f) => f.name)).not.toContain('Their budget');
      expect(second.requests.every((r) => r.authorization === `Bearer ${second.accessToken}`)).toBe(true);
      const foreign = await inject('GET', `${BASE}/${people}`, theirs.liveKey);
      expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'SPREADSHEET_NOT_FOUND']);
    } finally {
      await second.close();
    }
  });
});
