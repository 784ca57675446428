import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { Asset } from '#libs/assets';
import { CreditsService } from '#libs/credits';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { Render } from '#libs/renders';
import { createStorage, type StorageDriver } from '#libs/storage';
import { openAppDatabase } from '#libs/app';
import { hostileWoff, withFamilyName } from '#testing/media';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { multipart, startApi, type TestApi } from './harness.js';
import { eventsOf, ledgerOf, until } from './render-helpers.js';

// Issue 27, "One request cannot exhaust a worker" and "The browser renders only what the outbound
// rules allowed": a WOFF whose tables share one deflated blob (25 KB → 128 MB), overlapping tables,
// and a family name holding a form feed before CSS. One font reader (libs/media font.ts) under one
// limit (docs/decisions.md "Hostile input (issue 27): fonts") refuses them for uploads (the asset
// fails with the reason, §3) and for timeline.fonts (422 MEDIA_UNAVAILABLE by path, §7), and nothing
// large is stored or written.

const DEJAVU = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf');
/** Where the worker's still engine writes the fonts of timeline.fonts (FontCatalog's default). */
const FONT_DIR = join(tmpdir(), 'still-fonts');
/** The one font limit (MAX_FONT_BYTES of libs/media): no font file the engine writes is larger. */
const FONT_LIMIT = 32 * 1024 * 1024;

describe('hostile fonts (issue 27)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let storage: StorageDriver;
  let key: string;
  let workspaceId: string;
  let server: Server;
  let origin: string;
  let started: number;
  const hits: string[] = [];
  const bomb = hostileWoff.bomb(DEJAVU);
  const formFeed = withFamilyName(DEJAVU, 'Zqx Evil\f} body { background: url(/leak.png) }');
  const served: Record<string, Buffer> = {
    '/bomb.woff': bomb,
    '/overlapping.woff': hostileWoff.overlapping(DEJAVU),
    '/form-feed.ttf': formFeed,
  };

  beforeAll(async () => {
    started = Date.now();
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    storage = createStorage(api.config);
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Hostile fonts', '--plan', 'pro')).json as { workspaceId: string; liveKey: string });
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const body = served[req.url ?? ''];
      if (body) return void res.writeHead(200, { 'content-type': 'font/woff' }).end(body);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    server.close();
    await worker.close();
    await orm.close(true);
    await api.close();
  });

  const inject = (method: 'GET' | 'POST', url: string, payload?: object | Buffer, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key, ...headers }, ...(payload ? { payload } : {}) });
  const upload = (file: Buffer, filename: string, type: string) => {
    const body = multipart([{ name: 'file', file, filename, type }]);
    return inject('POST', '/v1/assets', body.payload, body.headers);
  };
  const settled = async (id: string) => {
    await until(async () => ['ready', 'failed'].includes((await allWorkspaces(orm).fork().findOne(Asset, { id }))?.status ?? ''), `asset ${id} to settle`, 60_000);
    return (await inject('GET', `/v1/assets/${id}`)).json().data as { status: string; sizeBytes: number; fontFamily: string | null; error: { code: string; message: string } | null };
  };
  /** Every stored object under the asset's folder, with its size. */
  const storedUnder = async (id: string) => {
    const found: { key: string; size: number }[] = [];
    for await (const o of storage.list(`a/${id}/`)) found.push({ key: o.key, size: (await storage.stat(o.key))?.sizeBytes ?? -1 });
    return found;
  };
  /** Font files the still engine wrote since this file started that are over the font limit. */
  const largeFontsWritten = async () => {
    const names = await readdir(FONT_DIR).catch(() => [] as string[]);
    const large: string[] = [];
    for (const name of names) {
      const s = await stat(join(FONT_DIR, name)).catch(() => undefined);
      if (s && s.mtimeMs >= started && s.size > FONT_LIMIT) large.push(`${name}: ${s.size}`);
    }
    return large;
  };
  const imageCredits = async () => (await new CreditsService(orm).balance(workspaceId, 'pro')).credits.image;
  const text = (family: string) => ({ asset: { type: 'text', text: 'Hello', font: { family, size: 40, color: '#000000' } }, start: 0, length: 1 });
  const still = (fonts: string[], family = 'Open Sans') => ({
    edit: { timeline: { background: '#ffffff', fonts: fonts.map((src) => ({ src })), tracks: [{ clips: [text(family)] }] }, output: { format: 'png', size: { width: 320, height: 200 } } },
  });

  it('§3: an uploaded WOFF bomb (25 KB → 128 MB) ends failed, naming the limit; only its 25 KB are stored', async () => {
    const res = await upload(bomb, 'bomb.woff', 'font/woff');
    expect(res.statusCode).toBe(201);
    const { id } = res.json().data as { id: string };
    const asset = await settled(id);
    expect(asset).toMatchObject({ status: 'failed', sizeBytes: bomb.length, fontFamily: null, error: { code: 'ASSET_INVALID', message: 'The font unpacks to 128 MB; at most 32 MB is read' } });
    const stored = await storedUnder(id);
    expect(stored.reduce((sum, o) => sum + o.size, 0)).toBe(bomb.length);
    const events = await forWorkspace(orm, workspaceId).find(OutboxEvent, { type: { $in: ['asset.ready', 'asset.failed'] } });
    expect(events.filter((e) => e.data.id === id).map((e) => e.type)).toEqual(['asset.failed']);
  });

  it('§3: an uploaded font whose family name holds a form feed before CSS ends failed with the reason', async () => {
    const res = await upload(formFeed, 'evil.ttf', 'font/ttf');
    const asset = await settled(res.json().data.id);
    expect(asset).toMatchObject({
      status: 'failed', fontFamily: null,
      error: { code: 'ASSET_INVALID', message: "The font's family name (name ID 1) holds a control character (U+000C); a font name must be plain text" },
    });
  });

  it('§3: an uploaded WOFF with overlapping tables ends failed', async () => {
    const res = await upload(served['/overlapping.woff']!, 'overlap.woff', 'font/woff');
    const asset = await settled(res.json().data.id);
    expect(asset.status).toBe('failed');
    expect(asset.error?.message).toMatch(/^The font file is damaged: its "(name|zz00)" table and "(name|zz00)" table overlap$/);
  });

  it('§7: a still naming each hostile font by URL in timeline.fonts → 422 MEDIA_UNAVAILABLE by path; credit released, one render.failed, nothing large written', async () => {
    const before = await imageCredits();
    const cases: [string, string | RegExp, string?][] = [
      ['/bomb.woff', 'The font unpacks to 128 MB; at most 32 MB is read'],
      ['/overlapping.woff', /^The font file is damaged: its "(name|zz00)" table and "(name|zz00)" table overlap$/],
      ['/form-feed.ttf', "The font's family name (name ID 1) holds a control character (U+000C); a font name must be plain text", 'Zqx Evil'],
    ];
    for (const [path, why, family] of cases) {
      const res = await inject('POST', '/v1/render', still([`${origin}${path}`], family));
      expect([path, res.statusCode, res.json().code]).toEqual([path, 422, 'MEDIA_UNAVAILABLE']);
      const errors = res.json().errors as Record<string, string[]>;
      expect(Object.keys(errors)).toEqual(['edit.timeline.fonts[0].src']);
      expect(errors['edit.timeline.fonts[0].src']![0]).toMatch(typeof why === 'string' ? new RegExp(`^${why.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : why);
      const id = res.json().data.id as string;
      expect((await allWorkspaces(orm).fork().findOneOrFail(Render, { id })).status).toBe('failed');
      expect(await ledgerOf(orm, id)).toEqual(['hold', 'release']);
      expect(await eventsOf(orm, workspaceId, id)).toEqual(['render.failed']);
    }
    expect(await imageCredits()).toMatchObject({ used: before.used, held: 0 });
    expect(await largeFontsWritten()).toEqual([]);
    // Only the fonts themselves were fetched: nothing the family name's CSS names was ever asked for.
    expect(hits.filter((h) => !(h in served))).toEqual([]);
  });

  it('the worker still answers a normal still afterwards', async () => {
    const res = await inject('POST', '/v1/render', still([]));
    expect([res.statusCode, res.json().data?.status]).toEqual([200, 'done']);
  });
});
