import { openAppDatabase } from '#libs/app';
import { OffloadPool } from '#libs/suite';
import { forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { OFFLOAD_MIN_BYTES } from '#libs/suite';
import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { startApi, type TestApi } from './harness.js';

// Issue 31 (libs/core split): the offload pool moved to libs/suite on piscina. What a caller sees must not
// change: large sheet reads (contract §4.5, §2 "Rows read") are made on at most OFFLOAD_THREADS threads
// (README configuration; docs/decisions.md "Work off the event loop"), each answered whole and right,
// while the API keeps answering; a read writes no event.

type Ws = { workspaceId: string; liveKey: string };
const BASE = '/api/v1/integrations/workspace-suite/sheets/spreadsheets';

describe('core split: sheet reads on the offload pool with OFFLOAD_THREADS=1 (issue 31)', () => {
  let api: TestApi;
  let orm: Orm;
  let google: GoogleFake;
  let ws: Ws;
  let big: string;
  let small: string;
  const ROWS = 7000;

  beforeAll(async () => {
    google = await startGoogleFake();
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, GOOGLE_TIMEOUT_MS: '20000', OFFLOAD_THREADS: '1' });
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = (await api.cli('workspace:create', '--name', 'Core split', '--plan', 'pro')).json as Ws;
    const connected = await api.cli('integration:connect', '--workspace', ws.workspaceId, '--provider', 'workspace-suite', '--access-token', google.accessToken,
      '--refresh-token', google.refreshToken, '--expires-at', new Date(Date.now() + 3600_000).toISOString(), '--base-url', google.baseUrl);
    expect(connected.code).toBe(0);
    const rows = [['Name', 'Email', 'Score'], ...Array.from({ length: ROWS }, (_, i) => [`Person ${i + 1}`, `p${i + 1}@example.com`, String(i / 2)])];
    expect(Buffer.byteLength(JSON.stringify({ range: `'Sheet1'!A1:C${ROWS + 1}`, majorDimension: 'ROWS', values: rows }))).toBeGreaterThan(OFFLOAD_MIN_BYTES);
    big = google.seed('Big list', [{ title: 'Sheet1', rows }]);
    small = google.seed('Small list', [{ title: 'Sheet1', rows: [['Name'], ['Ada']] }]);
  }, 120_000);
  afterAll(async () => {
    await orm.close(true);
    await api.close();
    await google.close();
  });

  const read = (id: string, query = '') => api.app.inject({ method: 'GET', url: `${BASE}/${id}/values${query}`, headers: { 'x-api-key': ws.liveKey } });

  it('four large reads at once are each answered whole and right, made on one thread, while a small read is answered; no event is written', async () => {
    const pool = api.app.get(OffloadPool);
    const events = await forWorkspace(orm, ws.workspaceId).count(OutboxEvent, {});
    const before = pool.answered;
    const reads = Promise.all([read(big), read(big, '?as=values'), read(big), read(big, '?as=values')]);
    const quick = await read(small);
    expect([quick.statusCode, quick.json().data.records]).toEqual([200, [{ Name: 'Ada' }]]);
    const answers = await reads;
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    for (const i of [0, 2]) {
      const records = answers[i].json().data.records as Record<string, string>[];
      expect([records.length, records[0], records.at(-1)]).toEqual([ROWS, { Name: 'Person 1', Email: 'p1@example.com', Score: '0' }, { Name: `Person ${ROWS}`, Email: `p${ROWS}@example.com`, Score: String((ROWS - 1) / 2) }]);
    }
    for (const i of [1, 3]) {
      const values = answers[i].json().data.values as string[][];
      expect([values.length, values[0], values.at(-1)]).toEqual([ROWS + 1, ['Name', 'Email', 'Score'], [`Person ${ROWS}`, `p${ROWS}@example.com`, String((ROWS - 1) / 2)]]);
    }
    // Each large read went to a thread (the small one did not), and there was never more than OFFLOAD_THREADS.
    expect([pool.answered - before, pool.threads]).toEqual([4, 1]);
    expect(await forWorkspace(orm, ws.workspaceId).count(OutboxEvent, {})).toBe(events);
    // The pool still answers afterwards.
    expect((await read(big)).json().data.records).toHaveLength(ROWS);
    expect(pool.answered - before).toBe(5);
  });
});
