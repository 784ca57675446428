import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { startApi, type TestApi } from './harness.js';

// Contract §4.5 (the workspace-suite contacts rows; Read contacts: search, limit up to 1000,
// pageToken), §2 (Contact, Contacts response with nextPageToken and total, Contact label), §5
// (integrations:read), §7 (402/409); docs/suite.md "Contacts".

type Ws = { workspaceId: string; liveKey: string };
const BASE = '/v1/integrations/workspace-suite/contacts';

describe('workspace-suite contacts (§4.5)', () => {
  let api: TestApi;
  let google: GoogleFake;
  let ws: Ws;
  let ada: string;
  let clients: string;

  beforeAll(async () => {
    google = await startGoogleFake();
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, GOOGLE_TIMEOUT_MS: '3000' });
    ws = await create();
    await connect(ws, google);
    clients = google.addGroup('Clients');
    ada = google.addContact({
      given: 'Ada', family: 'Lovelace', emails: ['ada@example.com', 'countess@example.org'], phones: ['+44 20 7946 0018', '+44 7700 900123'],
      organization: 'Analytical Engines Ltd', title: 'Mathematician', city: 'London', country: 'United Kingdom',
      photoUrl: 'https://lh3.googleusercontent.com/contacts/ada', notes: 'Met at the exhibition', groups: ['myContacts', 'starred', clients],
    });
    google.addContact({ given: 'Bob', emails: ['bob@builders.test'], groups: ['myContacts', clients] });
    google.addContact({ emails: ['nameless@example.com'] });
    for (let i = 0; i < 4; i++) google.addContact({ given: `Walker${i}`, family: 'Page' });
  }, 120_000);
  afterAll(async () => {
    await api.close();
    await google.close();
  });

  const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Contacts', '--plan', plan)).json as Ws;
  const connect = async (w: Ws, g: GoogleFake) => {
    const res = await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'workspace-suite', '--access-token', g.accessToken,
      '--refresh-token', g.refreshToken, '--expires-at', new Date(Date.now() + 3600_000).toISOString(), '--base-url', g.baseUrl);
    expect(res.code).toBe(0);
  };
  const get = (key: string, path = '') => api.app.inject({ method: 'GET', url: `/api${BASE}${path}`, headers: { 'x-api-key': key } });

  it('§7 not connected → 409, a plan without integrations → 402, a key without integrations:read → 403; Google is not asked', async () => {
    const calls = google.requests.length;
    const bare = await create();
    for (const path of ['', '/groups']) {
      const res = await get(bare.liveKey, path);
      expect([path, res.statusCode, res.json().code]).toEqual([path, 409, 'INTEGRATION_NOT_CONNECTED']);
    }
    const free = await create('free');
    await connect(free, google);
    expect((await get(free.liveKey)).json().code).toBe('LIMIT_INTEGRATION_NOT_ALLOWED');
    const key = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'renders:read')).json.key as string;
    const res = await get(key, '/groups');
    expect([res.statusCode, res.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect(google.requests.length).toBe(calls);
  });

  it('§2 contacts: People\'s connections mapped (primary first, placeholder photo null, labels), total, default limit 100', async () => {
    const res = await get(ws.liveKey);
    expect(res.statusCode).toBe(200);
    const call = google.apiCalls.at(-1)!;
    expect(call.path).toBe('/v1/people/me/connections');
    expect(call.query).toEqual({ personFields: 'names,emailAddresses,phoneNumbers,organizations,addresses,photos,biographies,memberships', pageSize: '100' });
    const page = res.json().data as { contacts: Record<string, unknown>[]; nextPageToken: string | null; total: number };
    expect([page.total, page.nextPageToken, page.contacts.length]).toEqual([7, null, 7]);
    expect(page.contacts[0]).toEqual({
      id: ada, displayName: 'Ada Lovelace', firstName: 'Ada', lastName: 'Lovelace',
      email: 'ada@example.com', allEmails: ['ada@example.com', 'countess@example.org'],
      phone: '+44 20 7946 0018', allPhones: ['+44 20 7946 0018', '+44 7700 900123'],
      organization: 'Analytical Engines Ltd', jobTitle: 'Mathematician', city: 'London', country: 'United Kingdom',
      photoUrl: 'https://lh3.googleusercontent.com/contacts/ada', notes: 'Met at the exhibition', groupIds: ['myContacts', 'starred', clients],
    });
    expect(page.contacts[2]).toMatchObject({ displayName: 'nameless@example.com', firstName: null, lastName: null, phone: null, allPhones: [], photoUrl: null, notes: null, groupIds: ['myContacts'] });
  });

  it('paging: limit and nextPageToken walk every contact once; total is the account\'s', async () => {
    const seen: string[] = [];
    let token: string | null = null;
    do {
      const res = await get(ws.liveKey, `?limit=3${token ? `&pageToken=${token}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json().data as { contacts: { id: string }[]; nextPageToken: string | null; total: number };
      expect(page.total).toBe(7);
      expect(page.contacts.length).toBeLessThanOrEqual(3);
      seen.push(...page.contacts.map((c) => c.id));
      token = page.nextPageToken;
    } while (token);
    expect(new Set(seen).size).toBe(7);
    expect(seen).toHaveLength(7);
    expect((await get(ws.liveKey, '?limit=1000')).statusCode).toBe(200);
    expect(google.apiCalls.at(-1)!.query.pageSize).toBe('1000');
  });

  it('search by name, email or phone: People\'s searchContacts, at most 30, one page', async () => {
    const names = async (q: string) => {
      const res = await get(ws.liveKey, `?search=${encodeURIComponent(q)}`);
      expect(res.statusCode).toBe(200);
      const data = res.json().data as { contacts: { displayName: string }[]; nextPageToken: string | null; total: number };
      expect(data.nextPageToken).toBeNull();
      expect(data.total).toBe(data.contacts.length);
      return data.contacts.map((c) => c.displayName);
    };
    expect(await names('love')).toEqual(['Ada Lovelace']);
    expect(google.apiCalls.at(-1)).toMatchObject({ path: '/v1/people:searchContacts', query: { query: 'love', pageSize: '30', readMask: expect.stringContaining('emailAddresses') } });
    expect(await names('bob@')).toEqual(['Bob']);
    expect(await names('+44 7700')).toEqual(['Ada Lovelace']);
    expect(await names('walker')).toEqual(['Walker0 Page', 'Walker1 Page', 'Walker2 Page', 'Walker3 Page']);
    expect(await names('nobody')).toEqual([]);
    await get(ws.liveKey, '?search=page&limit=2');
    expect(google.apiCalls.at(-1)!.query.pageSize).toBe('2');
  });

  it('labels: contact groups with their member counts', async () => {
    const res = await get(ws.liveKey, '/groups');
    expect(res.statusCode).toBe(200);
    expect(google.apiCalls.at(-1)).toMatchObject({ path: '/v1/contactGroups', query: { pageSize: '1000', groupFields: 'name,groupType,memberCount' } });
    expect(res.json().data).toEqual([{ id: 'myContacts', name: 'My Contacts', count: 7 }, { id: 'starred', name: 'Starred', count: 1 }, { id: clients, name: 'Clients', count: 2 }]);
  });

  it('bad queries → 422 naming the field (limit 0/1001, pageToken with search, a token Google refuses)', async () => {
    const calls = google.apiCalls.length;
    for (const [q, field] of [['limit=0', 'query.limit'], ['limit=1001', 'query.limit'], ['limit=many', 'query.limit'], ['pageToken=%20x', 'query.pageToken'], [`search=${'x'.repeat(201)}`, 'query.search'], ['search=ada&pageToken=abc', 'query.pageToken']]) {
      const res = await get(ws.liveKey, `?${q}`);
      expect([q, res.statusCode, res.json().code, Object.keys(res.json().errors ?? {})]).toEqual([q, 422, 'VALIDATION_FAILED', [field]]);
    }
    expect(google.apiCalls.length).toBe(calls);
    const forged = await get(ws.liveKey, '?pageToken=Zm9yZ2Vk');
    expect([forged.statusCode, forged.json().code, forged.json().errors['query.pageToken'][0]]).toEqual([422, 'VALIDATION_FAILED', expect.stringContaining('invalid argument')]);
  });

  it('Google 500 / 429: retried by the session (3 attempts) then 503 with Retry-After; a brief 429 is ridden out', async () => {
    try {
      for (const mode of ['server-error', 'rate-limit'] as const) {
        google.failure = mode;
        google.failTimes = Infinity;
        const calls = google.apiCalls.length;
        const res = await get(ws.liveKey, mode === 'rate-limit' ? '/groups' : '');
        expect([mode, res.statusCode, res.json().code, res.headers['retry-after']]).toEqual([mode, 503, 'PROVIDER_UNAVAILABLE', '30']);
        expect(google.apiCalls.length - calls).toBe(3);
      }
      google.failure = 'rate-limit';
      google.failTimes = 1;
      expect((await get(ws.liveKey, '?search=ada')).statusCode).toBe(200);
    } finally {
      google.failure = null;
    }
  });

  it('isolation: each workspace reaches its own account with its own token', async () => {
    const second = await startGoogleFake(google);
    try {
      const theirs = await create();
      await connect(theirs, second);
      second.addContact({ given: 'Theirs', emails: ['theirs@example.net'] });
      const their = (await get(theirs.liveKey)).json().data as { contacts: { displayName: string }[]; total: number };
      expect([their.total, their.contacts.map((c) => c.displayName)]).toEqual([1, ['Theirs']]);
      const mine = (await get(ws.liveKey, '?search=theirs')).json().data as { contacts: unknown[] };
      expect(mine.contacts).toEqual([]);
      expect((await get(theirs.liveKey, '/groups')).json().data).toEqual([{ id: 'myContacts', name: 'My Contacts', count: 1 }, { id: 'starred', name: 'Starred', count: 0 }]);
      expect(second.requests.every((r) => r.authorization === `Bearer ${second.accessToken}`)).toBe(true);
    } finally {
      await second.close();
    }
  });
});
