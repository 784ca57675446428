import type { Queue } from 'bullmq';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { loadConfig } from '#libs/core';
import { allWorkspaces, type Orm } from '#libs/db';
import { JobQueues, type VideoChunkResult } from '#libs/queue';
import { createRedis, RedisKeys } from '#libs/redis';
import { Render } from '#libs/renders';
import { createStorage, type StorageDriver } from '#libs/storage';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { MP4_COLOUR, probeColour, probeStreams, sineWav } from '#testing/video';
import { fetchStored, startApi, type TestApi } from './harness.js';
import { eventsOf, ledgerOf, until } from './render-helpers.js';

// Issue 6 "Long renders scale out": an mp4 longer than VIDEO_CHUNK_MIN_FRAMES is split into
// VIDEO_CHUNK_FRAMES-frame chunks that any worker renders, then joined by one job (contract §3 states
// and §6 events as for any render; credits once). Here chunks are 12 frames and renders over 24
// frames are chunked, so a 6 s video at 12 fps is six chunks.
//
// Issue 14 "Storage for a fleet": on the S3 driver (jest project `s3`) the two workers share nothing
// but Redis, the database and the bucket: each has its own DATA_DIR, neither the API's.

const edit = (seconds: number, extra: Record<string, unknown>[] = [], timeline: Record<string, unknown> = {}) => ({
  timeline: {
    background: '#2a9d8f',
    ...timeline,
    tracks: [
      { clips: [{ asset: { type: 'text', text: 'Chunked', font: { family: 'Open Sans', size: 22, color: '#ffffff' } }, start: 0, length: seconds }] },
      { clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 25 }, fill: { color: '#e76f51' } }, start: 0, length: seconds, effect: 'zoomIn' }] },
      ...extra.map((clip) => ({ clips: [clip] })),
    ],
  },
  output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 },
});

describe('chunked video renders across workers (issue 6)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let other: ChildProcess;
  let orm: Orm;
  let key: string;
  let workspaceId: string;
  let media: Server;
  let origin: string;
  let videos: Queue;
  let storage: StorageDriver;
  /** The workers' own data folders (with s3; with local storage they share the API's). */
  const workerDirs: string[] = [];

  const post = (body: unknown) => api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': key }, payload: body as object });
  const get = (id: string) => api.app.inject({ method: 'GET', url: `/api/v1/render/${id}`, headers: { 'x-api-key': key } });
  const settled = (id: string) => until(async () => {
    const data = (await get(id)).json().data;
    return ['done', 'failed', 'cancelled'].includes(data.status) ? data : undefined;
  }, `render ${id} to settle`, 150_000);
  const ledger = (id: string) => ledgerOf(orm, id);
  const events = (id: string) => eventsOf(orm, workspaceId, id);
  const chunkFiles = async () => {
    const keys: string[] = [];
    for await (const o of storage.list('work/chunks/')) keys.push(o.key);
    return keys;
  };
  /** A worker's environment: with a bucket, a DATA_DIR of its own. */
  const workerEnv = (): Record<string, string> => {
    if (api.config.storage.driver === 'local') return api.env;
    const dir = mkdtempSync(join(tmpdir(), 'mr-test-worker-'));
    workerDirs.push(dir);
    return { ...api.env, DATA_DIR: dir };
  };

  beforeAll(async () => {
    const tone = sineWav(6);
    media = createServer((req, res) => {
      if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
    api = await startApi({ VIDEO_ENGINE: 'on', VIDEO_CHUNK_FRAMES: '12', VIDEO_CHUNK_MIN_FRAMES: '24' });
    storage = createStorage(api.config);
    worker = await createWorkerApp(loadConfig(workerEnv()));
    // A second worker in its own process (the built worker, as operators run it).
    other = spawn(process.execPath, ['dist/apps/worker/src/main.js'], { env: { ...process.env, ...workerEnv() }, stdio: 'ignore' });
    orm = await openAppDatabase(api.config.database, { migrate: false });
    videos = api.app.get(JobQueues).queue('videos');
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Chunks', '--plan', 'pro')).json as { workspaceId: string; liveKey: string });
    const redis = createRedis(api.config, 'test');
    await until(async () => (await redis.exists(new RedisKeys(api.config.redisPrefix).videoEngine())) === 1, 'a video engine');
    redis.disconnect();
  }, 240_000);
  afterAll(async () => {
    other?.kill('SIGTERM');
    await orm.close(true);
    await worker.close();
    await api.close();
    media.close();
    for (const dir of workerDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('splits a long mp4 into chunks that both workers render, joins them into the whole video with its sound, and removes the chunks', async () => {
    // Let the second process's engine start too, so both take chunks.
    await new Promise((r) => setTimeout(r, 4000));
    const res = await post({ edit: edit(6, [], { soundtrack: { src: `${origin}/tone.wav` } }) });
    expect(res.statusCode).toBe(202);
    const id = res.json().data.id as string;
    const done = await settled(id);
    expect(done.error).toBeNull();
    expect(done).toMatchObject({ status: 'done', width: 160, height: 90, progress: 1 });
    expect(done.duration).toBeCloseTo(6, 1);
    const file = await fetchStored(api, done.url);
    expect([file.status, file.type]).toEqual([200, 'video/mp4']);
    const out = join(api.config.dataDir, 'chunked.mp4');
    await writeFile(out, file.body);
    const probed = await probeStreams(out);
    expect(probed).toMatchObject({ codec: 'h264', audio: 'aac', width: 160, height: 90, frames: 72 });
    expect(probed.duration).toBeCloseTo(6, 1);
    // The joined file keeps the chunks' colour tags (yuv420p, limited range, BT.709) and faststart.
    expect(await probeColour(out)).toEqual(MP4_COLOUR);
    // Six chunks of 12 frames, covering 0..71, drawn by more than one worker process.
    const chunks = await Promise.all(Array.from({ length: 6 }, async (_, i) => (await videos.getJob(`${id}-chunk-${i}`))?.returnvalue as VideoChunkResult));
    expect(chunks.map((c) => (c.ok ? c.frameRange : c.status))).toEqual([[0, 11], [12, 23], [24, 35], [36, 47], [48, 59], [60, 71]]);
    expect(new Set(chunks.map((c) => (c.ok ? c.worker : ''))).size).toBeGreaterThan(1);
    expect(await chunkFiles()).toEqual([]);
    // With a bucket (project s3) each worker had a data folder of its own, and kept no stored file
    // there: the chunks went through the bucket.
    expect(workerDirs).toHaveLength(process.env.TEST_STORAGE === 's3' ? 2 : 0);
    for (const dir of workerDirs) expect([dir, existsSync(join(dir, 'files'))]).toEqual([dir, false]);
    expect(await ledger(id)).toEqual(['hold', 'capture']);
    expect(await events(id)).toEqual(['render.queued', 'render.started', 'render.completed']);
    // A short render is not chunked.
    const short = await post({ edit: edit(1) });
    const shortDone = await settled(short.json().data.id);
    expect(shortDone.status).toBe('done');
    expect(await videos.getJob(`${shortDone.id}-chunk-0`)).toBeUndefined();
  }, 240_000);

  it('cancel while chunks render: settled cancelled once, credits released, chunks removed', async () => {
    const id = (await post({ edit: edit(20) })).json().data.id as string;
    await until(async () => (await allWorkspaces(orm).findOneOrFail(Render, { id }, { refresh: true })).status === 'rendering' || undefined, 'chunks to render');
    const res = await api.app.inject({ method: 'POST', url: `/api/v1/render/${id}/cancel`, headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(202);
    const end = await settled(id);
    expect(end.status).toBe('cancelled');
    await until(async () => (await videos.getJob(`${id}-combine`))?.finishedOn !== undefined || undefined, 'the combine job to end');
    expect(await chunkFiles()).toEqual([]);
    expect(await ledger(id)).toEqual(['hold', 'release']);
    expect(await events(id)).toEqual(['render.queued', 'render.started', 'render.cancelled']);
  }, 180_000);

  it('a chunk that cannot get its media fails the render once with MEDIA_UNAVAILABLE naming the clip', async () => {
    const id = (await post({ edit: edit(4, [{ asset: { type: 'image', src: `${origin}/missing.png` }, start: 0, length: 4 }]) })).json().data.id as string;
    const end = await settled(id);
    expect(end.status).toBe('failed');
    expect(end.error).toMatchObject({ code: 'MEDIA_UNAVAILABLE', errors: { 'edit.timeline.tracks[2].clips[0].asset.src': ['The server answered 404'] } });
    await until(async () => (await videos.getJob(`${id}-combine`))?.finishedOn !== undefined || undefined, 'the combine job to end');
    expect(await chunkFiles()).toEqual([]);
    expect(await ledger(id)).toEqual(['hold', 'release']);
    expect(await events(id)).toEqual(['render.queued', 'render.started', 'render.failed']);
  }, 180_000);
});
