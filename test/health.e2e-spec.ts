import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { startApi, type TestApi } from './harness.js';
import { s3Env, testS3Url } from './s3.js';

describe('health and HTTP conventions (decisions.md "Envelope and errors", "Running it")', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('answers liveness and readiness with database, Redis and storage checks', async () => {
    const live = await api.app.inject({ method: 'GET', url: '/api/health' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ success: true, message: 'OK', data: { status: 'ok' } });
    const ready = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().data.checks).toEqual({
      database: { ok: true, detail: process.env.TEST_DB === 'postgres' ? 'postgresql' : 'sqlite' },
      redis: { ok: true },
      storage: { ok: true, detail: api.config.storage.driver },
    });
  });

  it('gives every response an X-Request-Id, echoing a well-formed one', async () => {
    const generated = await api.app.inject({ method: 'GET', url: '/api/health' });
    expect(generated.headers['x-request-id']).toMatch(/^req_[0-9A-Z]{26}$/);
    const echoed = await api.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const refused = await api.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'bad id\u0001' } });
    expect(refused.headers['x-request-id']).toMatch(/^req_/);
  });

  it('answers an unknown route with 404 NOT_FOUND in the error envelope', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ success: false, code: 'NOT_FOUND', message: expect.any(String), data: null });
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('refuses malformed JSON with 400 INVALID_REQUEST and oversized bodies with 413, without stack traces', async () => {
    const bad = await api.app.inject({
      method: 'POST', url: '/api/v1/keys/current', headers: { 'content-type': 'application/json' }, payload: '{"a":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST', data: null });
    expect(bad.body).not.toMatch(/at .*\.js:\d+/);
    const big = await api.app.inject({
      method: 'POST', url: '/api/v1/keys/current', headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ x: 'a'.repeat(api.config.bodyLimitBytes + 10) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('serves the OpenAPI document and UI', async () => {
    const doc = await api.app.inject({ method: 'GET', url: '/api/docs-json' });
    expect(doc.statusCode).toBe(200);
    expect(doc.json().components.securitySchemes).toHaveProperty('apiKey');
    const ui = await api.app.inject({ method: 'GET', url: '/api/docs' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toMatch(/html/);
  });
});

describe('readiness refuses a Redis that may evict queue data (issue: queue on Redis, noeviction)', () => {
  let redis: ChildProcess;
  let api: TestApi;
  beforeAll(async () => {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru'], { stdio: 'ignore' });
    api = await startApi({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await api.close();
    redis.kill();
  });

  it('answers 503 NOT_READY naming the eviction policy', async () => {
    let res = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    for (let i = 0; i < 20 && res.json().data?.redis?.detail?.includes('ECONNREFUSED'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    }
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ success: false, code: 'NOT_READY' });
    expect(res.json().data.redis).toEqual({ ok: false, detail: expect.stringContaining('allkeys-lru') });
    expect(res.json().data.database.ok).toBe(true);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

describe('readiness checks the bucket with the S3 driver, naming it when it cannot be reached (issue 14)', () => {
  let api: TestApi;
  let proxy: ReturnType<typeof createServer>;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // The API reaches the S3 server through a loopback relay this test can cut.
    const target = new URL(testS3Url());
    proxy = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    api = await startApi({ ...s3Env(), S3_ENDPOINT: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
  });
  afterAll(() => api.close());

  it('is ready while the bucket answers; 503 NOT_READY naming the bucket and endpoint when it does not', async () => {
    const ready = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().data.checks.storage).toEqual({ ok: true, detail: 's3' });
    await new Promise<void>((r) => {
      proxy.close(() => r());
      for (const s of sockets) s.destroy();
    });
    const res = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    expect(res.statusCode).toBe(503);
    const { storage } = api.config;
    if (storage.driver !== 's3') throw new Error('expected the s3 driver');
    expect(res.json()).toMatchObject({ success: false, code: 'NOT_READY', message: expect.stringContaining(`storage: S3 bucket "${storage.bucket}" at ${storage.endpoint}`) });
    expect(res.json().data.storage).toEqual({ ok: false, detail: expect.stringMatching(/^S3 bucket "t-[0-9a-f]+" at http:\/\/127\.0\.0\.1:\d+: /) });
    expect(res.json().data.database.ok).toBe(true);
  });
});
