import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { INestApplicationContext } from '@nestjs/common';
import { Redis } from 'ioredis';
import sharp from 'sharp';
import { openAppDatabase } from '#libs/app';
import { Asset, AssetsService } from '#libs/assets';
import { type ApiError } from '#libs/core';
import { PLANS } from '#libs/workspaces';
import { allWorkspaces, type Orm } from '#libs/db';
import { IntegrationConnection, IntegrationsService } from '#libs/integrations';
import { RedisKeys } from '#libs/redis';
import { createStorage, type StorageDriver } from '#libs/storage';
import { codeChallenge, DriveService, GoogleTokens } from '#libs/suite';
import { LoopbackServer } from '#testing/integrations';
import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Contract §4.5 (the workspace-suite drive rows and their parameters), §2 (Storage file; Asset),
// §5 (integrations:read / :write, assets:write), §7 (402/409/404), §8 (files limit 1–200, default 50);
// decisions: FILE_NOT_FOUND, imports answer the asset (201) as a voice-over does; docs/suite.md.

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string };
const BASE = '/v1/integrations/workspace-suite/drive';
/** ASSET_MAX_BYTES here: the cap of a URL's download and of an import. */
const CAP = 256 * 1024;

/** Loopback "public" files: `/red.png`, `/notes.txt`, `/huge.bin` (an endless 2 GB stream; `hugeSent` counts what left), `/missing` (404). */
class FileServer {
  hugeSent = 0;
  red = Buffer.alloc(0);
  private readonly server = new LoopbackServer((req, res) => {
    if (req.url === '/media/red%20square.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(this.red);
    if (req.url === '/notes.txt') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello drive');
    if (req.url === '/huge.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(2 * 1024 ** 3) });
      const chunk = Buffer.alloc(64 * 1024);
      const pump = () => {
        while (this.hugeSent < 2 * 1024 ** 3 && !res.destroyed) {
          this.hugeSent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    res.writeHead(404).end('not here');
  });
  baseUrl = '';
  async start() {
    this.baseUrl = await this.server.start();
    this.red = await sharp({ create: { width: 64, height: 40, channels: 3, background: '#ff0000' } }).png().toBuffer();
    return this;
  }
  close() {
    return this.server.close();
  }
}

describe('workspace-suite drive (§4.5)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let storage: StorageDriver;
  let google: GoogleFake;
  let other: GoogleFake;
  let files: FileServer;
  let ws: Ws;
  let bare: Ws;

  beforeAll(async () => {
    google = await startGoogleFake();
    other = await startGoogleFake({ clientId: google.clientId, clientSecret: google.clientSecret });
    files = await new FileServer().start();
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, GOOGLE_TIMEOUT_MS: '3000', ASSET_MAX_BYTES: String(CAP) });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    storage = createStorage(api.config);
    [ws, bare] = [await create(), await create()];
    await connect(ws, google);
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await Promise.all([google.close(), other.close(), files.close()]);
  });

  const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Drive', '--plan', plan)).json as Ws;
  const connect = async (w: Ws, g: GoogleFake, expiresAt = new Date(Date.now() + 3600_000).toISOString()) => {
    const res = await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'workspace-suite', '--access-token', g.accessToken,
      '--refresh-token', g.refreshToken, '--expires-at', expiresAt, '--base-url', g.baseUrl);
    expect(res.code).toBe(0);
  };
  const inject = (method: 'GET' | 'POST', url: string, key: string, payload?: Json) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
  const assetCount = (w: Ws) => allWorkspaces(orm).fork().count(Asset, { workspaceId: w.workspaceId });
  const driveTemps = () => readdirSync(tmpdir()).filter((n) => n.startsWith('mr-drive-'));
  const settled = (key: string, id: string) => until(async () => {
    const a = (await inject('GET', `/v1/assets/${id}`, key)).json().data as Json;
    return a.status === 'ready' || a.status === 'failed' ? a : undefined;
  }, `asset ${id}`, 60_000);
  const fail = (g: GoogleFake, failure: GoogleFake['failure'], times = Infinity, on: GoogleFake['failOn'] = null) => Object.assign(g, { failure, failTimes: times, failOn: on });
  const heal = (g: GoogleFake) => fail(g, null);

  it('§7 not connected → 409 on every route; a plan without integrations → 402; Google is not asked', async () => {
    const calls = google.requests.length;
    for (const [method, path, body] of [['GET', '/files', undefined], ['POST', '/files', { url: `${files.baseUrl}/notes.txt` }], ['POST', '/folders', { name: 'x' }], ['POST', '/files/1abc/import', {}]] as const) {
      const res = await inject(method, `${BASE}${path}`, bare.liveKey, body);
      expect([method, path, res.statusCode, res.json().code]).toEqual([method, path, 409, 'INTEGRATION_NOT_CONNECTED']);
    }
    const free = await create('free');
    await connect(free, google);
    const res = await inject('GET', `${BASE}/files`, free.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_INTEGRATION_NOT_ALLOWED']);
    expect(google.requests.length).toBe(calls);
  });

  it('§5 scopes: list with integrations:read; upload and folders need integrations:write; import needs assets:write', async () => {
    const reader = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'integrations:read')).json.key as string;
    expect((await inject('GET', `${BASE}/files`, reader)).statusCode).toBe(200);
    for (const [path, body] of [['/files', { url: `${files.baseUrl}/notes.txt` }], ['/folders', { name: 'x' }], ['/files/1abc/import', {}]] as const) {
      const res = await inject('POST', `${BASE}${path}`, reader, body);
      expect([path, res.statusCode, res.json().code]).toEqual([path, 403, 'INSUFFICIENT_SCOPE']);
    }
    const writer = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'integrations:write')).json.key as string;
    const res = await inject('POST', `${BASE}/files/1abc/import`, writer, {});
    expect([res.statusCode, res.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });

  it('§2 a folder is created (files.create, the folder MIME type, parents); an unknown parent → 404 FILE_NOT_FOUND; bad bodies → 422', async () => {
    const res = await inject('POST', `${BASE}/folders`, ws.liveKey, { name: '  Campaign renders ' });
    expect(res.statusCode).toBe(201);
    const folder = res.json().data as Json;
    expect(folder).toEqual({ id: expect.any(String), name: 'Campaign renders', mimeType: 'application/vnd.google-apps.folder', sizeBytes: null, isFolder: true, webViewUrl: `https://drive.google.com/drive/folders/${folder.id as string}` });
    const call = google.apiCalls.at(-1)!;
    expect([call.method, call.path, call.json]).toEqual(['POST', '/drive/v3/files', { name: 'Campaign renders', mimeType: 'application/vnd.google-apps.folder' }]);
    const child = await inject('POST', `${BASE}/folders`, ws.liveKey, { name: 'Stills', parentId: folder.id });
    expect(child.statusCode).toBe(201);
    expect(google.drive.get(child.json().data.id as string)!.parents).toEqual([folder.id]);
    const missing = await inject('POST', `${BASE}/folders`, ws.liveKey, { name: 'Orphan', parentId: '1NoSuchFolder' });
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'FILE_NOT_FOUND']);
    for (const body of [{}, { name: '   ' }, { name: 'x'.repeat(256) }, { name: 'ok', parentId: '../etc' }]) {
      const bad = await inject('POST', `${BASE}/folders`, ws.liveKey, body);
      expect([JSON.stringify(body), bad.statusCode, bad.json().code]).toEqual([JSON.stringify(body), 422, 'VALIDATION_FAILED']);
    }
  });

  it('§2 list storage files: the top level or a folder, folders first, search, kind (family, folder, MIME type), limit 1–200 (50), a cursor walk', async () => {
    const folder = google.addDriveFile('Brand kit', 'application/vnd.google-apps.folder');
    google.addDriveFile('logo.png', 'image/png', Buffer.from('png'), [folder]);
    google.addDriveFile('jingle.mp3', 'audio/mpeg', Buffer.from('mp3'), [folder]);
    google.addDriveFile('promo.mp4', 'video/mp4', Buffer.from('mp4'), [folder]);
    google.addDriveFile('Inter.ttf', 'font/ttf', Buffer.from('ttf'), [folder]);
    const sub = google.addDriveFile('Archive', 'application/vnd.google-apps.folder', undefined, [folder]);
    const top = await inject('GET', `${BASE}/files`, ws.liveKey);
    expect(top.statusCode).toBe(200);
    const call = google.apiCalls.at(-1)!;
    expect([call.path, call.query.q, call.query.pageSize, call.query.orderBy]).toEqual(['/drive/v3/files', "'root' in parents and trashed = false", '50', 'folder,name']);
    expect(call.query.fields).toBe('nextPageToken,files(id,name,mimeType,size,webViewLink)');
    expect((top.json().data as Json[]).map((f) => f.name)).toContain('Brand kit');
    expect((top.json().data as Json[]).map((f) => f.name)).not.toContain('logo.png');

    const inside = await inject('GET', `${BASE}/files?folderId=${folder}`, ws.liveKey);
    expect((inside.json().data as Json[]).map((f) => f.name)).toEqual(['Archive', 'Inter.ttf', 'jingle.mp3', 'logo.png', 'promo.mp4']);
    expect((inside.json().data as Json[])[3]).toEqual({ id: expect.any(String), name: 'logo.png', mimeType: 'image/png', sizeBytes: 3, isFolder: false, webViewUrl: expect.stringMatching(/^https:\/\/drive\.google\.com\/file\/d\//) });
    const kinds: [string, string[]][] = [['image', ['logo.png']], ['video', ['promo.mp4']], ['audio', ['jingle.mp3']], ['font', ['Inter.ttf']], ['folder', ['Archive']], ['audio/mpeg', ['jingle.mp3']]];
    for (const [kind, names] of kinds) {
      const res = await inject('GET', `${BASE}/files?folderId=${folder}&kind=${encodeURIComponent(kind)}`, ws.liveKey);
      expect([kind, (res.json().data as Json[]).map((f) => f.name)]).toEqual([kind, names]);
    }
    const found = await inject('GET', `${BASE}/files?folderId=${folder}&search=JING`, ws.liveKey);
    expect((found.json().data as Json[]).map((f) => f.name)).toEqual(['jingle.mp3']);
    expect(google.apiCalls.at(-1)!.query.q).toContain("name contains 'JING'");

    const seen: string[] = [];
    let token: string | null = null;
    do {
      const page = await inject('GET', `${BASE}/files?folderId=${folder}&limit=2${token ? `&pageToken=${token}` : ''}`, ws.liveKey);
      expect(page.statusCode).toBe(200);
      seen.push(...(page.json().data as Json[]).map((f) => f.name as string));
      token = page.json().nextPageToken as string | null;
    } while (token);
    expect(seen).toEqual(['Archive', 'Inter.ttf', 'jingle.mp3', 'logo.png', 'promo.mp4']);
    void sub;
    for (const q of ['limit=0', 'limit=201', 'kind=spreadsheet', 'kind=image%2F', 'folderId=a%2Fb', 'pageToken=%20x']) {
      const bad = await inject('GET', `${BASE}/files?${q}`, ws.liveKey);
      expect([q, bad.statusCode, bad.json().code]).toEqual([q, 422, 'VALIDATION_FAILED']);
    }
    const badToken = await inject('GET', `${BASE}/files?pageToken=forged`, ws.liveKey);
    expect([badToken.statusCode, badToken.json().code, Object.keys(badToken.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['query.pageToken']]);
  });

  it('§4.5 upload from a URL: downloaded, then one resumable upload (session, PUT); name from the URL, folderId, mimeType override', async () => {
    const res = await inject('POST', `${BASE}/files`, ws.liveKey, { url: `${files.baseUrl}/media/red%20square.png` });
    expect(res.statusCode).toBe(201);
    const file = res.json().data as Json;
    expect(file).toEqual({ id: expect.any(String), name: 'red square.png', mimeType: 'image/png', sizeBytes: files.red.length, isFolder: false, webViewUrl: expect.any(String) });
    expect(google.drive.get(file.id as string)!.content!.equals(files.red)).toBe(true);
    const [start, put] = google.apiCalls.slice(-2);
    expect([start!.method, start!.path, start!.query.uploadType, start!.headers['x-upload-content-length'], start!.headers['x-upload-content-type']]).toEqual(['POST', '/upload/drive/v3/files', 'resumable', String(files.red.length), 'image/png']);
    expect([put!.method, put!.bodyBytes, put!.authorization]).toEqual(['PUT', files.red.length, `Bearer ${google.accessToken}`]);

    const folder = google.addDriveFile('Uploads', 'application/vnd.google-apps.folder');
    const named = await inject('POST', `${BASE}/files`, ws.liveKey, { url: `${files.baseUrl}/notes.txt`, name: 'readme', folderId: folder, mimeType: 'text/markdown' });
    expect(named.statusCode).toBe(201);
    expect(named.json().data).toMatchObject({ name: 'readme', mimeType: 'text/markdown', sizeBytes: 11 });
    expect(google.drive.get(named.json().data.id as string)!.parents).toEqual([folder]);
    expect(google.uploadSessions.size).toBe(0);
    expect(driveTemps()).toEqual([]);
  });

  it('bad sources: not a URL → 422; a 2 GB file stops at the cap (413, nothing in Drive); a 404 → 422 MEDIA_UNAVAILABLE; production refuses private addresses', async () => {
    for (const url of ['not a url', 'ftp://example.com/a.png', 'file:///etc/passwd']) {
      const bad = await inject('POST', `${BASE}/files`, ws.liveKey, { url });
      expect([url, bad.statusCode, bad.json().code]).toEqual([url, 422, 'VALIDATION_FAILED']);
    }
    const before = google.drive.size;
    const calls = google.apiCalls.length;
    const huge = await inject('POST', `${BASE}/files`, ws.liveKey, { url: `${files.baseUrl}/huge.bin` });
    expect([huge.statusCode, huge.json().code]).toEqual([413, 'ASSET_TOO_LARGE']);
    await until(async () => (files.hugeSent < 2 * 1024 ** 3 ? true : undefined), 'the source stopped', 5000);
    expect(files.hugeSent).toBeLessThan(64 * 1024 * 1024);
    expect([google.drive.size, google.apiCalls.length, google.uploadSessions.size]).toEqual([before, calls, 0]);
    const missing = await inject('POST', `${BASE}/files`, ws.liveKey, { url: `${files.baseUrl}/missing` });
    expect([missing.statusCode, missing.json().code]).toEqual([422, 'MEDIA_UNAVAILABLE']);
    expect(missing.json().message).toContain('404');

    // Production's SSRF rules (libs/outbound ssrf.ts), a stubbed resolver: no connection is opened.
    const services = { integrations: new IntegrationsService(orm, api.config), redis: undefined as never, redisKeys: undefined as never, lookup: async () => [{ address: '10.0.0.7', family: 4 }] };
    const config = { ...api.config, env: 'production' as const };
    const drive = new DriveService({ ...services, config, tokens: new GoogleTokens({ ...services, config }), assets: new AssetsService(orm, storage), storage });
    const row = await allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: ws.workspaceId, provider: 'workspace-suite' });
    const use = services.integrations.usable(row, 'workspace-suite');
    for (const [url, why] of [['https://files.example.com/a.png', 'not a public address'], ['https://127.0.0.1/a.png', 'not a public address'], [`${files.baseUrl}/notes.txt`, 'http URLs are refused']]) {
      const err = (await drive.upload(use, { url, name: null, folderId: null, mimeType: null }).catch((e: unknown) => e)) as ApiError;
      expect([url, err.code, err.extras.errors]).toEqual([url, 'VALIDATION_FAILED', { url: [expect.stringContaining(why)] }]);
    }
    expect([google.drive.size, google.apiCalls.length]).toEqual([before, calls]);
    expect(driveTemps()).toEqual([]);
  });

  it('provider failures: 500 and 429 retried then 503; a failed PUT cancels the session (nothing in Drive); slow → 503; malformed JSON → 502', async () => {
    const before = google.drive.size;
    try {
      fail(google, 'server-error');
      const down = await inject('GET', `${BASE}/files`, ws.liveKey);
      expect([down.statusCode, down.json().code, down.headers['retry-after']]).toEqual([503, 'PROVIDER_UNAVAILABLE', '30']);
      fail(google, 'rate-limit', 2);
      const retried = await inject('GET', `${BASE}/files`, ws.liveKey);
      expect(retried.statusCode).toBe(200);
      fail(google, 'rate-limit');
      const limited = await inject('POST', `${BASE}/folders`, ws.liveKey, { name: 'Never' });
      expect([limited.statusCode, limited.json().code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);

      // The bytes' PUT fails: 5xx is not retried (it may have written); the session is cancelled.
      fail(google, 'server-error', Infinity, (r) => r.method === 'PUT');
      const cut = await inject('POST', `${BASE}/files`, ws.liveKey, { url: `${files.baseUrl}/notes.txt` });
      expect([cut.statusCode, cut.json().code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);
      expect(google.apiCalls.filter((r) => r.method === 'PUT').length).toBeGreaterThan(0);
      expect(google.apiCalls.at(-1)!.method).toBe('DELETE');
      expect(google.uploadSessions.size).toBe(0);

      fail(google, 'malformed', 1);
      const garbled = await inject('GET', `${BASE}/files`, ws.liveKey);
      expect([garbled.statusCode, garbled.json().code]).toEqual([502, 'PROVIDER_ERROR']);
      fail(google, 'hang');
      const t0 = Date.now();
      const slow = await inject('POST', `${BASE}/folders`, ws.liveKey, { name: 'Slow' });
      expect([slow.statusCode, slow.json().code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      heal(google);
    }
    expect(google.drive.size).toBe(before);
    expect(driveTemps()).toEqual([]);
  });

  it('import: a Drive image becomes an asset (folder, tags), processed to ready, and a still render draws it', async () => {
    const red = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const id = google.addDriveFile('Red banner.png', 'image/png', red);
    const res = await inject('POST', `${BASE}/files/${id}/import`, ws.liveKey, { folder: 'drive', tags: 'Brand, red' });
    expect(res.statusCode).toBe(201);
    const asset = res.json().data as Json;
    expect(asset).toMatchObject({ name: 'Red banner.png', type: 'image', status: 'processing', folder: 'drive', tags: ['brand', 'red'], sizeBytes: red.length });
    const media = google.apiCalls.at(-1)!;
    expect([media.path, media.query.alt]).toEqual([`/drive/v3/files/${id}`, 'media']);
    expect(await settled(ws.liveKey, asset.id as string)).toMatchObject({ status: 'ready', width: 320, height: 200 });
    const render = await inject('POST', '/v1/render', ws.liveKey, {
      edit: { timeline: { background: '#ffffff', tracks: [{ clips: [{ asset: { type: 'image', src: asset.id }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 320, height: 200 } } },
    });
    expect([render.statusCode, render.json().data?.status]).toEqual([200, 'done']);
    const out = await api.app.inject({ method: 'GET', url: new URL(render.json().data.url as string).pathname });
    const { data } = await sharp(out.rawPayload).raw().toBuffer({ resolveWithObject: true });
    expect([data[0], data[1], data[2]]).toEqual([255, 0, 0]);
    expect(driveTemps()).toEqual([]);
  }, 90_000);

  it('import refusals: unknown id → 404 FILE_NOT_FOUND; a Google doc or folder → 422; not media → 422; over the cap → 413; bad fields → 422; the allowance → 402; nothing stored', async () => {
    const count = await assetCount(ws);
    for (const fileId of ['1NoSuchFile', 'bad.id']) {
      const res = await inject('POST', `${BASE}/files/${fileId}/import`, ws.liveKey, {});
      expect([fileId, res.statusCode, res.json().code]).toEqual([fileId, 404, 'FILE_NOT_FOUND']);
    }
    const doc = google.addDriveFile('Plan', 'application/vnd.google-apps.document');
    const folder = google.addDriveFile('Folder', 'application/vnd.google-apps.folder');
    for (const fileId of [doc, folder]) {
      const res = await inject('POST', `${BASE}/files/${fileId}/import`, ws.liveKey, {});
      expect([res.statusCode, res.json().code]).toEqual([422, 'UNSUPPORTED_ASSET']);
      expect(res.json().message).toMatch(/cannot be downloaded/);
    }
    const text = google.addDriveFile('notes.txt', 'text/plain', Buffer.from('just words, not media'));
    const notMedia = await inject('POST', `${BASE}/files/${text}/import`, ws.liveKey, {});
    expect([notMedia.statusCode, notMedia.json().code]).toEqual([422, 'UNSUPPORTED_ASSET']);
    const big = google.addDriveFile('big.mp4', 'video/mp4', Buffer.alloc(CAP + 1));
    const calls = google.apiCalls.length;
    const tooBig = await inject('POST', `${BASE}/files/${big}/import`, ws.liveKey, {});
    expect([tooBig.statusCode, tooBig.json().code]).toEqual([413, 'ASSET_TOO_LARGE']);
    expect(google.apiCalls.slice(calls).map((r) => r.query.alt ?? 'metadata')).toEqual(['metadata']);
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00ff00' } }).png().toBuffer();
    const green = google.addDriveFile('green.png', 'image/png', png);
    const badTags = await inject('POST', `${BASE}/files/${green}/import`, ws.liveKey, { tags: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') });
    expect([badTags.statusCode, badTags.json().code, Object.keys(badTags.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['tags']]);
    expect(await assetCount(ws)).toBe(count);

    // §4.5 "Uses the storage allowance": a workspace with no room left.
    const full = await create();
    await connect(full, google);
    const plan = PLANS.pro;
    const filler = await new AssetsService(orm, storage).reserve(full.workspaceId, plan, { mode: 'live', name: 'filler.mp4', type: 'video', mimeType: 'video/mp4', ext: 'mp4', reserveBytes: plan.storageBytes - 10 });
    const before = google.apiCalls.length;
    const over = await inject('POST', `${BASE}/files/${green}/import`, full.liveKey, {});
    expect([over.statusCode, over.json().code]).toEqual([402, 'LIMIT_STORAGE']);
    // Refused on files.get's announced size: the bytes were never downloaded.
    expect(google.apiCalls.slice(before).map((r) => r.query.alt ?? 'metadata')).toEqual(['metadata']);
    expect(await assetCount(full)).toBe(1);
    await new AssetsService(orm, storage).discard(filler);
    expect(driveTemps()).toEqual([]);
  });

  it('tokens: an expired token is refreshed once and sealed back; a revoked grant → 409 reauth; another workspace\'s connection is never used', async () => {
    const w = await create();
    const g = await startGoogleFake({ clientId: google.clientId, clientSecret: google.clientSecret });
    try {
      await connect(w, g, new Date(Date.now() - 1000).toISOString());
      const res = await inject('GET', `${BASE}/files`, w.liveKey);
      expect(res.statusCode).toBe(200);
      expect(g.refreshes).toHaveLength(1);
      const row = await allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: w.workspaceId, provider: 'workspace-suite' });
      expect(new IntegrationsService(orm, api.config).usable(row, 'workspace-suite').credentials.accessToken).toBe(g.accessToken);
      g.expireAccessToken();
      expect((await inject('POST', `${BASE}/folders`, w.liveKey, { name: 'After 401' })).statusCode).toBe(201);
      expect(g.refreshes).toHaveLength(2);

      // Isolation: `other`'s account belongs to another workspace; ws's calls never reach it.
      const elsewhere = await create();
      await connect(elsewhere, other);
      const mine = google.apiCalls.length;
      expect((await inject('GET', `${BASE}/files`, ws.liveKey)).statusCode).toBe(200);
      expect(other.apiCalls).toHaveLength(0);
      expect(google.apiCalls.length).toBe(mine + 1);
      expect((await inject('GET', `${BASE}/files`, elsewhere.liveKey)).statusCode).toBe(200);
      expect(other.apiCalls).toHaveLength(1);

      g.revokeGrant();
      const lapsed = await inject('GET', `${BASE}/files`, w.liveKey);
      expect([lapsed.statusCode, lapsed.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
      const again = await inject('POST', `${BASE}/files/1abc/import`, w.liveKey, {});
      expect([again.statusCode, again.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
    } finally {
      await g.close();
    }
  });

  it('connect flow: integration:authorize prints a PKCE (S256) consent URL, the verifier sealed in Redis with a TTL; integration:connect trades the code once', async () => {
    const w = await create();
    const g = await startGoogleFake({ clientId: google.clientId, clientSecret: google.clientSecret });
    const redis = new Redis(api.config.redisUrl);
    try {
      const authorize = async (target: Ws) => {
        const res = await api.cli('integration:authorize', '--workspace', target.workspaceId, '--provider', 'workspace-suite', '--base-url', g.baseUrl);
        expect(res.code).toBe(0);
        return res.json as { authorizationUrl: string; state: string; redirectUri: string; expiresAt: string };
      };
      const consent = await authorize(w);
      const url = new URL(consent.authorizationUrl);
      expect(`${url.origin}${url.pathname}`).toBe(`${g.baseUrl}/auth`);
      const q = Object.fromEntries(url.searchParams);
      expect(q).toMatchObject({ client_id: google.clientId, response_type: 'code', code_challenge_method: 'S256', access_type: 'offline', prompt: 'consent', state: consent.state, redirect_uri: 'http://127.0.0.1' });
      expect(q.code_challenge).toMatch(/^[\w-]{43}$/);
      expect(q.scope!.split(' ')).toEqual(expect.arrayContaining(['https://www.googleapis.com/auth/drive', 'https://www.googleapis.com/auth/spreadsheets']));
      const key = new RedisKeys(api.config.redisPrefix).oauthConsent(consent.state);
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThan(500);
      expect(ttl).toBeLessThanOrEqual(600);
      const kept = (await redis.get(key))!;
      expect(kept).toMatch(/^v1\./);
      expect(kept).not.toContain(w.workspaceId);

      // The user consents: the authorization server redirects with the code and the state.
      const visit = async (authorizationUrl: string) => {
        const back = await fetch(authorizationUrl, { redirect: 'manual' });
        expect(back.status).toBe(302);
        const to = new URL(back.headers.get('location')!);
        return { code: to.searchParams.get('code')!, state: to.searchParams.get('state')! };
      };
      const { code, state } = await visit(consent.authorizationUrl);
      expect(state).toBe(consent.state);
      const connect = (target: Ws, ...flags: string[]) => api.cli('integration:connect', '--workspace', target.workspaceId, '--provider', 'workspace-suite', ...flags);

      // Another workspace cannot use this state (a refused attempt spends it); an unknown state is refused.
      const elsewhere = await create();
      for (const [target, st] of [[elsewhere, state], [w, 'not-a-state']] as const) {
        const refused = await connect(target, '--code', code, '--state', st);
        expect([refused.code, (refused.json.error as Json).code]).toEqual([1, 'VALIDATION_FAILED']);
      }
      const second = await authorize(w);
      const granted = await visit(second.authorizationUrl);
      const ok = await connect(w, '--code', granted.code, '--state', granted.state);
      expect(ok.code).toBe(0);
      expect(ok.json).toMatchObject({ provider: 'workspace-suite', status: 'connected' });
      const exchange = g.refreshes.at(-1)!;
      expect(exchange.form).toMatchObject({ grant_type: 'authorization_code', code: granted.code, redirect_uri: 'http://127.0.0.1', client_id: google.clientId });
      expect(codeChallenge(exchange.form!.code_verifier!)).toBe(new URL(second.authorizationUrl).searchParams.get('code_challenge'));
      const row = await allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: w.workspaceId, provider: 'workspace-suite' });
      expect(new IntegrationsService(orm, api.config).usable(row, 'workspace-suite').credentials).toMatchObject({ accessToken: g.accessToken, refreshToken: g.refreshToken });
      expect(row.baseUrl).toBe(g.baseUrl);
      const listed = await inject('GET', `${BASE}/files`, w.liveKey);
      expect(listed.statusCode).toBe(200);
      expect(g.apiCalls.at(-1)!.authorization).toBe(`Bearer ${g.accessToken}`);
      // The state is used up; and the fake refuses a verifier that does not match the challenge.
      const replay = await connect(w, '--code', granted.code, '--state', granted.state);
      expect((replay.json.error as Json).code).toBe('VALIDATION_FAILED');
      const third = await visit((await authorize(w)).authorizationUrl);
      const wrong = await fetch(`${g.baseUrl}/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: third.code, code_verifier: 'x'.repeat(64), redirect_uri: 'http://127.0.0.1', client_id: google.clientId, client_secret: google.clientSecret }),
      });
      expect([wrong.status, ((await wrong.json()) as Json).error]).toEqual([400, 'invalid_grant']);
      // A code the server refuses (here: already spent) → VALIDATION_FAILED naming code; the connection stays as it was.
      const spent = await connect(w, '--code', third.code, '--state', third.state);
      expect(spent.json.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('invalid_grant') });
      expect((await inject('GET', `${BASE}/files`, w.liveKey)).statusCode).toBe(200);
    } finally {
      redis.disconnect();
      await g.close();
    }
  });
});
