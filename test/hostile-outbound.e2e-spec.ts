import type { INestApplicationContext } from '@nestjs/common';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces, type Orm } from '#libs/db';
import { assertEdit } from '#libs/edit-spec';
import { PROBE_LIMITS } from '#libs/media';
import { JobQueues } from '#libs/queue';
import { Render, videoJobScratch } from '#libs/renders';
import { createStorage, outputKey, renderPrefix, type StorageDriver } from '#libs/storage';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { createRedis, RedisKeys } from '#libs/redis';
import { noisyMp4, rangeMediaServer, sampleMedia, type RangeMediaServer } from '#testing/media';
import { queueEvents, startApi, type TestApi } from './harness.js';

// Issue 27 "One request cannot exhaust a worker": POST /v1/render/estimate with `length: "auto"`
// clips, for a key with only renders:read, measures media under limits (decisions.md "Hostile input
// (issue 27): outbound"): a capped count, range reads under a byte cap, a few at once, reused.
describe('hostile input (issue 27): measuring `length: "auto"` media', () => {
  let api: TestApi;
  let redis: Redis;
  let media: RangeMediaServer;
  let key: string;
  let workspaceId: string;
  let bigSize: number;
  const estimate = (edit: unknown) => api.app.inject({ method: 'POST', url: '/api/v1/render/estimate', headers: { 'x-api-key': key }, payload: { edit } });
  const output = { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 };
  const videoClip = (src: string, start = 0) => ({ asset: { type: 'video', src }, start, length: 'auto' });
  const balance = async () => (await api.app.inject({ method: 'GET', url: '/api/v1/credits', headers: { 'x-api-key': key } })).json();

  beforeAll(async () => {
    const big = await noisyMp4(60, 'end'); // 2 s, more than 8 MB, moov at the end
    bigSize = big.length;
    media = await rangeMediaServer({ '/big.mp4': big, '/tone.wav': await sampleMedia.wav(20), '/tone.mp3': await sampleMedia.mp3(10), '/clip.webm': await sampleMedia.webm(3) }, { delayMs: 30 });
    api = await startApi();
    redis = createRedis(api.config, 'test');
    // The heartbeat of a worker running the video engine (apps/worker engine.holder.ts), set by hand: no Chromium here.
    await redis.set(new RedisKeys(api.config.redisPrefix).videoEngine(), 'test', 'PX', 600_000);
    const ws = (await api.cli('workspace:create', '--name', 'Hostile outbound', '--plan', 'pro')).json as { workspaceId: string };
    workspaceId = ws.workspaceId;
    key = ((await api.cli('key:create', '--workspace', workspaceId, '--scopes', 'renders:read')).json as { key: string }).key;
  }, 180_000);
  afterAll(async () => {
    redis.disconnect();
    await api.close();
    await media.close();
  });
  beforeEach(() => media.reset());

  it(`200 clips of length "auto" → 422 VALIDATION_FAILED naming the clip past ${PROBE_LIMITS.maxMediaPerRequest} and the limit, with no download started`, async () => {
    const before = await balance();
    const clips = Array.from({ length: 200 }, (_, i) => videoClip(`${media.origin}/big.mp4?n=${i}`, i * 2));
    const res = await estimate({ timeline: { tracks: [{ clips }] }, output });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: { [`edit.timeline.tracks[0].clips[${PROBE_LIMITS.maxMediaPerRequest}].length`]: [expect.stringContaining(`at most ${PROBE_LIMITS.maxMediaPerRequest} distinct media files`)] },
    });
    expect(media.total()).toEqual({ requests: 0, bytes: 0 });
    expect(await balance()).toEqual(before);
  });

  it('a handful of clips: each file read within the per-probe cap (a head, and a tail for the moov at the end), a few at once, the API\'s memory not growing by the files\' size; a second estimate reads nothing', async () => {
    const srcs = [...Array.from({ length: 8 }, (_, i) => `${media.origin}/big.mp4?copy=${i}`), `${media.origin}/tone.wav`, `${media.origin}/tone.mp3`, `${media.origin}/clip.webm`];
    const edit = { timeline: { tracks: srcs.map((src) => ({ clips: [videoClip(src)] })) }, output };
    edit.timeline.tracks[8]!.clips[0]!.asset.type = 'audio';
    edit.timeline.tracks[9]!.clips[0]!.asset.type = 'audio';
    const before = await balance();
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const res = await estimate(edit);
    clearInterval(sampler);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.durationSec).toBe(20); // the longest: the 20 s tone
    // 8 copies of a file over 8 MB (88+ MB in all) read at a few hundred KB each.
    expect(8 * bigSize).toBeGreaterThan(8 * PROBE_LIMITS.maxBytesPerProbe);
    for (const src of srcs) {
      const path = new URL(src).pathname;
      expect(media.requests.get(path)).toBeGreaterThan(0);
    }
    const perFile = media.total().bytes / srcs.length;
    expect(perFile).toBeLessThanOrEqual(2 * PROBE_LIMITS.stepBytes);
    expect(media.requests.get('/big.mp4')).toBe(16); // head + tail of each copy
    expect(media.maxOpen).toBeLessThanOrEqual(PROBE_LIMITS.perRequest);
    expect(peak - base).toBeLessThan(40 * 1024 * 1024);

    const served = media.total();
    const again = await estimate(edit);
    expect(again.json().data).toEqual(res.json().data);
    expect(media.total()).toEqual(served);
    expect(await balance()).toEqual(before); // an estimate spends nothing
    // The API still answers.
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/keys/current', headers: { 'x-api-key': key } })).statusCode).toBe(200);
  }, 60_000);
});

// Issue 27 "Addresses and processes": a killed worker's work folders and a failed still's file do not
// stay for ever; a live render's are not touched (decisions.md "Hostile input (issue 27): outbound").
describe('hostile input (issue 27): leftovers of killed workers', () => {
  let api: TestApi;
  let worker: INestApplicationContext | undefined;
  let storage: StorageDriver;
  let live: ChildProcess;
  let workspaceId: string;
  let orm: Orm;
  const dead = spawnSync('true').pid!; // a pid that has exited
  const scratch = (pid: number, token: string) => join(videoJobScratch(api.config), `${hostname()}-${pid}-${token}`);
  const row = async (id: string, fields: Partial<Render>) => {
    const em = allWorkspaces(orm).fork();
    const at = fields.completedAt ?? new Date();
    em.create(Render, {
      id, workspaceId, status: 'failed', kind: 'video', mode: 'live', templateId: null, templateVersion: null, format: 'mp4', width: 16, height: 16,
      duration: 1, fps: 12, scale: 1, fileSizeBytes: null, renderTime: null, credits: 0, watermarked: false, outputKey: null, posterKey: null,
      thumbnailKey: null, expiresAt: null, purgedAt: null, error: null, progress: 0, cancelRequested: false, metadata: null, callback: null, edit: {},
      idempotencyKey: null, requestHash: null, attempts: 1, createdAt: at, updatedAt: at, startedAt: at, completedAt: at, ...fields,
    });
    await em.flush();
  };
  const stored = async (key: string) => (await storage.stat(key)) !== undefined;

  beforeAll(async () => {
    api = await startApi();
    storage = createStorage(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    workspaceId = ((await api.cli('workspace:create', '--name', 'Leftovers', '--plan', 'pro')).json as { workspaceId: string }).workspaceId;
    live = spawn('sleep', ['120']);
  }, 60_000);
  afterAll(async () => {
    live.kill();
    await worker?.close();
    await orm.close(true);
    await api.close();
    for (const d of [scratch(dead, '0badf00d'), scratch(live.pid!, '1234abcd')]) rmSync(d, { recursive: true, force: true });
  });

  it('a worker starting removes a dead worker\'s scratch folders of this machine and settled renders\' chunk folders; a live worker\'s and a working render\'s stay', async () => {
    await row('rnd_leftover_settled', { status: 'failed' });
    await row('rnd_leftover_working', { status: 'rendering', completedAt: null });
    await storage.put('work/chunks/rnd_leftover_settled-tok1/0.ts', Buffer.from('chunk'));
    await storage.put('work/chunks/rnd_leftover_working-tok2/0.ts', Buffer.from('chunk'));
    for (const d of [scratch(dead, '0badf00d'), scratch(live.pid!, '1234abcd')]) {
      mkdirSync(join(d, 'chunk-x'), { recursive: true });
      writeFileSync(join(d, 'chunk-x', 'part.ts'), 'x');
    }
    worker = await createWorkerApp(api.config);
    expect(existsSync(scratch(dead, '0badf00d'))).toBe(false);
    expect(existsSync(join(scratch(live.pid!, '1234abcd'), 'chunk-x', 'part.ts'))).toBe(true);
    expect(await stored('work/chunks/rnd_leftover_settled-tok1/0.ts')).toBe(false);
    expect(await stored('work/chunks/rnd_leftover_working-tok2/0.ts')).toBe(true);
  }, 60_000);

  it('renders.purge: a failed render\'s files expire like the others (retention after it settled); a recent one\'s stay until then', async () => {
    const old = new Date(Date.now() - 31 * 86_400_000);
    // The files first: the worker's own scheduled purge may run at any moment once the rows exist.
    const oldKey = outputKey('rnd_leftover_oldfail', 'png');
    const newKey = outputKey('rnd_leftover_newfail', 'png');
    await storage.put(oldKey, Buffer.from('orphan'));
    await storage.put(newKey, Buffer.from('orphan'));
    await row('rnd_leftover_oldfail', { status: 'failed', kind: 'image', format: 'png', completedAt: old });
    await row('rnd_leftover_newfail', { status: 'failed', kind: 'image', format: 'png' });
    const queues = api.app.get(JobQueues);
    const events = await queueEvents(queues, 'system');
    await (await queues.add('renders.purge', {})).waitUntilFinished(events, 20_000);
    await events.close();
    expect(await stored(oldKey)).toBe(false);
    expect(await stored(newKey)).toBe(true);
    const purged = await allWorkspaces(orm).findOneOrFail(Render, { id: 'rnd_leftover_oldfail' });
    expect(purged.purgedAt).not.toBeNull();
    expect(renderPrefix('rnd_leftover_oldfail')).toBe(oldKey.slice(0, oldKey.lastIndexOf('/') + 1));
  }, 60_000);

  it('a still that fails on its second run removes the file its first run stored at its key', async () => {
    const id = 'rnd_leftover_still';
    await row(id, { status: 'rendering', kind: 'image', format: 'png', completedAt: null });
    const key = outputKey(id, 'png');
    await storage.put(key, Buffer.from('first run')); // stored by a run whose worker was killed before it settled
    const edit = assertEdit({ timeline: { tracks: [{ clips: [{ asset: { type: 'image', src: 'http://127.0.0.1:9/gone.png' }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 16, height: 16 } } });
    const queues = api.app.get(JobQueues);
    const events = await queueEvents(queues, 'stills');
    const result = await (await queues.add('still.render', { edit: edit as never, key, scale: 1, watermark: false, renderId: id })).waitUntilFinished(events, 30_000);
    await events.close();
    expect(result).toMatchObject({ ok: false, error: { code: 'MEDIA_UNAVAILABLE' } });
    expect((await allWorkspaces(orm).findOneOrFail(Render, { id })).status).toBe('failed');
    expect(await stored(key)).toBe(false);
  }, 60_000);
});
