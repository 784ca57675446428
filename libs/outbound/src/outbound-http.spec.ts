import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboundError, requestPinned } from './outbound-http.js';
import type { ResolvedTarget } from './ssrf.js';

// The pinned request's body from a file and its abort, against a loopback server that echoes what it got.
describe('requestPinned', () => {
  let server: Server;
  let dir: string;
  let target: (path: string) => ResolvedTarget;
  const received: Buffer[] = [];
  /** The client port of each request: the same port twice is one connection reused. */
  const ports: number[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pinned-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      ports.push(req.socket.remotePort!);
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks));
        if (req.url === '/hang') return;
        if (req.url === '/big') return void res.end(Buffer.alloc(5 * 1024 * 1024, 'z'));
        if (req.url === '/missing') return void res.writeHead(404).end('no such file');
        res.end(`got ${Buffer.concat(chunks).length} of ${req.headers['content-length']}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    target = (path) => ({ url: new URL(`http://127.0.0.1:${port}${path}`), address: '127.0.0.1', family: 4 });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('GETs to the same checked address reuse one connection; other methods and another pinned address do not', async () => {
    ports.length = 0;
    for (let i = 0; i < 3; i++) expect((await requestPinned({ target: target('/a'), keepAlive: true, timeoutMs: 5000, maxResponseBytes: 1024 })).status).toBe(200);
    expect(new Set(ports).size).toBe(1);
    await requestPinned({ target: target('/a'), keepAlive: true, method: 'POST', body: Buffer.from('x'), timeoutMs: 5000, maxResponseBytes: 1024 });
    await requestPinned({ target: target('/a'), timeoutMs: 5000, maxResponseBytes: 1024 });
    expect(new Set(ports.slice(3)).size).toBe(2);
    expect(ports.slice(3)).not.toContain(ports[0]);
    // The same URL pinned to another address (where nothing listens) never rides the free socket to the first one.
    const named = (address: string) => ({ ...target('/a'), url: new URL(target('/a').url.href.replace('127.0.0.1', 'pinned.test')), address });
    expect((await requestPinned({ target: named('127.0.0.1'), keepAlive: true, timeoutMs: 5000, maxResponseBytes: 1024 })).status).toBe(200);
    const refused = await requestPinned({ target: named('127.0.0.2'), keepAlive: true, timeoutMs: 5000, maxResponseBytes: 1024 }).catch((e: unknown) => e);
    expect([refused instanceof OutboundError && refused.kind, ports.length]).toEqual(['connection', 6]);
    // A large answer read whole comes back intact (its socket chunks freed once joined).
    const big = await requestPinned({ target: target('/big'), timeoutMs: 5000, maxResponseBytes: 6 * 1024 * 1024 });
    expect([big.body.length, big.body.every((b) => b === 0x7a)]).toEqual([5 * 1024 * 1024, true]);
  });

  it('a kept-alive connection the server closes before answering is tried once more on a fresh one', async () => {
    // Answers the first request of each connection and drops the connection on its second, unanswered.
    const served = new WeakMap<object, number>();
    const dropping = createServer((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      if (n > 1) return void req.socket.destroy();
      res.end(`answer ${req.socket.remotePort}`);
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    try {
      const at: ResolvedTarget = { url: new URL(`http://127.0.0.1:${(dropping.address() as AddressInfo).port}/`), address: '127.0.0.1', family: 4 };
      const first = await requestPinned({ target: at, keepAlive: true, timeoutMs: 5000, maxResponseBytes: 1024 });
      const second = await requestPinned({ target: at, keepAlive: true, timeoutMs: 5000, maxResponseBytes: 1024 });
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.body.toString()).not.toBe(first.body.toString());
    } finally {
      dropping.closeAllConnections();
      await new Promise((resolve) => dropping.close(resolve));
    }
  });

  it('streams a file body with its length announced', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 7, 'ab');
    const path = join(dir, 'body.bin');
    await writeFile(path, bytes);
    const res = await requestPinned({ target: target('/'), method: 'POST', body: { path, size: bytes.length }, timeoutMs: 5000, maxResponseBytes: 1000 });
    expect(res.body.toString()).toBe(`got ${bytes.length} of ${bytes.length}`);
    expect(received.at(-1)!.equals(bytes)).toBe(true);
  });

  it('fails a file shorter than announced instead of leaving the server waiting', async () => {
    const path = join(dir, 'short.bin');
    await writeFile(path, Buffer.alloc(100));
    const started = Date.now();
    await expect(requestPinned({ target: target('/'), method: 'POST', body: { path, size: 200 }, timeoutMs: 5000, maxResponseBytes: 1000 })).rejects.toMatchObject({ kind: 'connection', message: expect.stringContaining('100 bytes, not the 200') });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('saveTo: a 2xx body goes to the file as it arrives, cut at the cap; other answers are read as usual', async () => {
    const path = join(dir, 'saved.bin');
    const small = await requestPinned({ target: target('/'), saveTo: path, timeoutMs: 5000, maxResponseBytes: 1000 });
    expect([small.status, small.body.length, small.savedBytes, small.truncated]).toEqual([200, 0, 'got 0 of undefined'.length, false]);
    expect(await readFile(path, 'utf8')).toBe('got 0 of undefined');
    const cut = await requestPinned({ target: target('/big'), saveTo: path, timeoutMs: 5000, maxResponseBytes: 64 * 1024 });
    expect([cut.truncated, cut.savedBytes, (await stat(path)).size]).toEqual([true, 64 * 1024, 64 * 1024]);
    const missing = await requestPinned({ target: target('/missing'), saveTo: join(dir, 'never.bin'), timeoutMs: 5000, maxResponseBytes: 1000 });
    expect([missing.status, missing.body.toString(), missing.savedBytes]).toEqual([404, 'no such file', undefined]);
    await expect(stat(join(dir, 'never.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stops at once when its signal aborts, and refuses to start on an aborted one', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const err = await requestPinned({ target: target('/hang'), timeoutMs: 5000, maxResponseBytes: 1000, signal: controller.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundError);
    expect(err).toMatchObject({ kind: 'aborted' });
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(requestPinned({ target: target('/'), timeoutMs: 5000, maxResponseBytes: 1000, signal: controller.signal })).rejects.toMatchObject({ kind: 'aborted' });
  });
});
