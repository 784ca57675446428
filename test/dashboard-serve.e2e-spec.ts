import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startApi, type TestApi } from './harness.js';

// Issue 18: the API serves the built dashboard at `/` (docs/decisions.md "Dashboard"): hashed assets
// cached for a year, index.html never cached, the app's own paths answered with index.html when a
// browser asks for a page, and the API (under its prefix, §7 envelope) and /files untouched.

describe('the dashboard served by the API', () => {
  const built = mkdtempSync(join(tmpdir(), 'mr-dash-'));
  const INDEX = '<!doctype html><title>dash</title><script type="module" src="/assets/index-Ab12Cd34.js"></script>';
  let api: TestApi;
  let bare: TestApi;
  let real: TestApi;
  /** A bundle-sized script that compresses as real ones do. */
  const BIG = Array.from({ length: 2000 }, (_, i) => `export const value${i} = ${JSON.stringify({ i, label: `item ${i}` })};`).join('\n');
  const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

  beforeAll(async () => {
    mkdirSync(join(built, 'assets'));
    writeFileSync(join(built, 'index.html'), INDEX);
    writeFileSync(join(built, 'assets', 'index-Ab12Cd34.js'), 'console.log("dashboard")');
    writeFileSync(join(built, 'assets', 'big-Ef56Gh78.js'), BIG);
    // The build's own step (npm run dashboard:build ends with it).
    execFileSync(process.execPath, ['scripts/compress-dashboard.mjs', join(built, 'assets')]);
    api = await startApi({ DASHBOARD_DIR: built });
    bare = await startApi({ DASHBOARD_DIR: join(built, 'missing') });
    real = await startApi();
  });
  afterAll(async () => {
    await api.close();
    await bare.close();
    await real.close();
    rmSync(built, { recursive: true, force: true });
  });

  it('answers / with index.html, not cached, and hashed assets cached for a year', async () => {
    const root = await api.app.inject({ method: 'GET', url: '/' });
    expect([root.statusCode, root.headers['content-type'], root.headers['cache-control'], root.body]).toEqual([200, 'text/html; charset=utf-8', 'no-cache', INDEX]);
    const asset = await api.app.inject({ method: 'GET', url: '/assets/index-Ab12Cd34.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.body).toBe('console.log("dashboard")');
    const missing = await api.app.inject({ method: 'GET', url: '/assets/index-Zz.js', headers: html });
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'NOT_FOUND']);
  });

  it('issue 29: sends the assets brotli- or gzip-compressed as the browser accepts (copies made at build), plain otherwise, still cached for a year', async () => {
    const get = (encoding?: string) => api.app.inject({ method: 'GET', url: '/assets/big-Ef56Gh78.js', headers: encoding ? { 'accept-encoding': encoding } : {} });
    const br = await get('gzip, deflate, br');
    expect([br.statusCode, br.headers['content-encoding'], br.headers['cache-control']]).toEqual([200, 'br', 'public, max-age=31536000, immutable']);
    expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(BIG);
    expect(br.rawPayload.length).toBeLessThan(BIG.length / 4);
    const gz = await get('gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(BIG);
    const plain = await get();
    expect([plain.headers['content-encoding'], plain.body]).toEqual([undefined, BIG]);
  });

  it('issue 29: the built dashboard\'s first page (index.html, its scripts and styles) is sent in at most 120 KB', async () => {
    const index = await real.app.inject({ method: 'GET', url: '/', headers: { ...html, 'accept-encoding': 'br' } });
    expect(index.statusCode).toBe(200);
    const files = [...index.body.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThan(0);
    let total = index.rawPayload.length;
    for (const url of files) {
      const res = await real.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect([url, res.statusCode, res.headers['content-encoding']]).toEqual([url, 200, 'br']);
      total += res.rawPayload.length;
    }
    console.log(`dashboard: first page ${(total / 1024).toFixed(1)} KB transferred (brotli), ${files.length + 1} files`);
    expect(total).toBeLessThanOrEqual(120 * 1024);
  });

  it('opens the app on its own paths for a browser (a reload of /renders/…), with the query', async () => {
    for (const url of ['/renders/rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P', '/templates?scope=library', '/keys']) {
      const res = await api.app.inject({ method: 'GET', url, headers: html });
      expect([url, res.statusCode, res.headers['cache-control'], res.body]).toEqual([url, 200, 'no-cache', INDEX]);
    }
    // Not a browser asking for a page: the API's 404 in the §7 envelope, as before.
    const json = await api.app.inject({ method: 'GET', url: '/keys', headers: { accept: 'application/json' } });
    expect([json.statusCode, json.json().code]).toEqual([404, 'NOT_FOUND']);
    const post = await api.app.inject({ method: 'POST', url: '/keys', headers: html });
    expect(post.statusCode).toBe(404);
    expect(post.json().code).toBe('NOT_FOUND');
  });

  it('leaves the API and /files alone: their routes answer, unknown ones are the §7 404 even for a browser', async () => {
    const health = await api.app.inject({ method: 'GET', url: '/api/health', headers: html });
    expect([health.statusCode, health.json().success]).toEqual([200, true]);
    for (const url of ['/api/v1/nothing-here', '/api', '/files/none/such.png']) {
      const res = await api.app.inject({ method: 'GET', url, headers: html });
      expect([url, res.statusCode, res.json().code]).toEqual([url, 404, 'NOT_FOUND']);
    }
    const keyRoute = await api.app.inject({ method: 'GET', url: '/api/v1/render', headers: html });
    expect([keyRoute.statusCode, keyRoute.json().code]).toEqual([401, 'NO_API_KEY']);
  });

  it('without a built dashboard, / says how to build it (404) and the API answers as usual', async () => {
    const root = await bare.app.inject({ method: 'GET', url: '/', headers: html });
    expect(root.statusCode).toBe(404);
    expect(root.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(root.body).toContain('npm run build');
    const asset = await bare.app.inject({ method: 'GET', url: '/assets/index-Ab12Cd34.js' });
    expect([asset.statusCode, asset.json().code]).toEqual([404, 'NOT_FOUND']);
    expect((await bare.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });
});
