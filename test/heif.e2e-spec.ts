import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import { openAppDatabase } from '#libs/app';
import { Asset } from '#libs/assets';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { heicFromPng, heicWithSize, redBlue } from '#testing/media';
import { frameAt, probeStreams } from '#testing/video';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { fetchStored, multipart, startApi, type TestApi } from './harness.js';
import { eventsOf, ledgerOf, until } from './render-helpers.js';

// Issue 32 ("HEIF/HEIC images (what phones upload) are refused"): a HEIC picture is typed, measured
// and thumbnailed in the media library, and drawn by both engines (decoded once into a PNG by
// heif-convert, libs/media heif.ts); a damaged or oversized one is refused like any other bad image.
// docs/decisions.md "Fidelity (issue 32): heif".

type Rgb = [number, number, number];
const RED: Rgb = [255, 0, 0];
const BLUE: Rgb = [0, 0, 255];

/** The colour at (x, y) of a picture. */
async function pixel(picture: Buffer, x: number, y: number): Promise<Rgb> {
  const { data, info } = await sharp(picture).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}
/** Within what HEVC (4:2:0) and H.264 leave of a flat colour. */
const near = (got: Rgb, want: Rgb) => got.every((v, i) => Math.abs(v - want[i]) <= 40);

describe('HEIF/HEIC pictures (issue 32): media library, still and video engines', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let key: string;
  let workspaceId: string;
  let server: Server;
  let origin: string;
  let heic: Buffer;
  let garbage: Buffer;
  let truncated: Buffer;
  /** A header that reads and HEVC data that does not decode: heif-convert itself refuses it. */
  let damaged: Buffer;
  const hits: string[] = [];

  const inject = (method: 'GET' | 'POST', url: string, payload?: object | Buffer, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key, ...headers }, ...(payload ? { payload } : {}) });
  const upload = (file: Buffer, filename: string) => {
    const body = multipart([{ name: 'file', file, filename, type: 'image/heic' }]);
    return inject('POST', '/v1/assets', body.payload, body.headers);
  };
  const settledAsset = async (id: string) => {
    await until(async () => ['ready', 'failed'].includes((await allWorkspaces(orm).fork().findOne(Asset, { id }))?.status ?? ''), `asset ${id}`, 60_000);
    return (await inject('GET', `/v1/assets/${id}`)).json().data as Record<string, unknown> & { status: string; thumbnailUrl: string; error: { message: string } | null };
  };
  /** A 400×200 picture, the HEIC's 200×100 contained in it (fills it exactly). */
  const edit = (src: string, format: string, extra: Record<string, unknown> = {}) => ({
    timeline: { background: '#ffffff', tracks: [{ clips: [{ asset: { type: 'image', src }, start: 0, length: 1, fit: 'contain' }] }] },
    output: { format, size: { width: 400, height: 200 }, ...extra },
  });
  const eventTypes = async (type: string) => (await forWorkspace(orm, workspaceId).find(OutboxEvent, { type })).map((e) => e.data.id);
  async function answersAStill(): Promise<void> {
    const res = await inject('POST', '/v1/render?format=binary', { edit: { timeline: { background: '#e9c46a', tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 5 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 40, height: 20 } } } });
    expect(res.statusCode).toBe(200);
  }

  beforeAll(async () => {
    heic = await heicFromPng(await redBlue(200, 100));
    garbage = Buffer.concat([heic.subarray(0, 32), Buffer.alloc(4000, 0x5a)]);
    truncated = heic.subarray(0, Math.floor(heic.length * 0.6));
    damaged = Buffer.from(heic).fill(0, heic.indexOf('mdat') + 4);
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const body = { '/photo.heic': heic, '/garbage.heic': garbage, '/truncated.heic': truncated, '/damaged.heic': damaged }[req.url ?? ''];
      if (body) return void res.writeHead(200, { 'content-type': 'image/heic' }).end(body);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    api = await startApi({ VIDEO_ENGINE: 'on' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Phones', '--plan', 'pro')).json as { workspaceId: string; liveKey: string });
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    server.close();
  });
  beforeEach(() => {
    hits.length = 0;
  });

  it('§4.4 an uploaded HEIC is typed image/heic from its bytes, measured and thumbnailed: ready, asset.ready written', async () => {
    const res = await upload(heic, 'IMG_0001.HEIC');
    expect(res.statusCode).toBe(201);
    const id = res.json().data.id as string;
    const ready = await settledAsset(id);
    expect(ready).toMatchObject({ type: 'image', mimeType: 'image/heic', width: 200, height: 100, status: 'ready', error: null });
    const thumb = (await fetchStored(api, ready.thumbnailUrl)).body;
    expect(await sharp(thumb).metadata()).toMatchObject({ format: 'webp', width: 200, height: 100 });
    expect([near(await pixel(thumb, 40, 50), RED), near(await pixel(thumb, 160, 50), BLUE)]).toEqual([true, true]);
    expect(await eventTypes('asset.ready')).toContain(id);
  });

  it('§3 a garbage, truncated, damaged or oversized (a HEIC bomb) .heic upload ends failed with the reason; asset.failed; the worker goes on', async () => {
    const cases: [Buffer, RegExp][] = [
      [garbage, /HEIC .*(damaged|cannot be read)/],
      [truncated, /HEIC .*(damaged|truncated|cannot be read)/],
      [damaged, /HEIF\/HEIC image data is damaged or truncated: it cannot be decoded/],
      [heicWithSize(heic, 50_000, 50_000), /50000 × 50000 pixels .*at most/],
    ];
    for (const [file, reason] of cases) {
      const res = await upload(file, 'bad.heic');
      expect(res.statusCode).toBe(201);
      const id = res.json().data.id as string;
      const failed = await settledAsset(id);
      expect([failed.status, failed.error?.message]).toEqual(['failed', expect.stringMatching(reason)]);
      expect(await eventTypes('asset.failed')).toContain(id);
    }
    const after = await upload(heic, 'after.heic');
    expect((await settledAsset(after.json().data.id)).status).toBe('ready');
  });

  it('§4.1 a still whose image clip is a HEIC URL draws its colours in their places; the file is fetched once', async () => {
    const res = await inject('POST', '/v1/render?format=binary', { edit: edit(`${origin}/photo.heic`, 'png') });
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/png']);
    expect(near(await pixel(res.rawPayload, 100, 100), RED)).toBe(true);
    expect(near(await pixel(res.rawPayload, 300, 100), BLUE)).toBe(true);
    expect(hits).toEqual(['/photo.heic']);
  });

  it('§7 a still whose HEIC is garbage, truncated or damaged past its header (heif-convert fails) → 422 naming the clip\'s src with the reason; hold released, render.failed once; the worker still answers', async () => {
    for (const name of ['garbage', 'truncated', 'damaged']) {
      const res = await inject('POST', '/v1/render', { edit: edit(`${origin}/${name}.heic`, 'png') });
      expect([res.statusCode, res.json().code]).toEqual([422, 'MEDIA_UNAVAILABLE']);
      expect(res.json().errors).toEqual({ 'edit.timeline.tracks[0].clips[0].asset.src': [expect.stringMatching(/HEIF\/HEIC image .*(damaged|truncated|cannot be)/)] });
      const id = res.json().data.id as string;
      expect(res.json().data.status).toBe('failed');
      expect(await ledgerOf(orm, id)).toEqual(['hold', 'release']);
      expect(await eventsOf(orm, workspaceId, id)).toEqual(['render.failed']);
    }
    expect(hits).toEqual(['/garbage.heic', '/truncated.heic', '/damaged.heic']);
    await answersAStill();
  });

  it('a video with the HEIC as an image clip renders (the browser gets its PNG): an mp4 whose frame shows its colours', async () => {
    const res = await inject('POST', '/v1/render', { edit: edit(`${origin}/photo.heic`, 'mp4', { fps: 12 }) });
    expect([res.statusCode, res.json().errors]).toEqual([202, undefined]);
    const id = res.json().data.id as string;
    const done = await until(async () => {
      const data = (await inject('GET', `/v1/render/${id}`)).json().data;
      return ['done', 'failed'].includes(data.status) ? data : undefined;
    }, 'the video', 180_000, 250);
    expect([done.status, done.error]).toEqual(['done', null]);
    const dir = await mkdtemp(join(tmpdir(), 'heif-e2e-'));
    try {
      const file = join(dir, 'out.mp4');
      await writeFile(file, (await fetchStored(api, done.url)).body);
      expect(await probeStreams(file)).toMatchObject({ codec: 'h264', width: 400, height: 200 });
      const frame = await frameAt(file, 0.5);
      expect(near(await pixel(frame, 100, 100), RED)).toBe(true);
      expect(near(await pixel(frame, 300, 100), BLUE)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(hits).toEqual(['/photo.heic']);
  }, 200_000);
});
