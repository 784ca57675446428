import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { ERROR_STATUS } from '#libs/core';
import { buildOpenApiDocument } from '../apps/api/src/openapi.js';
import { envelopeProblem, fuzzRequest, operationShape, type FuzzRoute, type OpenApiDoc, type Schema } from './fuzz-requests.js';
import { startApi, userSession, type TestApi } from './harness.js';
import { routeHandlers, routeOf } from './route-walk.js';

// Issue 21: bad input never answers 5xx. §1 (one envelope), §7 (codes); decisions.md "HTTP and errors".
// The generated cases run a bounded number of times here; bench/fuzz.mjs runs ten thousand and more.
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

describe('bad input never answers 5xx (issue 21)', () => {
  let api: TestApi;
  let key: string;
  let org: string;
  let token: string;
  let routes: FuzzRoute[];
  let schemas: Record<string, Schema>;

  const inject = (method: 'GET' | 'POST', url: string, payload?: string) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) }, payload });

  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_MULTIPLIER: '100000' });
    const ws = (await api.cli('workspace:create', '--name', 'Fuzz', '--plan', 'enterprise')).json as { workspaceId: string; liveKey: string };
    key = ws.liveKey;
    org = ws.workspaceId;
    token = await userSession(api, org, '+4915100002121', 'owner');
    const doc = buildOpenApiDocument(api.app, { prefix: 'api' }) as unknown as OpenApiDoc;
    schemas = doc.components?.schemas ?? {};
    // Every route of the controllers' metadata (as test/routes.e2e-spec.ts walks them): a new route is fuzzed without being listed.
    // An event stream never ends (its bad inputs: test/render-events.e2e-spec.ts).
    routes = [...routeHandlers(api.app)].filter(({ ctrl, handler }) => !routeOf(ctrl, handler).stream).map(({ ctrl, handler }) => {
      const { method, path, auth } = routeOf(ctrl, handler);
      return { method, path, auth: auth?.kind ?? 'public', ...operationShape(doc, method, path) };
    });
  });
  afterAll(() => api.close());

  const expectError = (res: { statusCode: number; json(): Record<string, unknown> }, status: number, code: string) => {
    expect([res.statusCode, res.json().code, res.json().success]).toEqual([status, code, false]);
  };

  it('a NUL character in a path id is 422 VALIDATION_FAILED at params.id, on GET /v1/render/%00 and POST /v1/render/%00/cancel', async () => {
    for (const res of [await inject('GET', '/v1/render/%00'), await inject('POST', '/v1/render/%00/cancel')]) {
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json().errors).toEqual({ 'params.id': [expect.stringContaining('NUL')] });
    }
  });

  it('a NUL character in `search` is 422 VALIDATION_FAILED at query.search (templates, webhooks)', async () => {
    for (const url of ['/v1/templates?search=%00', '/v1/webhooks?search=a%00b']) {
      const res = await inject('GET', url);
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json().errors).toEqual({ 'query.search': [expect.stringContaining('NUL')] });
    }
  });

  it('a NUL character in a body string is 422 at its path, and the body is not stored', async () => {
    const res = await inject('POST', '/v1/webhooks', JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['render.completed'], description: 'a\u0000b' }));
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json().errors).toEqual({ description: [expect.stringContaining('NUL')] });
    expect((await inject('GET', '/v1/webhooks')).json().data).toEqual([]);
  });

  it('a JSON body nested thousands of levels deep is 400 INVALID_REQUEST; 64 levels still reach validation', async () => {
    const deep = (n: number) => `{"edit":{"timeline":${'['.repeat(n)}${']'.repeat(n)}}}`;
    const res = await inject('POST', '/v1/render', deep(5000));
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.json().message).toContain('64');
    const ok = await inject('POST', '/v1/render', deep(60));
    expect(ok.statusCode).toBe(422);
  });

  describe('over real HTTP (the parser and the router, which inject does not go through)', () => {
    let base: string;
    beforeAll(async () => {
      await api.app.listen(0, '127.0.0.1');
      base = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}/api`;
    });
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${url}`, { headers: { 'x-api-key': key, ...headers } });
      return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
    };

    it('a path id of thousands of characters is 414 URI_TOO_LONG in the envelope (not Fastify\'s FST_ERR_MAX_PARAM_LENGTH)', async () => {
      const res = await get(`/v1/render/${'a'.repeat(3000)}`);
      expect(res.status).toBe(414);
      expect(res.body).toEqual({ success: false, code: 'URI_TOO_LONG', message: expect.any(String), data: null });
    });

    it('a URL or a header over the server\'s size is 431 HEADERS_TOO_LARGE in the envelope (the server\'s client-error hook)', async () => {
      for (const res of [await get(`/v1/render/${'a'.repeat(20_000)}`), await get('/v1/keys/current', { 'x-padding': 'p'.repeat(20_000) })]) {
        expect(res.status).toBe(431);
        expect(res.type).toContain('application/json');
        expect(res.body).toEqual({ success: false, code: 'HEADERS_TOO_LARGE', message: expect.any(String), data: null });
      }
    });

    it('bytes that are not HTTP are 400 INVALID_REQUEST in the envelope', async () => {
      const port = new URL(base).port;
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))).toEqual({ success: false, code: 'INVALID_REQUEST', message: expect.any(String), data: null });
    });

    it('the service answers normally afterwards', async () => {
      expect((await get('/v1/keys/current')).status).toBe(200);
    });
  });

  it(`generated bodies, query strings, path ids and headers on every route (${RUNS} cases): never 5xx, always the envelope with a known code`, async () => {
    expect(routes.length).toBeGreaterThanOrEqual(70);
    const hit = new Set<string>();
    const auth = { key, session: { token, org } };
    await fc.assert(
      fc.asyncProperty(fuzzRequest(routes, auth, schemas), async (req) => {
        const res = await api.app.inject({ method: req.method as 'GET', url: req.url, headers: req.headers, payload: req.payload });
        hit.add(req.method);
        const problem = envelopeProblem(res.statusCode, res.headers['content-type'] as string | undefined, res.payload, req.method, ERROR_STATUS);
        if (problem) throw new Error(`${req.method} ${req.url.slice(0, 200)}: ${problem}`);
      }),
      { numRuns: RUNS },
    );
    expect(hit.size).toBeGreaterThanOrEqual(3);
    // Healthy afterwards: the health check, a keyed read and a session read.
    expect((await api.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    expect((await inject('GET', '/v1/keys/current')).statusCode).toBe(200);
    expect((await api.app.inject({ method: 'GET', url: '/api/credits', headers: { authorization: `Bearer ${token}`, 'x-service-org': org } })).statusCode).toBe(200);
  });
});
