import { readdirSync, readFileSync } from 'node:fs';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces, type Orm } from '#libs/db';
import { createRedis, RedisKeys } from '#libs/redis';
import { Render } from '#libs/renders';
import type { Redis } from 'ioredis';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { eventsOf, ledgerOf, until, workerProcesses } from './render-helpers.js';

// Issue 6 "A worker killed mid-render" — contract §3 (render status), §6 (render events), decisions.md
// "Video renders": the job runs again on another worker from `queued`; a render that killed two
// workers is not given a third (issue 27: `failed` with WORKER_LOST); no credit is captured twice,
// none is left held.
//
// Workers here are real processes (the built worker, as operators run it), killed with SIGKILL with
// their whole process group (Chromium included), as when a machine or container dies.

const edit = (seconds: number) => ({
  timeline: {
    background: '#264653',
    tracks: [
      { clips: [{ asset: { type: 'text', text: 'Still here', font: { family: 'Open Sans', size: 24, color: '#ffffff' } }, start: 0, length: seconds }] },
      { clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 30 }, fill: { color: '#e9c46a' } }, start: 0, length: seconds, effect: 'zoomIn' }] },
    ],
  },
  output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 },
});

describe('a video worker killed mid-render (issue 6)', () => {
  let api: TestApi;
  let orm: Orm;
  let redis: Redis;
  let key: string;
  let workspaceId: string;

  const post = (body: unknown) => api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': key }, payload: body as object });
  const record = (id: string) => allWorkspaces(orm).findOneOrFail(Render, { id }, { refresh: true });
  const workers = workerProcesses(() => api.env);
  /** Spawns a worker and waits until it is drawing the render's frames (attempt `attempt`), then kills it. */
  async function killWhileRendering(id: string, attempt: number): Promise<void> {
    const child = workers.spawn();
    await until(async () => {
      const r = await record(id);
      return r.status === 'rendering' && r.attempts === attempt && Number(r.progress) > 0;
    }, `render ${id} to be rendering in run ${attempt}`);
    await workers.kill(child);
  }
  /** Browser processes left without a parent (reparented to init): what a dead worker would leak. */
  const orphanBrowsers = () =>
    readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        return /^Name:\s*chromium/m.test(status) && /^PPid:\s*1$/m.test(status);
      } catch {
        return false; // exited meanwhile
      }
    });
  const ledger = (id: string) => ledgerOf(orm, id);
  const events = (id: string) => eventsOf(orm, workspaceId, id);
  /** A worker process is spawned, a render of `seconds` accepted and drawn by it: killed mid-render. */
  async function killFirstWorkerMidRender(seconds: number): Promise<string> {
    const first = workers.spawn();
    // The API takes videos once a worker's engine beats in Redis.
    await until(async () => (await redis.exists(new RedisKeys(api.config.redisPrefix).videoEngine())) === 1, 'the video engine heartbeat', 90_000);
    const res = await post({ edit: edit(seconds) });
    expect(res.statusCode).toBe(202);
    const id = res.json().data.id as string;
    await until(async () => {
      const r = await record(id);
      return r.status === 'rendering' && Number(r.progress) > 0;
    }, 'the first worker to render', 90_000);
    await workers.kill(first);
    return id;
  }

  beforeAll(async () => {
    // A lock of 2 s: a dead worker's job is noticed within about 4 s.
    api = await startApi({ VIDEO_ENGINE: 'on', VIDEO_LOCK_MS: '2000', VIDEO_CONCURRENCY: '1' });
    orm = await openAppDatabase(api.config.database, { migrate: false });
    redis = createRedis(api.config, 'test');
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Killed', '--plan', 'pro')).json as { workspaceId: string; liveKey: string });
  }, 60_000);
  afterAll(async () => {
    workers.killAll();
    redis.disconnect();
    await orm.close(true);
    await api.close();
  });

  it('runs the render again on another worker from queued and settles it once: one capture, started and completed once', async () => {
    const id = await killFirstWorkerMidRender(8);
    // Its Chromium dies with it (parent-death signal), instead of rendering on for nobody.
    await until(async () => orphanBrowsers().length === 0 || undefined, 'the dead worker\'s browser to exit', 10_000);
    const progressAtDeath = (await record(id)).progress;
    expect(progressAtDeath).toBeGreaterThan(0);
    expect(progressAtDeath).toBeLessThan(1);

    const second: INestApplicationContext = await createWorkerApp(api.config);
    try {
      // Back to queued once the dead worker's lock lapses, then taken by the second worker.
      const done = await until(async () => {
        const r = await record(id);
        return ['done', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
      }, 'the render to settle on the second worker');
      expect(done.error).toBeNull();
      expect(done).toMatchObject({ status: 'done', attempts: 2, progress: 1, width: 160, height: 90 });
      expect(done.duration).toBeCloseTo(8, 1);
      const file = await api.app.inject({ method: 'GET', url: `/api/v1/render/${id}`, headers: { 'x-api-key': key } });
      const out = await api.app.inject({ method: 'GET', url: new URL(file.json().data.url).pathname });
      expect([out.statusCode, out.rawPayload.subarray(4, 8).toString('latin1')]).toEqual([200, 'ftyp']);
      expect(await ledger(id)).toEqual(['hold', 'capture']);
      expect(await events(id)).toEqual(['render.queued', 'render.started', 'render.completed']);
    } finally {
      await second.close();
    }
  }, 180_000);

  it('after its worker dies twice the render fails WORKER_LOST and is not given a third worker (issue 27), its credits released once', async () => {
    const id = await killFirstWorkerMidRender(20);
    await killWhileRendering(id, 2);
    // A live worker finds the job stalled a second time and fails it without running it.
    const last = await createWorkerApp(api.config);
    try {
      const failed = await until(async () => {
        const r = await record(id);
        return ['done', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
      }, 'WORKER_LOST');
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ code: 'WORKER_LOST' });
      expect(failed.attempts).toBe(2);
      expect(failed.error?.message).toMatch(/stopped 2 times/);
      const api1 = await api.app.inject({ method: 'GET', url: `/api/v1/render/${id}`, headers: { 'x-api-key': key } });
      expect(api1.json().data).toMatchObject({ status: 'failed', url: null, error: { code: 'WORKER_LOST' } });
      // Settled once: the hold released, never captured; one render.failed.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await ledger(id)).toEqual(['hold', 'release']);
      expect(await events(id)).toEqual(['render.queued', 'render.started', 'render.failed']);
    } finally {
      await last.close();
    }
  }, 240_000);
});
