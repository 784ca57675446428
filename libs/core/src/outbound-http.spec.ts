import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pinned-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks));
        if (req.url === '/hang') return;
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
