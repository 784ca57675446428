import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { openAppDatabase } from '#libs/app';
import { RENDER_BUDGET } from '#libs/edit-spec';
import { LedgerEntry } from '#libs/credits';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { Worker } from 'bullmq';
import { Asset } from '#libs/assets';
import { JobQueues } from '#libs/queue';
import { Render } from '#libs/renders';
import { multipart, startApi, type TestApi } from './harness.js';
import { eventsOf, ledgerOf, until, workerProcesses } from './render-helpers.js';

// Issue 27 "One request cannot exhaust a worker" (docs/decisions.md "Hostile input (issue 27):
// budget"): every render is priced in work before anything is held (422 VALIDATION_FAILED naming the
// limit); a still within it draws in bounded memory; a still whose worker died fails WORKER_LOST and
// is not drawn again; an edit that can never render fails at once RENDER_FAILED naming the clip.
//
// The worker is a real process (the built worker, as operators run it): its peak RSS is read from
// /proc, and it is killed with SIGKILL as when a machine runs out of memory.

/**
 * The job locks of the test's worker: short, so a killed worker's job is found stalled in seconds; long
 * enough that the 8192×8192 still (event-loop blocks of ~230 ms on an idle machine, BullMQ renewing at
 * half the lock) keeps its lock when other suites load both cores (1.5 s lost it once, WORKER_LOST).
 */
const LOCK_MS = 3000;
const GB = 1024 ** 3;

/** `n` text clips of 4000×4000, the first `blurred` of them blurred, on a 1080×1080 PNG; `label` starts their texts. */
const layers = (n: number, blurred = n, label = 'Layer') => ({
  timeline: {
    background: '#102030',
    tracks: [{
      clips: Array.from({ length: n }, (_, i) => ({
        asset: { type: 'text', text: `${label} ${i}`, width: 4000, height: 4000, font: { family: 'Open Sans', size: 160, color: '#ffffff' } },
        start: 0, length: 1, opacity: 0.6, ...(i < blurred ? { filter: 'blur' } : {}),
      })),
    }],
  },
  output: { format: 'png', size: { width: 1080, height: 1080 } },
});

/** Just under the budget: 12 such clips (192 of 200 megapixels), 4 of them blurred (512 of 600 million pixels × radius). */
const UNDER_BUDGET = layers(12, 4);

describe('hostile input: the render budget (issue 27)', () => {
  let api: TestApi;
  let orm: Orm;
  let server: Server;
  let origin: string;
  let key: string;
  let workspaceId: string;
  let worker: ChildProcess;
  const hits: string[] = [];

  const post = (body: unknown, url = '/api/v1/render') => api.app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload: body as object });
  const record = (id: string) => allWorkspaces(orm).findOneOrFail(Render, { id }, { refresh: true });
  const counts = async () => {
    const em = forWorkspace(orm, workspaceId);
    return { renders: await em.count(Render, {}), ledger: await em.count(LedgerEntry, {}), events: await em.count(OutboxEvent, {}) };
  };
  const workers = workerProcesses(() => api.env);
  /** The process's peak resident set (VmHWM), in bytes. */
  const peakRss = (child: ChildProcess) => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) * 1024;
  /** An ordinary still: the worker is alive and answering. */
  async function answersAStill(): Promise<void> {
    const res = await post({ edit: { timeline: { background: '#e9c46a', tracks: [{ clips: [{ asset: { type: 'text', text: 'Still here', font: { family: 'Open Sans', size: 24 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 200, height: 100 } } } });
    expect([res.statusCode, res.json().data?.status]).toEqual([200, 'done']);
  }
  /** The render the API is drawing now (the only one working in the workspace). */
  const working = () => until(async () => (await forWorkspace(orm, workspaceId).findOne(Render, { status: 'rendering' }))?.id, 'the still to be drawn', 20_000, 20);

  beforeAll(async () => {
    api = await startApi({ VIDEO_ENGINE: 'off', STILL_LOCK_MS: String(LOCK_MS), ASSET_LOCK_MS: String(LOCK_MS) });
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Hostile budget', '--plan', 'pro')).json as { workspaceId: string; liveKey: string });
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer();
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      // Its header reads, its pixel data is cut short: no worker can ever draw it.
      if (req.url === '/truncated.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(png.subarray(0, Math.floor(png.length / 2)));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    worker = workers.spawn();
    await until(async () => (await post({ edit: { timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 5 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 20, height: 20 } } } })).statusCode === 200, 'the worker to answer', 60_000, 500);
  }, 120_000);
  afterAll(async () => {
    workers.killAll();
    server.close();
    await orm.close(true);
    await api.close();
  });

  it.each([
    [60, ['edit.timeline.tracks'], /at most 200 megapixels of clips drawn for one frame/],
    [3000, ['edit.timeline.tracks'], new RegExp(`at most ${RENDER_BUDGET.clips} clips in a render \\(house limit, docs/decisions.md\\); this edit has 3000`)],
  ])('%i blurred 4000×4000 text clips: 422 VALIDATION_FAILED naming the limit, on the render and the estimate; nothing held, no event', async (n, paths, limit) => {
    const before = await counts();
    for (const url of ['/api/v1/render', '/api/v1/render/estimate']) {
      const res = await post({ edit: layers(n) }, url);
      expect([res.statusCode, res.json().code]).toEqual([422, 'VALIDATION_FAILED']);
      expect(Object.keys(res.json().errors)).toEqual(paths);
      expect(res.json().errors['edit.timeline.tracks']).toEqual(expect.arrayContaining([expect.stringMatching(limit)]));
    }
    expect(await counts()).toEqual(before);
    await answersAStill();
  });

  it('a still just under the budget renders, and the worker\'s peak RSS stays under 1.5 GB', async () => {
    const estimate = await post({ edit: UNDER_BUDGET }, '/api/v1/render/estimate');
    expect(estimate.statusCode).toBe(200);
    const res = await post({ edit: UNDER_BUDGET });
    expect([res.statusCode, res.json().data?.status]).toEqual([200, 'done']);
    const rss = peakRss(worker);
    process.stdout.write(`hostile-budget: worker peak RSS after the under-budget still: ${(rss / 2 ** 20).toFixed(0)} MiB\n`);
    expect(rss).toBeLessThan(1.5 * GB);
    await answersAStill();
  }, 120_000);

  it('the largest still of the Pro plan (8192×8192) with one faded full-frame text clip renders (one layer may be as large as the frame), under 1.5 GB; a second full-frame clip is refused naming it', async () => {
    const full = { asset: { type: 'text', text: 'Full frame', font: { family: 'Open Sans', size: 400, color: '#ffffff' } }, start: 0, length: 1, opacity: 0.8 };
    const edit = (clips: unknown[]) => ({ timeline: { background: '#102030', tracks: [{ clips }] }, output: { format: 'png', size: { width: 8192, height: 8192 } } });
    const res = await post({ edit: edit([full]) });
    // The whole answer on a mismatch: a failure's code and message say why.
    expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status: 200, body: { data: { status: 'done' } } });
    const rss = peakRss(worker);
    process.stdout.write(`hostile-budget: worker peak RSS after an 8192×8192 full-frame text still: ${(rss / 2 ** 20).toFixed(0)} MiB\n`);
    expect(rss).toBeLessThan(1.5 * GB);
    const before = await counts();
    const two = await post({ edit: edit([full, full]) });
    expect([two.statusCode, two.json().code, Object.keys(two.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['edit.timeline.tracks[0].clips[1]']]);
    expect(await counts()).toEqual(before);
    await answersAStill();
  }, 120_000);

  it('a poison still whose worker is SIGKILLed fails WORKER_LOST: its hold released once, one render.failed, not drawn again', async () => {
    // Texts of its own: none of its layers is in the engine's cache from the under-budget still, so it
    // is still being drawn when the job's state is read (a cached one could finish between two reads).
    const answer = post({ edit: layers(12, 4, 'Poison'), metadata: { poison: true } });
    const id = await working();
    const jobs = api.app.get(JobQueues).queue('stills');
    await until(async () => (await (await jobs.getJob(id))?.getState()) === 'active', 'the worker to take the still', 20_000, 20);
    await workers.kill(worker);
    // Another worker finds its job stalled: it fails it instead of drawing it again.
    worker = workers.spawn();
    const res = await answer;
    expect([res.statusCode, res.json().code, res.json().data]).toEqual([500, 'WORKER_LOST', { id, status: 'failed' }]);
    expect(res.json().message).toMatch(/not drawn again/);
    // Given time to run it again, nothing does.
    await new Promise((r) => setTimeout(r, 3 * LOCK_MS));
    const job = await jobs.getJob(id);
    expect([await job?.getState(), job?.failedReason]).toEqual(['failed', expect.stringMatching(/stalled/)]);
    expect(await record(id)).toMatchObject({ status: 'failed', attempts: 1, outputKey: null, error: { code: 'WORKER_LOST', stage: 'rendering' } });
    expect(await ledgerOf(orm, id)).toEqual(['hold', 'release']);
    expect(await eventsOf(orm, workspaceId, id)).toEqual(['render.failed']);
    await answersAStill();
  }, 120_000);

  it('an edit that can never render (an image that cannot be decoded) fails at once RENDER_FAILED naming the clip and the cause, in one run', async () => {
    hits.length = 0;
    const res = await post({
      edit: {
        timeline: { tracks: [
          { clips: [{ asset: { type: 'text', text: 'Over it', font: { family: 'Open Sans', size: 24 } }, start: 0, length: 1 }] },
          { clips: [{ asset: { type: 'image', src: `${origin}/truncated.png` }, start: 0, length: 1 }] },
        ] },
        output: { format: 'png', size: { width: 300, height: 200 } },
      },
    });
    expect([res.statusCode, res.json().code]).toEqual([422, 'RENDER_FAILED']);
    expect(res.json().message).toMatch(/^edit\.timeline\.tracks\[1\]\.clips\[0\] cannot be drawn: .+/);
    expect(Object.keys(res.json().errors)).toEqual(['edit.timeline.tracks[1].clips[0]']);
    const id = res.json().data.id as string;
    // One run: the file was fetched once, the job failed once.
    expect(hits).toEqual(['/truncated.png']);
    expect(await record(id)).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'RENDER_FAILED', stage: 'rendering' } });
    expect(await ledgerOf(orm, id)).toEqual(['hold', 'release']);
    expect(await eventsOf(orm, workspaceId, id)).toEqual(['render.failed']);
    await answersAStill();
  });

  it('an asset whose worker died is not processed again: it fails WORKER_LOST with the reason, once', async () => {
    await workers.kill(worker);
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#2a9d8f' } }).png().toBuffer();
    const body = multipart([{ name: 'file', file: png, filename: 'poison.png', type: 'image/png' }]);
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': key, ...body.headers }, payload: body.payload });
    expect(res.statusCode).toBeLessThan(300);
    const id = res.json().data.id as string;
    // A worker takes the job and dies with it (no worker process is running): its lock is never renewed.
    const { connection, prefix } = api.app.get(JobQueues).queue('assets').opts;
    const dying = new Worker('assets', null, { connection, prefix, autorun: false, lockDuration: LOCK_MS });
    const job = await dying.getNextJob('dead-worker');
    expect(job?.data).toMatchObject({ assetId: id });
    await dying.close(true);
    // The next worker's stalled checks find it: the asset fails instead of being processed again.
    worker = workers.spawn();
    const failed = await until(async () => {
      const row = await allWorkspaces(orm).findOne(Asset, { id }, { refresh: true });
      return row?.status === 'failed' ? row : undefined;
    }, 'the asset to fail', 30_000, 100);
    expect(failed.error).toEqual({ code: 'WORKER_LOST', message: expect.stringMatching(/not processed again/) });
    const events = await forWorkspace(orm, workspaceId).find(OutboxEvent, { type: { $like: 'asset.%' } });
    expect(events.filter((e) => e.data.id === id).map((e) => e.type)).toEqual(['asset.failed']);
    await answersAStill();
  }, 60_000);
});
