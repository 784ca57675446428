import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchMedia, MediaFetchError, RenderMediaCache } from './fetch.js';
import { sniff } from './sniff.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3f3c8d40000000049454e44ae426082', 'hex');

describe('media downloads (issue: remote media with timeouts, size caps, sniffing, SSRF)', () => {
  let server: Server;
  let base: string;
  let hits = 0;
  const flaky = new Map<string, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      if (req.url === '/img.png') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PNG);
      if (req.url === '/page') return void res.writeHead(200, { 'content-type': 'image/png' }).end('<html>hi</html>');
      if (req.url === '/big') return void res.writeHead(200).end(Buffer.concat([PNG, Buffer.alloc(4096)]));
      if (req.url === '/hop') return void res.writeHead(302, { location: '/img.png' }).end();
      if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/slow') return; // never answers
      // Fails the first time it is asked (503, a dropped connection), then answers.
      if (req.url === '/flaky-503') return void (flaky.get(req.url) ? res.writeHead(200).end(PNG) : (flaky.set(req.url, 1), res.writeHead(503).end()));
      if (req.url === '/flaky-reset') return void (flaky.get(req.url) ? res.writeHead(200).end(PNG) : (flaky.set(req.url, 1), req.socket.destroy()));
      if (req.url === '/down') return void res.writeHead(502).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('types files by their bytes, not the Content-Type header', async () => {
    const m = await fetchMedia(`${base}/img.png`, { policy: 'development', expect: ['image'] });
    expect(m).toMatchObject({ kind: 'image', mime: 'image/png' });
    expect(m.bytes.equals(PNG)).toBe(true);
    await expect(fetchMedia(`${base}/page`, { policy: 'development', expect: ['image'] })).rejects.toThrow(/not a media type/);
  });

  it('follows a few redirects, each checked, and stops at the limit', async () => {
    await expect(fetchMedia(`${base}/hop`, { policy: 'development' })).resolves.toMatchObject({ mime: 'image/png' });
    await expect(fetchMedia(`${base}/loop`, { policy: 'development' })).rejects.toThrow(/redirects/);
  });

  it('caps size and time', async () => {
    await expect(fetchMedia(`${base}/big`, { policy: 'development', limits: { maxBytes: 1024 } })).rejects.toThrow(/larger than/);
    await expect(fetchMedia(`${base}/slow`, { policy: 'development', limits: { timeoutMs: 300 } })).rejects.toThrow(/longer than 300 ms/);
    await expect(fetchMedia(`${base}/missing`, { policy: 'development' })).rejects.toThrow(/answered 404/);
  });

  it('tries once more what can pass on a second try (5xx, a dropped connection), and fails at once what cannot (issue 27)', async () => {
    await expect(fetchMedia(`${base}/flaky-503`, { policy: 'development' })).resolves.toMatchObject({ mime: 'image/png' });
    await expect(fetchMedia(`${base}/flaky-reset`, { policy: 'development' })).resolves.toMatchObject({ mime: 'image/png' });
    let before = hits;
    await expect(fetchMedia(`${base}/down`, { policy: 'development' })).rejects.toThrow(/answered 502/);
    expect(hits - before).toBe(2);
    before = hits;
    await expect(fetchMedia(`${base}/missing`, { policy: 'development' })).rejects.toThrow(/answered 404/);
    await expect(fetchMedia(`${base}/page`, { policy: 'development', expect: ['image'] })).rejects.toThrow(/not a media type/);
    expect(hits - before).toBe(2); // one request each
  });

  it('refuses loopback and plain HTTP in production', async () => {
    const err = await fetchMedia(`${base}/img.png`, { policy: 'production' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediaFetchError);
    expect((err as Error).message).toMatch(/Refused/);
  });

  it('downloads a URL once per render', async () => {
    const before = hits;
    const cache = new RenderMediaCache((url, expect) => fetchMedia(url, { policy: 'development', expect }));
    await Promise.all([cache.get(`${base}/img.png`), cache.get(`${base}/img.png`, ['image'])]);
    expect(hits - before).toBe(1);
    await expect(cache.get(`${base}/img.png`, ['video'])).rejects.toThrow(/Expected video/);
  });

  it('sniffs the common media types', () => {
    expect(sniff(Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'))?.mime).toBe('image/svg+xml');
    expect(sniff(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))?.mime).toBe('image/jpeg');
    expect(sniff(Buffer.from('\u0000\u0000\u0000\u0018ftypisom', 'latin1'))?.kind).toBe('video');
    expect(sniff(Buffer.from('ID3\u0003', 'latin1'))?.kind).toBe('audio');
    expect(sniff(Buffer.from('wOF2', 'latin1'))?.kind).toBe('font');
    expect(sniff(Buffer.from('hello'))).toBeNull();
  });
});
