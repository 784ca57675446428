import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createStorage, libraryKey, outputKey, type StorageDriver } from '#libs/storage';
import { startApi, type TestApi } from './harness.js';
import { s3Env } from './s3.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3f3c8d40000000049454e44ae426082', 'hex');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.domain)</script></svg>');

/** A raw request whose path goes out exactly as written (fetch and inject would resolve `..`). */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('stored files at /files/* (issue 5: output storage)', () => {
  let api: TestApi;
  let storage: StorageDriver;
  let port: number;
  const video = randomBytes(200_000);
  let videoPath: string;
  let pngPath: string;
  let svgPath: string;

  beforeAll(async () => {
    api = await startApi();
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.getHttpServer().address() as AddressInfo).port;
    storage = createStorage(api.config); // the same DATA_DIR as the API
    const pathOf = (key: string) => new URL(storage.url(key)).pathname;
    const videoKey = outputKey('rnd_01JD0000000000000000000001', 'mp4');
    await storage.put(videoKey, video, { contentType: 'video/mp4' });
    videoPath = pathOf(videoKey);
    pngPath = pathOf((await storage.put(outputKey('rnd_01JD0000000000000000000002', 'png'), PNG)).key);
    svgPath = pathOf((await storage.put(libraryKey('shapes/star.svg'), SVG)).key);
    writeFileSync(join(api.config.dataDir, 'secret.txt'), 'not for the public');
  });
  afterAll(() => api.close());

  const get = (url: string, headers: Record<string, string> = {}) => api.app.inject({ method: 'GET', url, headers });

  it('serves a file at the path of its public URL, outside the API prefix and without a key', async () => {
    expect(videoPath).toMatch(/^\/files\/r\/rnd_01JD0000000000000000000001\/[A-Za-z0-9_-]{22}\.mp4$/);
    const res = await get(videoPath);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(video)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'video/mp4',
      'content-length': String(video.length),
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      'accept-ranges': 'bytes',
    });
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect((await get(`/api${videoPath}`)).statusCode).toBe(404);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const full = await get(videoPath);
    const head = await api.app.inject({ method: 'HEAD', url: videoPath });
    expect(head.statusCode).toBe(200);
    expect(head.rawPayload.length).toBe(0);
    for (const h of ['content-type', 'content-length', 'etag', 'last-modified', 'cache-control', 'accept-ranges']) {
      expect([h, head.headers[h]]).toEqual([h, full.headers[h]]);
    }
  });

  it('serves single byte ranges in each form with 206 and Content-Range', async () => {
    const size = video.length;
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=150000-', 150_000, size - 1],
      ['bytes=-500', size - 500, size - 1],
      ['bytes=199990-300000', 199_990, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await get(videoPath, { range });
      expect([range, res.statusCode, res.headers['content-range'], res.headers['content-length']])
        .toEqual([range, 206, `bytes ${start}-${end}/${size}`, String(end - start + 1)]);
      expect(res.rawPayload.equals(video.subarray(start, end + 1))).toBe(true);
    }
    const several = await get(videoPath, { range: 'bytes=0-1,10-11' });
    expect(several.statusCode).toBe(200);
    expect(several.rawPayload.equals(video)).toBe(true);
  });

  it('answers 416 with the size for a range past the end', async () => {
    for (const range of [`bytes=${video.length}-`, 'bytes=-0']) {
      const res = await get(videoPath, { range });
      expect([range, res.statusCode, res.headers['content-range']]).toEqual([range, 416, `bytes */${video.length}`]);
    }
  });

  it('answers 304 to a matching If-None-Match, and ignores a Range whose If-Range no longer matches', async () => {
    const { etag } = (await get(videoPath)).headers;
    const cached = await get(videoPath, { 'if-none-match': String(etag) });
    expect(cached.statusCode).toBe(304);
    expect(cached.rawPayload.length).toBe(0);
    expect(cached.headers.etag).toBe(etag);
    expect((await get(videoPath, { 'if-none-match': '"stale"' })).statusCode).toBe(200);
    const resumed = await get(videoPath, { range: 'bytes=100-', 'if-range': String(etag) });
    expect(resumed.statusCode).toBe(206);
    const changed = await get(videoPath, { range: 'bytes=100-', 'if-range': '"stale"' });
    expect(changed.statusCode).toBe(200);
    expect(changed.rawPayload.equals(video)).toBe(true);
  });

  it('adds Content-Disposition: attachment with ?download=1', async () => {
    const res = await get(`${videoPath}?download=1`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${videoPath.split('/').pop()}"`);
    expect((await get(videoPath)).headers['content-disposition']).toBeUndefined();
  });

  it('types files by extension: png as image/png; svg as image/svg+xml under a CSP that blocks script', async () => {
    const png = await get(pngPath);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.rawPayload.equals(PNG)).toBe(true);
    expect(png.headers['content-security-policy']).toBeUndefined();
    const svg = await get(svgPath);
    expect(svgPath).toBe('/files/library/shapes/star.svg');
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(svg.rawPayload.equals(SVG)).toBe(true);
  });

  it('answers 404 NOT_FOUND in the error envelope for an unknown key, a deleted file and any key that is not valid', async () => {
    const key = outputKey('rnd_01JD0000000000000000000003', 'png');
    const path = new URL(storage.url(key)).pathname;
    for (const url of [path, '/files/', '/files/r', '/files/.hidden']) {
      const res = await get(url);
      expect([url, res.statusCode]).toEqual([url, 404]);
      expect(res.json()).toEqual({ success: false, code: 'NOT_FOUND', message: expect.any(String), data: null });
      expect(res.headers['cache-control']).toBeUndefined();
    }
    // A NUL in any path is refused before any lookup, as on every route (decisions.md "HTTP and errors").
    const nul = await get('/files/r/a%00b.png');
    expect([nul.statusCode, nul.json().code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(nul.headers['cache-control']).toBeUndefined();
    await storage.put(key, PNG);
    expect((await get(path)).statusCode).toBe(200);
    await storage.delete(key);
    expect((await get(path)).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'HEAD', url: path })).statusCode).toBe(404);
  });

  it('never reaches a file outside the storage folder, however the path is encoded', async () => {
    const attempts = [
      '/files/../secret.txt', '/files/%2e%2e/secret.txt', '/files/%2E%2E/secret.txt', '/files/r/%2e%2e/%2e%2e/secret.txt',
      '/files/..%2fsecret.txt', '/files/%2e%2e%2fsecret.txt', '/files/..%5csecret.txt', '/files/%2fetc%2fpasswd', '/files//etc/passwd',
    ];
    for (const path of attempts) {
      const res = await rawGet(port, path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body).not.toContain('not for the public');
      expect(JSON.parse(res.body)).toMatchObject({ success: false, code: 'NOT_FOUND' });
    }
  });
});

describe('stored files with the S3 driver: downloaded from the bucket, never through the API (issue 14)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi(s3Env());
  });
  afterAll(() => api.close());

  it('answers 404 at /files/* for a stored file, whose URL is a presigned GET of the bucket that serves it', async () => {
    const storage = createStorage(api.config);
    const key = outputKey('rnd_01JD0000000000000000000009', 'png');
    await storage.put(key, PNG);
    const { storage: s3 } = api.config;
    if (s3.driver !== 's3') throw new Error('expected the s3 driver');
    const url = storage.url(key);
    expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/${key}?X-Amz-Algorithm=AWS4-HMAC-SHA256&`)).toBe(true);
    const direct = await fetch(url);
    expect([direct.status, direct.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await direct.arrayBuffer()).equals(PNG)).toBe(true);
    // The library's previews the API stored at start are in the bucket too, and not served here either.
    await expect(storage.stat(libraryKey('previews/tpl_lib_og_image.jpg'))).resolves.toMatchObject({ contentType: 'image/jpeg' });
    for (const path of [`/files/${key}`, '/files/library/previews/tpl_lib_og_image.jpg']) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await api.app.inject({ method, url: path });
        expect([method, path, res.statusCode]).toEqual([method, path, 404]);
        if (method === 'GET') expect(res.json()).toMatchObject({ success: false, code: 'NOT_FOUND' });
      }
    }
  });
});
