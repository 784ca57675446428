import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import { Asset, AssetsService, ASSET_TYPES as STOCK_TYPES, seedStock, STOCK_ITEMS, stockAssetId, type StockItem } from '#libs/assets';
import { newId } from '#libs/core';
import { PLANS } from '#libs/workspaces';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { JobQueues } from '#libs/queue';
import { createStorage, type StorageDriver } from '#libs/storage';
import { openAppDatabase } from '#libs/app';
import { pngBomb, sampleMedia, silentMp3 } from '#testing/media';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { multipart, queueEvents, secondApi, startApi, storedKey, testContext, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Issue 14, the media library: contract §2 (Asset), §3 (Asset status), §4.4 (list, upload, delete),
// §5 (assets:read / assets:write), §7 (error envelope), §8 (upload limits, storage ceiling); house
// decisions in docs/decisions.md "Assets".

// Large enough for the 10-hour silent MP3 below (36 MB); the 413 cases send a little more.
const MAX = 40 * 1024 * 1024;

/** An asset as GET /v1/assets/{id} shows it. */
type AssetJson = { id: string; status: string; thumbnailUrl: string; waveformUrl: string | null; error: { code: string; message: string } | null } & Record<string, unknown>;

describe('assets (§4.4)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let key: string;
  let other: string;
  let workspaceId: string;
  let png: Buffer;
  let storage: StorageDriver;

  beforeAll(async () => {
    api = await startApi({ ASSET_MAX_BYTES: String(MAX) });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Media', '--plan', 'enterprise')).json as { workspaceId: string; liveKey: string });
    other = (await api.cli('workspace:create', '--name', 'Other')).json.liveKey as string;
    storage = createStorage(api.config);
    png = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#e76f51' } }).png().toBuffer();
  }, 60_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
  });

  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, opts: { key?: string; payload?: Buffer | object; headers?: Record<string, string> } = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': opts.key ?? key, ...opts.headers }, ...(opts.payload ? { payload: opts.payload } : {}) });
  const upload = (parts: Parameters<typeof multipart>[0], as = key) => {
    const body = multipart(parts);
    return inject('POST', '/v1/assets', { key: as, payload: body.payload, headers: body.headers });
  };
  const get = (id: string, as = key) => inject('GET', `/v1/assets/${id}`, { key: as });
  const list = (query: string, as = key) => inject('GET', `/v1/assets${query}`, { key: as });
  /** Waits until the asset leaves uploading/processing; answers its record as the API shows it. */
  const settled = async (id: string, as = key): Promise<AssetJson> => {
    // Polled in the database (the API's rate limit counts requests), then read once through the API.
    await until(async () => {
      const row = await allWorkspaces(orm).fork().findOne(Asset, { id });
      return row && ['ready', 'failed'].includes(row.status);
    }, `asset ${id} to settle`, 60_000);
    return (await get(id, as)).json().data as AssetJson;
  };
  /** A stored file by its URL as a client fetches it: `/files/…` of the API (local), or the bucket's URL (s3). */
  const fetchUrl = async (url: string): Promise<{ statusCode: number; rawPayload: Buffer; body: string }> => {
    if (url.startsWith(`${api.config.publicUrl}/files/`)) return api.app.inject({ method: 'GET', url: new URL(url).pathname });
    const res = await fetch(url);
    const rawPayload = Buffer.from(await res.arrayBuffer());
    return { statusCode: res.status, rawPayload, body: rawPayload.toString('utf8') };
  };
  const rowsOf = async () => allWorkspaces(orm).find(Asset, { workspaceId });
  const storedKeys = (id: string) => allWorkspaces(orm).findOne(Asset, { id });
  /** Stored folders (`a/<id>/`) whose asset has no record: what a refused upload must not leave. */
  const orphanFolders = async () => {
    const ids = new Set<string>();
    for await (const o of storage.list('a/')) ids.add(o.key.split('/')[1] as string);
    const rows = await allWorkspaces(orm).find(Asset, { id: { $in: [...ids] } });
    return [...ids].filter((id) => !rows.some((r) => r.id === id));
  };

  it('§4.4 upload answers {id, url} at once; the worker makes it ready with its size, dimensions and a thumbnail; asset.ready is written', async () => {
    const res = await upload([{ name: 'file', file: png, filename: 'poster.png', type: 'image/png' }, { name: 'tags', value: 'Brand, Summer,brand' }, { name: 'description', value: 'Our poster' }, { name: 'folder', value: '/campaigns/2026/' }]);
    expect(res.statusCode).toBe(201);
    const { id, url } = res.json().data as { id: string; url: string };
    expect(id).toMatch(/^ast_/);
    const ready = await settled(id);
    expect(ready).toMatchObject({
      id, type: 'image', scope: 'workspace', name: 'poster.png', description: 'Our poster', mimeType: 'image/png', sizeBytes: png.length,
      width: 640, height: 400, durationSec: null, tags: ['brand', 'summer'], folder: 'campaigns/2026', status: 'ready', error: null,
    });
    // The same file (on S3 each read signs a fresh URL: its X-Amz-Date moves with the clock).
    expect(storedKey(api.config, url)).toMatch(new RegExp(`^a/${id}/[\\w-]+\\.png$`));
    expect(storedKey(api.config, ready.url as string)).toBe(storedKey(api.config, url));
    const file = await fetchUrl(url);
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(png)).toBe(true);
    const thumb = await fetchUrl(ready.thumbnailUrl);
    const meta = await sharp(thumb.rawPayload).metadata();
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(320);
    const events = await forWorkspace(orm, workspaceId).find(OutboxEvent, { type: 'asset.ready' });
    expect(events.map((e) => e.data.id)).toContain(id);
  });

  it('types a file from its bytes, not its name or Content-Type', async () => {
    const res = await upload([{ name: 'file', file: png, filename: 'clip.mp4', type: 'video/mp4' }]);
    expect(res.statusCode).toBe(201);
    expect(await settled(res.json().data.id)).toMatchObject({ type: 'image', mimeType: 'image/png', name: 'clip.mp4', status: 'ready' });
  });

  it('§7 a file of no accepted type → 422 UNSUPPORTED_ASSET naming the accepted types; nothing is stored', async () => {
    const before = (await rowsOf()).length;
    const res = await upload([{ name: 'file', file: Buffer.from('just some text, not media\n'.repeat(20)), filename: 'notes.png', type: 'image/png' }]);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ success: false, code: 'UNSUPPORTED_ASSET', data: null });
    expect(res.json().message).toMatch(/png.*jpeg.*mp4.*mp3.*ttf.*lottie.*svg/is);
    expect((await rowsOf()).length).toBe(before);
  });

  it('§7 malformed uploads → 400 INVALID_REQUEST: not multipart, no file part, two files, an empty file; nothing is stored', async () => {
    const before = (await rowsOf()).length;
    const json = await inject('POST', '/v1/assets', { payload: { file: 'x' } });
    expect([json.statusCode, json.json().code]).toEqual([400, 'INVALID_REQUEST']);
    const noFile = await upload([{ name: 'tags', value: 'a' }]);
    expect([noFile.statusCode, noFile.json().code, noFile.json().message]).toEqual([400, 'INVALID_REQUEST', expect.stringMatching(/no file/i)]);
    const two = await upload([{ name: 'file', file: png, filename: 'a.png' }, { name: 'file', file: png, filename: 'b.png' }]);
    expect([two.statusCode, two.json().code]).toEqual([400, 'INVALID_REQUEST']);
    const empty = await upload([{ name: 'file', file: Buffer.alloc(0), filename: 'empty.png' }]);
    expect([empty.statusCode, empty.json().code, empty.json().message]).toEqual([400, 'INVALID_REQUEST', expect.stringMatching(/empty/i)]);
    const wrongPart = await upload([{ name: 'upload', file: png, filename: 'a.png' }]);
    expect([wrongPart.statusCode, wrongPart.json().code]).toEqual([400, 'INVALID_REQUEST']);
    expect((await rowsOf()).length).toBe(before);
  });

  it('§8 over ASSET_MAX_BYTES → 413 ASSET_TOO_LARGE, whether declared up front or found while streaming; nothing stays stored', async () => {
    const before = (await rowsOf()).length;
    // Declared: the request is longer than the limit allows, refused before a byte is read.
    const huge = Buffer.concat([png, randomBytes(MAX + 200 * 1024)]);
    const declared = await upload([{ name: 'file', file: huge, filename: 'huge.png' }]);
    expect([declared.statusCode, declared.json().code]).toEqual([413, 'ASSET_TOO_LARGE']);
    // Found while streaming: a request within the framing allowance whose file is over the limit.
    const over = Buffer.concat([png, randomBytes(MAX - png.length + 10 * 1024)]);
    const streamed = await upload([{ name: 'file', file: over, filename: 'over.png' }]);
    expect([streamed.statusCode, streamed.json().code]).toEqual([413, 'ASSET_TOO_LARGE']);
    expect((await rowsOf()).length).toBe(before);
    expect(await orphanFolders()).toEqual([]);
  });

  it('§4.4/§8 fields: more than 20 tags, a description over 2000 characters, an unknown field → 422 VALIDATION_FAILED by path; nothing stored', async () => {
    const before = (await rowsOf()).length;
    const res = await upload([
      { name: 'file', file: png, filename: 'a.png' },
      { name: 'tags', value: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') },
      { name: 'description', value: 'x'.repeat(2001) },
      { name: 'colour', value: 'red' },
    ]);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: { tags: [expect.stringMatching(/20/)], description: [expect.stringMatching(/2000/)], colour: [expect.any(String)] } });
    expect((await rowsOf()).length).toBe(before);
  });

  it('a file name with ../, control characters or 10,000 characters is only a label: the file is stored under a key of our own', async () => {
    const names = ['../../etc/passwd.png', 'bad\u0001\u0007name.png', `${'n'.repeat(10_000)}.png`];
    for (const filename of names) {
      const res = await upload([{ name: 'file', file: png, filename }]);
      expect(res.statusCode).toBe(201);
      const { id, url } = res.json().data as { id: string; url: string };
      expect(storage.keyFromUrl(url)).toMatch(new RegExp(`^a/${id}/[A-Za-z0-9_-]{22}\\.png$`));
      const row = (await get(id)).json().data as { name: string };
      expect(row.name).not.toMatch(/[/\\\p{Cc}]/u);
      expect(row.name.length).toBeLessThanOrEqual(255);
    }
  });

  it('§3 a lying file (a PNG header on garbage) ends failed with a reason; the worker goes on processing', async () => {
    const liar = Buffer.concat([png.subarray(0, 33), randomBytes(4000)]);
    const bad = await upload([{ name: 'file', file: liar, filename: 'liar.png' }]);
    expect(bad.statusCode).toBe(201);
    const failed = await settled(bad.json().data.id);
    expect(failed.status).toBe('failed');
    expect(failed.error?.message.length).toBeGreaterThan(5);
    const events = await forWorkspace(orm, workspaceId).find(OutboxEvent, { type: 'asset.failed' });
    expect(events.map((e) => e.data.id)).toContain(bad.json().data.id);
    const good = await upload([{ name: 'file', file: png, filename: 'after.png' }]);
    expect(await settled(good.json().data.id)).toMatchObject({ status: 'ready' });
  });

  it('decompression bombs and cut-short media are refused by limits, not by running out of memory: failed with the reason', async () => {
    const cases = [
      { file: pngBomb(50_000, 50_000), filename: 'bomb.png', reason: /pixel|dimension|large/i },
      { file: await silentMp3(10), filename: 'ten-hours.mp3', reason: /lasts .*at most 3:00:00/ },
      { file: (await sampleMedia.mp4(2, 64, 48)).subarray(0, 1500), filename: 'cut.mp4', reason: /cut|truncat|damag|incomplete|no video|frames|read/i },
    ];
    const rssBefore = process.memoryUsage().rss;
    for (const c of cases) {
      const res = await upload([{ name: 'file', file: c.file, filename: c.filename }]);
      expect([c.filename, res.statusCode]).toEqual([c.filename, 201]);
      const done = await settled(res.json().data.id);
      expect([c.filename, done.status, done.error?.code]).toEqual([c.filename, 'failed', 'ASSET_INVALID']);
      expect(done.error?.message).toMatch(c.reason);
    }
    // The worker runs in this process: 7.5 GB of pixels or ten hours of audio were never decoded.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(400 * 1024 * 1024);
    const after = await upload([{ name: 'file', file: png, filename: 'still-works.png' }]);
    expect((await settled(after.json().data.id)).status).toBe('ready');
  }, 120_000);

  it('an SVG is served only sanitised: no script, no event handler, no remote reference', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50" onload="alert(1)"><script>alert(2)</script><image href="https://evil.example/x.png"/><rect width="100" height="50" fill="#e9c46a"/></svg>');
    const res = await upload([{ name: 'file', file: svg, filename: 'logo.svg', type: 'image/svg+xml' }]);
    expect(res.statusCode).toBe(201);
    const { id, url } = res.json().data as { id: string; url: string };
    const ready = await settled(id);
    expect(ready).toMatchObject({ type: 'svg', status: 'ready', width: 100, height: 50 });
    const served = (await fetchUrl(url)).body;
    expect(served).toContain('<rect');
    expect(served).not.toMatch(/script|onload|evil\.example/i);
    expect((await storedKeys(id))?.uploadKey).toBeNull();
  });

  it('§4.4 list: sorts with their natural order, search, type/status/folder/tags filters (tags: all of them), tiebreak by id', async () => {
    const ws = (await api.cli('workspace:create', '--name', 'Lists')).json as { liveKey: string };
    const small = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#000' } }).png().toBuffer();
    const ids: Record<string, string> = {};
    for (const [name, tags, folder, file] of [
      ['beta.png', 'red,square', 'shapes', small], ['alpha.png', 'red', 'shapes', png], ['gamma.png', 'blue,square', 'photos', small],
    ] as const) {
      const res = await upload([{ name: 'file', file, filename: name }, { name: 'tags', value: tags }, { name: 'folder', value: folder }, { name: 'description', value: `About ${name}` }], ws.liveKey);
      ids[name] = res.json().data.id;
      await settled(ids[name] as string, ws.liveKey);
    }
    const names = async (q: string) => (await list(q, ws.liveKey)).json().data.map((a: { name: string }) => a.name);
    expect(await names('?sort=name')).toEqual(['alpha.png', 'beta.png', 'gamma.png']);
    expect(await names('?sort=name&order=desc')).toEqual(['gamma.png', 'beta.png', 'alpha.png']);
    expect((await names('?sort=sizeBytes'))[0]).toBe('alpha.png');
    expect(await names('?sort=createdAt')).toEqual(['gamma.png', 'alpha.png', 'beta.png']);
    expect(await names('?tags=red,square')).toEqual(['beta.png']);
    expect((await names('?tags=SQUARE&sort=name'))).toEqual(['beta.png', 'gamma.png']);
    expect(await names('?folder=photos')).toEqual(['gamma.png']);
    expect(await names('?search=ABOUT%20ALPHA')).toEqual(['alpha.png']);
    expect(await names('?type=video,audio')).toEqual([]);
    expect(await names('?status=ready&type=image&sort=name&limit=2')).toEqual(['alpha.png', 'beta.png']);
    const page = await list('?sort=name&limit=2&page=2', ws.liveKey);
    expect(page.json().pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
    expect((await list('', ws.liveKey)).json().pagination.limit).toBe(24);
    // Another workspace's assets are in none of its lists.
    expect((await list('?scope=all&limit=100', key)).json().data.map((a: { id: string }) => a.id)).not.toContain(ids['alpha.png']);
  });

  it('§1.5 list refusals → 422 INVALID_LIST_QUERY naming the allowed values', async () => {
    for (const [q, path, allowed] of [
      ['?sort=size', 'query.sort', /createdAt, name, sizeBytes, type, durationSec/], ['?type=document', 'query.type', /image, video, audio, font, lottie, svg/],
      ['?status=done', 'query.status', /ready, processing, uploading, failed/], ['?scope=mine', 'query.scope', /workspace, global, all/],
      [`?search=${'s'.repeat(129)}`, 'query.search', /128/], ['?limit=101', 'query.limit', /100/], ['?page=4200&limit=24', 'query.page', /100,000|100000|narrower/],
    ] as const) {
      const res = await list(q);
      expect([q, res.statusCode, res.json().code]).toEqual([q, 422, 'INVALID_LIST_QUERY']);
      expect(res.json().errors[path].join(' ')).toMatch(allowed);
    }
    expect((await list(`?search=${'s'.repeat(128)}`)).statusCode).toBe(200);
  });

  it('renders read the assets they name in statements of at most 16 ids: all found across a boundary, none of another workspace', async () => {
    const res = await upload([{ name: 'file', file: png, filename: 'many.png', type: 'image/png' }]);
    const { id } = res.json().data as { id: string };
    await settled(id);
    const em = allWorkspaces(orm).fork();
    const row = await em.findOneOrFail(Asset, { id });
    const copy = (workspace: string | null) => {
      const made = em.create(Asset, { ...row, id: newId('asset'), workspaceId: workspace });
      return made.id;
    };
    const mine = Array.from({ length: 33 }, () => copy(workspaceId));
    const theirs = copy(newId('workspace'));
    // The stock library's (no workspace: ASSET_STOCK is off in tests).
    const stock = copy(null);
    await em.flush();
    const missing = newId('asset');
    // 36 distinct ids (mine twice over), more than one statement's 16.
    const found = await api.app.get(AssetsService).findMany(workspaceId, [...mine, theirs, stock, missing, ...mine]);
    expect([...found.keys()].sort()).toEqual([...mine, stock].sort());
    expect(found.get(mine[32]!)).toMatchObject({ id: mine[32], workspaceId, type: 'image', status: 'ready', fileKey: row.fileKey });
    expect(found.get(stock)).toMatchObject({ id: stock, workspaceId: null });
    expect(await api.app.get(AssetsService).findMany(workspaceId, [mine[0]!])).toEqual(new Map([[mine[0], found.get(mine[0]!)]]));
  });

  it('workspace isolation: another workspace\'s asset is 404 ASSET_NOT_FOUND on get and delete and stays', async () => {
    const res = await upload([{ name: 'file', file: png, filename: 'mine.png' }]);
    const { id } = res.json().data as { id: string };
    for (const r of [await get(id, other), await inject('DELETE', `/v1/assets/${id}`, { key: other }), await get('ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P')]) {
      expect([r.statusCode, r.json().code]).toEqual([404, 'ASSET_NOT_FOUND']);
    }
    expect((await get(id)).statusCode).toBe(200);
  });

  it('§4.4 delete: message only; the record and every stored file go; the storage it used is free again', async () => {
    const res = await upload([{ name: 'file', file: png, filename: 'bye.png' }]);
    const { id, url } = res.json().data as { id: string; url: string };
    const ready = await settled(id);
    const services = worker.get(AssetsService);
    const usedBefore = await services.usedBytes(workspaceId);
    const del = await inject('DELETE', `/v1/assets/${id}`);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toMatchObject({ success: true, data: null });
    expect((await get(id)).statusCode).toBe(404);
    expect((await fetchUrl(url)).statusCode).toBe(404);
    expect((await fetchUrl(ready.thumbnailUrl)).statusCode).toBe(404);
    expect(await services.usedBytes(workspaceId)).toBe(usedBefore - png.length);
  });

  it('§8 storage ceiling: an upload that does not fit → 402 LIMIT_STORAGE before anything is stored; concurrent reservations never overshoot', async () => {
    const ws = (await api.cli('workspace:create', '--name', 'Full', '--plan', 'free')).json as { workspaceId: string; liveKey: string };
    const services = worker.get(AssetsService);
    const plan = PLANS.free;
    // The workspace already holds all but 100 KB of its allowance.
    const filler = await services.reserve(ws.workspaceId, plan, { mode: 'live', name: 'filler.mp4', type: 'video', mimeType: 'video/mp4', ext: 'mp4', reserveBytes: plan.storageBytes - 100 * 1024 });
    await services.stored(filler, plan.storageBytes - 100 * 1024, { tags: [], description: null, folder: null });
    const res = await upload([{ name: 'file', file: Buffer.concat([png, randomBytes(150 * 1024)]), filename: 'big.png' }], ws.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_STORAGE']);
    expect(await allWorkspaces(orm).count(Asset, { workspaceId: ws.workspaceId })).toBe(1);
    // Ten reservations of 30 KB at once on 100 KB of room: exactly three fit.
    const results = await Promise.allSettled(Array.from({ length: 10 }, () =>
      services.reserve(ws.workspaceId, plan, { mode: 'live', name: 'x.png', type: 'image', mimeType: 'image/png', ext: 'png', reserveBytes: 30 * 1024 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(Array(7).fill('LIMIT_STORAGE'));
    expect(await services.usedBytes(ws.workspaceId)).toBeLessThanOrEqual(plan.storageBytes);
  });

  it('§5 scopes: listing needs assets:read, uploading and deleting assets:write', async () => {
    const readOnly = (await api.cli('key:create', '--workspace', workspaceId, '--mode', 'live', '--scopes', 'assets:read')).json.key as string;
    expect((await list('', readOnly)).statusCode).toBe(200);
    const up = await upload([{ name: 'file', file: png, filename: 'a.png' }], readOnly);
    expect([up.statusCode, up.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    const noRead = (await api.cli('key:create', '--workspace', workspaceId, '--mode', 'live', '--scopes', 'renders:read')).json.key as string;
    expect((await list('', noRead)).json().code).toBe('INSUFFICIENT_SCOPE');
  });

  it('the assets.sweep job removes uploads that stopped half-way and stored files no record owns; ready assets stay', async () => {
    const services = worker.get(AssetsService);
    const kept = await upload([{ name: 'file', file: png, filename: 'kept.png' }]);
    const keptId = kept.json().data.id as string;
    await settled(keptId);
    // An upload whose API process died mid-stream: its record still `uploading`, part of its bytes stored.
    const stalled = await services.reserve(workspaceId, PLANS.enterprise, { mode: 'live', name: 'cut.mp4', type: 'video', mimeType: 'video/mp4', ext: 'mp4', reserveBytes: 5000 });
    await storage.put(stalled.fileKey, randomBytes(1000));
    // Bytes whose record was never written (or was deleted before its files).
    await storage.put('a/ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3Z/orphan.png', png);
    // An upload whose processing job was lost (Redis restarted without its data): stored, `processing`, no job.
    const lost = await services.reserve(workspaceId, PLANS.enterprise, { mode: 'live', name: 'lost.png', type: 'image', mimeType: 'image/png', ext: 'png', reserveBytes: png.length });
    await storage.put(lost.fileKey, png);
    await services.stored(lost, png.length, { tags: [], description: null, folder: null });
    const queues = worker.get(JobQueues);
    const events = await queueEvents(queues, 'system');
    try {
      const job = await queues.add('assets.sweep', { now: new Date(Date.now() + 2 * 3600_000).toISOString() });
      // (The storage-ceiling test's three bare reservations are swept too.)
      const swept = await job.waitUntilFinished(events, 30_000);
      expect(swept.orphans).toBe(1);
      expect(swept.uploads).toBeGreaterThanOrEqual(1);
    } finally {
      await events.close();
    }
    expect(await allWorkspaces(orm).findOne(Asset, { id: stalled.id })).toBeNull();
    expect(await storage.stat(stalled.fileKey)).toBeUndefined();
    expect(await storage.stat('a/ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3Z/orphan.png')).toBeUndefined();
    expect((await get(keptId)).json().data.status).toBe('ready');
    expect(await settled(lost.id)).toMatchObject({ status: 'ready', width: 640, height: 400 });
    expect((await fetchUrl(kept.json().data.url)).statusCode).toBe(200);
  });

  describe('renders use assets (issue 14)', () => {
    const still = (clips: object[], extra: object = {}) => ({
      edit: { timeline: { background: '#ffffff', tracks: clips.map((c) => ({ clips: [c] })), ...extra }, output: { format: 'png', size: { width: 320, height: 200 } } },
    });
    const render = (body: object, as = key) => inject('POST', '/v1/render', { key: as, payload: body });

    it('an edit\'s src takes a ready image by asset id or by its URL; the picture is drawn from storage', async () => {
      const red = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#ff0000' } }).png().toBuffer();
      const up = await upload([{ name: 'file', file: red, filename: 'red.png' }]);
      const { id, url } = up.json().data as { id: string; url: string };
      await settled(id);
      for (const src of [id, url]) {
        const res = await render(still([{ asset: { type: 'image', src }, start: 0, length: 1 }]));
        expect([src, res.statusCode, res.json().data?.status]).toEqual([src, 200, 'done']);
        const out = await fetchUrl(res.json().data.url);
        const { data } = await sharp(out.rawPayload).raw().toBuffer({ resolveWithObject: true });
        expect([data[0], data[1], data[2]]).toEqual([255, 0, 0]);
      }
    });

    it('an uploaded font is used by its family once timeline.fonts names it by asset id', async () => {
      // Comfortaa renamed "Zomfortaa" in its name table: a family no system font provides.
      const original = readFileSync('/usr/share/fonts/truetype/comfortaa/Comfortaa-Regular.ttf');
      const renamed = Buffer.from(original.toString('latin1')
        .replaceAll('Comfortaa', 'Zomfortaa')
        .replaceAll('\u0000C\u0000o\u0000m\u0000f\u0000o\u0000r\u0000t\u0000a\u0000a', '\u0000Z\u0000o\u0000m\u0000f\u0000o\u0000r\u0000t\u0000a\u0000a'), 'latin1');
      const up = await upload([{ name: 'file', file: renamed, filename: 'zomfortaa.ttf', type: 'font/ttf' }]);
      const font = await settled(up.json().data.id);
      expect(font).toMatchObject({ type: 'font', status: 'ready', fontFamily: 'Zomfortaa' });
      const text = { asset: { type: 'text', text: 'Hello', font: { family: 'Zomfortaa', size: 40, color: '#000000' } }, start: 0, length: 1 };
      const without = await render(still([text]));
      expect(without.statusCode).toBe(422);
      const withFont = await render(still([text], { fonts: [{ src: font.id }] }));
      expect([withFont.statusCode, withFont.json().data?.status]).toEqual([200, 'done']);
    });

    it('another workspace\'s asset, an unknown one, one not ready or of the wrong type → 422 naming the path', async () => {
      const theirs = await upload([{ name: 'file', file: png, filename: 'theirs.png' }], other);
      await settled(theirs.json().data.id, other);
      const liar = await upload([{ name: 'file', file: Buffer.concat([png.subarray(0, 33), randomBytes(100)]), filename: 'liar.png' }]);
      await settled(liar.json().data.id);
      const font = (await list('?type=font&status=ready')).json().data[0] as AssetJson;
      const path = 'edit.timeline.tracks[0].clips[0].asset.src';
      for (const [src, why] of [
        [theirs.json().data.id, /does not exist/], ['ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P', /does not exist/], [liar.json().data.id, /failed/], [font.id, /font.*takes image/],
      ] as const) {
        const res = await render(still([{ asset: { type: 'image', src }, start: 0, length: 1 }]));
        expect([res.statusCode, res.json().code]).toEqual([422, 'VALIDATION_FAILED']);
        expect(res.json().errors[path].join(' ')).toMatch(why);
      }
      // Another workspace's file by its URL is refused the same way.
      const theirUrl = theirs.json().data.url as string;
      const byUrl = await render(still([{ asset: { type: 'image', src: theirUrl }, start: 0, length: 1 }]));
      expect([byUrl.statusCode, byUrl.json().errors?.[path]?.join(' ')]).toEqual([422, expect.stringMatching(/does not exist/)]);
    });
  });

  describe('the stock library (global scope)', () => {
    /** One stock item of each type, seeded through the same code as at start and processed by the worker. */
    const sample = STOCK_TYPES.map((type) => STOCK_ITEMS.find((i) => i.type === type && ('bundled' in i.file || existsSync(i.file.debian))) as StockItem);

    beforeAll(async () => {
      const queues = worker.get(JobQueues);
      await seedStock(orm, storage, async (assetId, run) => {
        await queues.add('asset.process', { assetId }, { jobId: run });
      }, sample);
      for (const item of sample) await settled(stockAssetId(item.slug));
    }, 120_000);

    it('every type is processed like an upload: dimensions, durations, a font\'s family, a Lottie\'s frames; each carries source and licence', async () => {
      const shown = (await list('?scope=global&limit=100')).json().data as AssetJson[];
      expect(shown.map((a) => a.id).sort()).toEqual(sample.map((i) => stockAssetId(i.slug)).sort());
      for (const a of shown) {
        const item = sample.find((i) => stockAssetId(i.slug) === a.id) as StockItem;
        expect(a).toMatchObject({ scope: 'global', status: 'ready', type: item.type, name: item.name, source: item.source, licence: item.licence, tags: item.tags, folder: item.folder });
        if (['image', 'video', 'svg'].includes(item.type)) expect([a.width, a.height]).toEqual([expect.any(Number), expect.any(Number)]);
        if (['video', 'audio'].includes(item.type)) expect(a.durationSec).toBeGreaterThan(0);
        if (item.type === 'font') expect(a.fontFamily).toEqual(expect.any(String));
        if (item.type === 'lottie') expect([a.frames, a.fps]).toEqual([expect.any(Number), expect.any(Number)]);
        if (item.type === 'audio') expect(a.waveformUrl).toEqual(expect.any(String));
      }
      // scope=all holds both; the default (workspace) none of them.
      const all = (await list('?scope=all&limit=100')).json().data.map((a: AssetJson) => a.id);
      expect(all).toEqual(expect.arrayContaining([...sample.map((i) => stockAssetId(i.slug))]));
      expect((await list('?limit=100')).json().data.map((a: AssetJson) => a.scope)).not.toContain('global');
    });

    it('is read-only: DELETE → 403 ASSET_READ_ONLY and the asset stays; every workspace reads it', async () => {
      const id = stockAssetId(sample[0]!.slug);
      const del = await inject('DELETE', `/v1/assets/${id}`);
      expect([del.statusCode, del.json().code]).toEqual([403, 'ASSET_READ_ONLY']);
      expect((await get(id)).json().data.status).toBe('ready');
      expect((await get(id, other)).statusCode).toBe(200);
    });

    it('renders take stock assets by id', async () => {
      const image = sample.find((i) => i.type === 'image') as StockItem;
      const res = await inject('POST', '/v1/render', { payload: { edit: { timeline: { tracks: [{ clips: [{ asset: { type: 'image', src: stockAssetId(image.slug) }, start: 0, length: 1 }] }] }, output: { format: 'jpeg', size: { width: 160, height: 90 } } } } });
      expect([res.statusCode, res.json().data?.status]).toEqual([200, 'done']);
    });

    it('the API seeds the whole catalog at start, once: a second start stores and queues nothing', async () => {
      const ctx = await testContext({ ASSET_STOCK: 'on' });
      try {
        const first = await secondApi(ctx);
        const seededOrm = await openAppDatabase(ctx.config.database, { migrate: false });
        try {
          const rows = await allWorkspaces(seededOrm).find(Asset, { workspaceId: null });
          expect(rows.length).toBe(STOCK_ITEMS.length);
          expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['processing']));
          const queue = first.get(JobQueues).queue('assets');
          expect(await queue.getWaitingCount()).toBe(STOCK_ITEMS.length);
          await first.close();
          const again = await secondApi(ctx);
          expect(await again.get(JobQueues).queue('assets').getWaitingCount()).toBe(STOCK_ITEMS.length);
          await again.close();
        } finally {
          await seededOrm.close(true);
        }
      } finally {
        await ctx.cleanup();
      }
    }, 60_000);
  });
});
