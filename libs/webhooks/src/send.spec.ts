import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { resolveOutbound } from '#libs/outbound';
import { buildDelivery, type DeliveryRequest } from './build.js';
import { classifyResponse } from './retry.js';
import { closeDeliveryConnections, sendDelivery, type Resolver } from './send.js';
import { verifyRequestSignature, verifySignature } from './sign.js';
import type { EndpointConfig, EventEnvelope } from './types.js';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

// A loopback receiver; each path answers one way. Development policy allows loopback (decisions.md).
describe('sending a delivery', () => {
  let server: Server;
  let port: number;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        seen.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks) });
        const status = /^\/status\/(\d{3})$/.exec(path.split('?')[0]);
        if (status) {
          res.writeHead(Number(status[1]), { 'content-type': 'text/plain' }).end(`answer ${status[1]}`);
        } else if (path === '/redirect') {
          res.writeHead(302, { location: `http://127.0.0.1:${port}/status/200` }).end();
        } else if (path === '/silent') {
          // never answers
        } else if (path === '/hints') {
          res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' }); // 103, then nothing more
        } else if (path === '/stall') {
          res.writeHead(200, { 'content-type': 'text/plain' }).write('partial'); // the rest never comes
        } else if (path === '/big') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const block = Buffer.alloc(16 * 1024, 'a');
          for (let i = 0; i < 64; i++) res.write(block); // 1 MiB, never ended: the client must stop reading
        } else {
          res.writeHead(404).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    closeDeliveryConnections();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    seen.length = 0;
  });

  const secret = 'whsec_test-secret';
  const event: EventEnvelope = { id: 'evt_1', type: 'render.completed', created: '2026-03-01T10:00:00.000Z', livemode: true, data: { id: 'rnd_1', status: 'done' } };
  const timestamp = Math.floor(Date.now() / 1000);
  const build = (path: string, over: Partial<EndpointConfig> = {}): DeliveryRequest =>
    buildDelivery({ id: 'whk_1', url: `http://127.0.0.1:${port}${path}`, method: 'POST', bodyFormat: 'json', payloadMode: 'default', headers: [], secret, ...over }, event, { orgId: 'org_1', endpointId: 'whk_1', attempt: 1, timestamp });
  const dev = { policy: 'development' as const };

  it('delivers, and the receiver can verify what it got', async () => {
    const result = await sendDelivery(build('/status/200', { headers: [{ key: 'Authorization', value: 'Bearer {{org.id}}' }] }), dev);
    expect(result).toMatchObject({ status: 200, responseSnippet: 'answer 200', truncated: false });
    expect(result.error).toBeUndefined();
    expect(classifyResponse(result)).toBe('success');
    expect(seen).toHaveLength(1);
    const [got] = seen;
    expect(got.method).toBe('POST');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(got.body.length));
    expect(got.headers['user-agent']).toBe('service-webhooks/1.0');
    expect(got.headers.authorization).toBe('Bearer org_1');
    expect(got.headers['x-service-event']).toBe('render.completed');
    expect(got.headers['x-service-attempt']).toBe('1');
    expect(JSON.parse(got.body.toString('utf8'))).toMatchObject({ id: 'evt_1', data: { id: 'rnd_1' } });
    expect(verifySignature(secret, got.headers['x-service-signature'] as string, got.headers['x-service-timestamp'] as string, got.body, Math.floor(Date.now() / 1000))).toBe(true);
  });

  it('connects to the address it checked, keeping the URL host for the Host header', async () => {
    const lookups: string[] = [];
    const resolve: Resolver = async (host) => {
      lookups.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const result = await sendDelivery(build('/status/204', { url: `http://hooks.invalid:${port}/status/204` }), { ...dev, resolve });
    expect(result.status).toBe(204);
    expect(lookups).toEqual(['hooks.invalid']);
    expect(seen[0].headers.host).toBe(`hooks.invalid:${port}`);
  });

  it('keeps the connection to a checked address for the next delivery to that address', async () => {
    closeDeliveryConnections();
    const sockets = new Set<unknown>();
    const count = (socket: unknown) => sockets.add(socket);
    server.on('connection', count);
    try {
      for (let i = 0; i < 10; i++) expect((await sendDelivery(build('/status/200'), dev)).status).toBe(200);
    } finally {
      server.off('connection', count);
    }
    expect(seen).toHaveLength(10);
    // undici's pool connects a second client while its first is still connecting (it keeps one
    // spare for the next request), so a new pool may open two; then it reuses them.
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it('opens a new connection when the host is checked to another address (no reuse across a DNS change)', async () => {
    // A second receiver on another loopback address and the same port (Linux routes 127.0.0.0/8 to lo).
    const other = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202).end('other'));
    });
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.2', resolve));
    try {
      let address = '127.0.0.1';
      const resolve: Resolver = async () => [{ address, family: 4 }];
      const url = `http://hooks.invalid:${port}/status/200`;
      expect((await sendDelivery(build('/', { url }), { ...dev, resolve })).status).toBe(200);
      address = '127.0.0.2';
      const moved = await sendDelivery(build('/', { url }), { ...dev, resolve });
      expect(moved).toMatchObject({ status: 202, responseSnippet: 'other' });
      address = '127.0.0.1';
      expect((await sendDelivery(build('/', { url }), { ...dev, resolve })).status).toBe(200);
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('asks DNS once per attempt and connects, kept connection or new, only to what that answer was checked to be', async () => {
    // A resolver whose answer flips at every question: a second lookup anywhere (the agent's, a
    // reconnect) would land on the other receiver, and a kept connection to one address must not
    // carry a request whose check chose the other.
    const other = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202).end('other'));
    });
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.2', resolve));
    closeDeliveryConnections();
    try {
      const answers: string[] = [];
      const resolve: Resolver = async () => {
        answers.push(answers.length % 2 === 0 ? '127.0.0.1' : '127.0.0.2');
        return [{ address: answers[answers.length - 1], family: 4 }];
      };
      const url = `http://hooks.invalid:${port}/status/200`;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await sendDelivery(build('/', { url }), { ...dev, resolve })).status ?? 0);
      expect(answers).toHaveLength(4);
      expect(statuses).toEqual(answers.map((a) => (a === '127.0.0.1' ? 200 : 202)));
    } finally {
      closeDeliveryConnections();
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it.each([
    [500, 'retry'],
    [503, 'retry'],
    [400, 'fail'],
    [404, 'fail'],
    [429, 'retry'],
  ] as const)('reports status %i, which is a %s', async (status, outcome) => {
    const result = await sendDelivery(build(`/status/${status}`), dev);
    expect(result.status).toBe(status);
    expect(result.responseSnippet).toBe(`answer ${status}`);
    expect(classifyResponse(result)).toBe(outcome);
  });

  it('does not follow a redirect', async () => {
    const result = await sendDelivery(build('/redirect'), dev);
    expect(result.status).toBe(302);
    expect(classifyResponse(result)).toBe('retry');
    expect(seen.map((s) => s.path)).toEqual(['/redirect']);
  });

  it('gives up on a receiver that never answers', async () => {
    const result = await sendDelivery(build('/silent'), { ...dev, timeoutMs: 200 });
    expect(result).toMatchObject({ error: 'timeout', responseSnippet: '' });
    expect(result.status).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
    expect(result.durationMs).toBeLessThan(2000);
    expect(classifyResponse(result)).toBe('retry');
  });

  it('does not take an informational answer (103 Early Hints) for the receiver\'s answer', async () => {
    const result = await sendDelivery(build('/hints'), { ...dev, timeoutMs: 300 });
    expect(result).toMatchObject({ error: 'timeout', responseSnippet: '' });
    expect(result.status).toBeUndefined();
  });

  it('gives up on a receiver whose TLS handshake never completes', async () => {
    // A TCP server that takes the connection and never says a word: the attempt waits in connecting.
    const held: Socket[] = [];
    const mute = createTcpServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(mute.address() as AddressInfo).port}/hook`;
      const result = await sendDelivery(build('/', { url }), { ...dev, timeoutMs: 300 });
      expect(result).toMatchObject({ error: 'timeout' });
      expect(result.durationMs).toBeLessThan(2000);
    } finally {
      closeDeliveryConnections();
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => mute.close(resolve));
    }
  });

  it('reads no more of the answer than allowed', async () => {
    const result = await sendDelivery(build('/big'), { ...dev, maxResponseBytes: 1000, timeoutMs: 5000 });
    expect(result.status).toBe(200);
    expect(result.truncated).toBe(true);
    expect(result.responseSnippet).toBe('a'.repeat(1000));
    expect(result.durationMs).toBeLessThan(4000);
  });

  it('counts a status as the answer when the body then stalls, and the next delivery gets a sound connection', async () => {
    const stalled = await sendDelivery(build('/stall'), { ...dev, timeoutMs: 300 });
    expect(stalled).toMatchObject({ status: 200, responseSnippet: 'partial', truncated: false });
    expect(classifyResponse(stalled)).toBe('success');
    const capped = await sendDelivery(build('/big'), { ...dev, maxResponseBytes: 10 });
    expect(capped).toMatchObject({ status: 200, truncated: true });
    // Both connections above were cut mid-answer: the next delivery must not read their leftovers.
    for (let i = 0; i < 3; i++) expect(await sendDelivery(build('/status/201'), dev)).toMatchObject({ status: 201, responseSnippet: 'answer 201' });
  });

  it('refuses, without sending, a request whose header value cannot be sent', async () => {
    const req = build('/status/200');
    const result = await sendDelivery({ ...req, headers: { ...req.headers, 'X-Note': 'one\r\nX-Injected: two' } }, dev);
    expect(result.error).toBe('refused');
    expect(classifyResponse(result)).toBe('fail');
    expect(seen).toHaveLength(0);
  });

  it('sends GET without a body', async () => {
    const result = await sendDelivery(build('/status/200', { method: 'GET', bodyFormat: 'none', url: `http://127.0.0.1:${port}/status/200?e={{event.type}}` }), dev);
    expect(result.status).toBe(200);
    expect(seen[0]).toMatchObject({ method: 'GET', path: '/status/200?e=render.completed' });
    expect(seen[0].body).toHaveLength(0);
    expect(seen[0].headers['content-type']).toBeUndefined();
    expect(seen[0].headers['content-length']).toBeUndefined();
    // Issue 28: a GET's signature covers its method, path and query.
    expect(verifyRequestSignature(secret, seen[0].headers['x-service-signature'] as string, timestamp, { method: 'GET', target: seen[0].path, body: '' }, timestamp)).toBe(true);
  });

  it('refuses loopback in production before connecting, and that ends the delivery', async () => {
    const result = await sendDelivery(build('/status/200', { url: `https://127.0.0.1:${port}/status/200` }), { policy: 'production' });
    expect(result.error).toBe('refused');
    expect(result.errorMessage).toMatch(/not a public address/);
    expect(classifyResponse(result)).toBe('fail');
    const plain = await sendDelivery(build('/status/200'), { policy: 'production' });
    expect(plain.errorMessage).toMatch(/HTTPS only/);
    const named = await sendDelivery(build('/', { url: 'https://hooks.invalid/' }), { policy: 'production', resolve: async () => [{ address: '10.0.0.1', family: 4 }] });
    expect(named.error).toBe('refused');
    expect(seen).toHaveLength(0);
    // The refusal is the core SSRF check's own (OutboundRefused), carried as the message.
    await expect(resolveOutbound(`https://127.0.0.1:${port}/status/200`, 'production')).rejects.toThrow(result.errorMessage);
  });

  it('retries when the connection or DNS fails', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await sendDelivery(build('/', { url: `http://127.0.0.1:${closedPort}/` }), dev);
    expect(refused).toMatchObject({ error: 'connection', errorMessage: expect.stringMatching(/ECONNREFUSED/) });
    expect(classifyResponse(refused)).toBe('retry');

    const dns = await sendDelivery(build('/', { url: 'https://hooks.invalid/' }), { policy: 'production', resolve: () => Promise.reject(new Error('SERVFAIL')) });
    expect(dns).toMatchObject({ error: 'connection', errorMessage: 'DNS lookup failed: SERVFAIL' });
    expect(classifyResponse(dns)).toBe('retry');

    const slowDns = await sendDelivery(build('/', { url: 'https://hooks.invalid/' }), { policy: 'production', timeoutMs: 100, resolve: () => new Promise(() => undefined) });
    expect(slowDns.error).toBe('timeout');
  });
});
