/**
 * A render's whole life in memory (issue 31): the rules of libs/renders (RenderLifecycle, VideoRuns,
 * StillRuns) on the in-memory ports of test/fakes/renders.ts — no Redis, database, Nest or engine.
 * The same scenarios keep their end-to-end tests on the real stack (test/stills, videos,
 * video-chunks, video-worker-lost, render-lifecycle, credits).
 */
import { ApiError } from '#libs/core';
import { PLANS, type Plan } from '#libs/workspaces';
import { assertEdit } from '#libs/edit-spec';
import { VIDEO_LOST_WORKERS, type VideoChunkResult } from '#libs/queue';
import { FakeStillEngine, FakeVideoEngine, ManualClock, MemoryQueue, MemoryRenders, MemoryScratch, MemorySlots, MemoryStorage, settle } from '#testing/renders';
import type { Render } from './entities.js';
import { RenderLifecycle } from './lifecycle.js';
import { StillRuns } from './still-runs.js';
import { VideoRuns, type VideoRun } from './video-runs.js';

const WS = 'ws_whole_life';

/** A render's output key (libs/storage outputKey: its folder and an unguessable name). */
const stored = (id: string, ext: string) => expect.stringMatching(new RegExp(`^r/${id}/[\\w-]+\\.${ext}$`));

function world(plan: Partial<Plan> = {}) {
  const clock = new ManualClock();
  const renders = new MemoryRenders();
  const storage = new MemoryStorage();
  const lifecycle = new RenderLifecycle(renders, storage);
  const slots = new MemorySlots(clock);
  const queue = new MemoryQueue();
  const scratch = new MemoryScratch();
  const engine = new FakeVideoEngine();
  const stillEngine = new FakeStillEngine();
  const feed: [string, number][] = [];
  const videos = new VideoRuns({
    lifecycle, plans: { planOf: async () => ({ ...PLANS.pro, ...plan }) }, slots, queue, storage, scratch, clock,
    engine: async () => engine,
    captions: { resolveAny: async () => null },
    feed: { progress: async (_ws, id, _mode, p) => feed.push([id, p]) },
    chunks: { frames: 30, minFrames: 40 },
    worker: 'memory:1',
  });
  const stills = new StillRuns({ engine: stillEngine, storage, lifecycle, clock });
  let n = 0;
  /** A claimed render, as POST /v1/render makes it: a still `rendering`, a video `queued`; `credits` held (live). */
  const claim = (kind: 'image' | 'video', opts: { seconds?: number; key?: string; hash?: string; credits?: number } = {}) => {
    const id = `r${++n}`;
    const video = kind === 'video';
    const edit = assertEdit({
      timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'hello' }, start: 0, length: opts.seconds ?? 1 }] }] },
      output: video ? { format: 'mp4', fps: 30, size: { width: 320, height: 180 } } : { format: 'png', size: { width: 100, height: 100 } },
    });
    const now = new Date(clock.now());
    const row = {
      id, workspaceId: WS, status: video ? 'queued' : 'rendering', kind, mode: 'live', templateId: null, templateVersion: null, format: edit.output.format,
      width: 320, height: 180, duration: video ? (opts.seconds ?? 1) : null, fps: video ? 30 : null, scale: 1, fileSizeBytes: null, renderTime: null,
      credits: opts.credits ?? 1, watermarked: false, outputKey: null, posterKey: null, thumbnailKey: null, expiresAt: null, purgedAt: null, error: null,
      progress: 0, cancelRequested: false, metadata: null, callback: 'https://hooks.test/cb', edit: edit as unknown as Record<string, unknown>,
      idempotencyKey: opts.key ?? null, requestHash: opts.key ? (opts.hash ?? 'h1') : null, attempts: 1,
      createdAt: now, updatedAt: now, startedAt: video ? null : now, completedAt: null, preview: false,
    } satisfies Render as Render;
    const hold = { plan: 'pro' as const, kind, amount: opts.credits ?? 1, mode: 'live' as const };
    return lifecycle.claim(row, hold, undefined, video ? { max: 3, planName: 'Pro' } : undefined);
  };
  const run = (renderId: string, attempt = 1, previousFailure?: string): VideoRun<'video.render'> => ({ data: { renderId }, attempt, previousFailure });
  return { clock, renders, storage, lifecycle, slots, queue, scratch, engine, stillEngine, videos, stills, feed, claim, run };
}

describe('a render\'s whole life, in memory (issue 31; §3 statuses, §1.4 idempotency, §8 concurrency)', () => {
  it('a still: claimed with its credit held, drawn, stored, settled done with the credit captured and one render.completed', async () => {
    const w = world();
    const { render } = await w.claim('image', { key: 'k-still' });
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1']);
    const result = await w.stills.run({ edit: render.edit as never, key: `renders/${render.id}/out.png`, scale: 1, watermark: false, renderId: render.id });
    expect(result).toMatchObject({ ok: true, key: `renders/${render.id}/out.png`, url: `https://files.test/renders/${render.id}/out.png`, sizeBytes: 64 });
    const done = w.renders.row(render.id);
    expect(done).toMatchObject({ status: 'done', outputKey: `renders/${render.id}/out.png`, fileSizeBytes: 64, progress: 1 });
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'capture 1']);
    expect(w.renders.eventsOf(render.id)).toEqual(['render.completed']);
    expect(w.renders.events[0]).toMatchObject({ mode: 'live', target: 'https://hooks.test/cb', data: { id: render.id, status: 'done', credits: 1 } });

    // §1.4: the same key and body answer with the same render, holding and writing nothing more.
    const again = await w.claim('image', { key: 'k-still' });
    expect(again).toMatchObject({ replayed: true, render: { id: render.id, status: 'done' } });
    expect(await w.lifecycle.replayed(WS, 'k-still', 'h1')).toMatchObject({ id: render.id });
    await expect(w.claim('image', { key: 'k-still', hash: 'other body' })).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(w.renders.ledger).toHaveLength(2);
    expect(w.renders.events).toHaveLength(1);
  });

  it('a still the engine refuses fails with the refusal\'s code and its credit released; a fault of ours fails the job too', async () => {
    const w = world();
    const { render } = await w.claim('image');
    w.stillEngine.fail = new ApiError('UNSUPPORTED_ASSET', 'This clip needs the browser engine');
    expect(await w.stills.run({ edit: render.edit as never, key: `renders/${render.id}/out.png`, scale: 1, watermark: false, renderId: render.id }))
      .toMatchObject({ ok: false, error: { code: 'UNSUPPORTED_ASSET' } });
    expect(w.renders.row(render.id)).toMatchObject({ status: 'failed', error: { code: 'UNSUPPORTED_ASSET', stage: 'rendering' } });
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'release 1']);

    const second = (await w.claim('image')).render;
    w.stillEngine.fail = new Error('disk full');
    await expect(w.stills.run({ edit: second.edit as never, key: `renders/${second.id}/out.png`, scale: 1, watermark: false, renderId: second.id })).rejects.toThrow('disk full');
    expect(w.renders.row(second.id)).toMatchObject({ status: 'failed', error: { code: 'INTERNAL_ERROR' } });
    expect(w.renders.creditsOf(second.id)).toEqual(['hold 1', 'release 1']);
    // Its worker dying afterwards changes nothing: settled once.
    await w.stills.lost(second.id, `renders/${second.id}/out.png`);
    expect(w.renders.eventsOf(second.id)).toEqual(['render.failed']);
  });

  it('two videos on a plan of one concurrent render: the second waits for the slot without using a run, then both complete', async () => {
    const w = world({ concurrentRenders: 1 });
    const a = (await w.claim('video')).render;
    const b = (await w.claim('video')).render;
    expect(w.renders.eventsOf(a.id)).toEqual(['render.queued']);
    w.engine.next('hang');
    const first = w.videos.render(w.run(a.id));
    await settle();
    expect(w.renders.row(a.id)).toMatchObject({ status: 'rendering', progress: 0.5 });
    expect(w.feed).toContainEqual([a.id, 0.5]);

    expect(await w.videos.render(w.run(b.id))).toEqual({ wait: 1000 });
    expect(w.renders.row(b.id)).toMatchObject({ status: 'queued', attempts: 1 });

    w.engine.release();
    expect(await first).toEqual({ status: 'done' });
    expect(w.slots.held.get(WS)?.size).toBe(0);
    expect(await w.videos.render(w.run(b.id))).toEqual({ status: 'done' });
    for (const r of [a, b]) {
      const row = w.renders.row(r.id);
      expect(row).toMatchObject({ status: 'done', outputKey: stored(r.id, 'mp4'), posterKey: stored(r.id, 'jpg'), progress: 1, duration: 2, fps: 30 });
      expect(w.storage.keys(`r/${r.id}/`)).toEqual([row.outputKey, row.posterKey].sort());
      expect(w.renders.eventsOf(r.id)).toEqual(['render.queued', 'render.started', 'render.completed']);
      expect(w.renders.creditsOf(r.id)).toEqual(['hold 1', 'capture 1']);
    }
    // The engine's files of each run are removed from this machine once stored.
    expect(w.scratch.removed).toEqual(expect.arrayContaining(['/engine/out-1.mp4', '/engine/poster-1.jpg']));
    expect(w.clock.pending).toBe(0);
  });

  it('a long mp4 is drawn in chunks by any worker, joined, stored and settled once; its chunk files and progress go', async () => {
    const w = world();
    const { render } = await w.claim('video', { seconds: 2 });
    expect(await w.videos.render(w.run(render.id))).toEqual({ status: 'chunked' });
    expect(w.queue.flows).toEqual([{ renderId: render.id, token: 't1', chunks: [{ index: 0, from: 0, to: 29, totalFrames: 60 }, { index: 1, from: 30, to: 59, totalFrames: 60 }] }]);
    const results: VideoChunkResult[] = [];
    for (const c of w.queue.flows[0]!.chunks) results.push(await w.videos.chunk({ data: { renderId: render.id, token: 't1', ...c }, attempt: 1 }));
    expect(results).toMatchObject([{ ok: true, index: 0, videoKey: `work/chunks/${render.id}-t1/0.ts`, audioKey: `work/chunks/${render.id}-t1/0.aac`, worker: 'memory:1' }, { ok: true, index: 1 }]);
    await settle();
    expect(w.renders.row(render.id).progress).toBe(0.9);
    expect(w.storage.keys('work/chunks/')).toHaveLength(4);

    expect(await w.videos.combine({ data: { renderId: render.id, token: 't1' }, attempt: 1 }, async () => results)).toEqual({ status: 'done' });
    expect(w.engine.calls).toEqual(['chunk 0-29', 'chunk 30-59', 'combine 2']);
    expect(w.storage.fetched).toHaveLength(4);
    expect(w.storage.keys('work/chunks/')).toEqual([]);
    expect(w.queue.keeps(render.id)).toBe(false);
    expect(w.slots.held.get(WS)?.size).toBe(0);
    expect(w.renders.row(render.id)).toMatchObject({ status: 'done', outputKey: stored(render.id, 'mp4') });
    expect(w.renders.eventsOf(render.id)).toEqual(['render.queued', 'render.started', 'render.completed']);
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'capture 1']);
    expect(w.scratch.open.size).toBe(0);
  });

  it('a cancel mid-run stops the engine within a poll, settles cancelled with the credits released, and frees the slot', async () => {
    const w = world();
    const { render } = await w.claim('video');
    w.engine.next('hang');
    const running = w.videos.render(w.run(render.id));
    await settle();
    expect(await w.lifecycle.cancel(WS, render.id)).toMatchObject({ immediate: false, render: { status: 'rendering', cancelRequested: true } });
    await w.clock.advance(500);
    expect(await running).toEqual({ status: 'cancelled' });
    expect(w.renders.row(render.id)).toMatchObject({ status: 'cancelled', outputKey: null });
    expect(w.renders.eventsOf(render.id)).toEqual(['render.queued', 'render.started', 'render.cancelled']);
    expect(w.renders.events.at(-1)!.data).toMatchObject({ stage: 'rendering', credits: 0 });
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'release 1']);
    expect(w.slots.held.get(WS)?.size).toBe(0);
    await expect(w.lifecycle.cancel(WS, render.id)).rejects.toMatchObject({ code: 'ALREADY_SETTLED' });

    // A queued render is cancelled at once, with no run at all.
    const queued = (await w.claim('video')).render;
    expect(await w.lifecycle.cancel(WS, queued.id)).toMatchObject({ immediate: true, render: { status: 'cancelled' } });
    expect(await w.videos.render(w.run(queued.id))).toEqual({ status: 'cancelled' });
    expect(w.engine.calls).toEqual(['render']);
  });

  it('a run whose worker died goes back to queued and the next run completes it: started once, charged once', async () => {
    const w = world();
    const { render } = await w.claim('video');
    w.engine.next('hang');
    void w.videos.render(w.run(render.id, 1));
    await settle();
    // The queue finds the job stalled: its run 1 ended with its worker.
    await w.videos.stalled(render.id, 1);
    expect(w.renders.row(render.id)).toMatchObject({ status: 'queued', progress: 0 });
    expect(await w.videos.render(w.run(render.id, 2))).toEqual({ status: 'done' });
    expect(w.renders.row(render.id)).toMatchObject({ status: 'done', attempts: 2 });
    expect(w.renders.eventsOf(render.id)).toEqual(['render.queued', 'render.started', 'render.completed']);
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'capture 1']);
  });

  it(`a render whose worker is lost ${VIDEO_LOST_WORKERS} times fails WORKER_LOST with its credits released`, async () => {
    const w = world();
    const { render } = await w.claim('video');
    w.engine.next('hang', 'hang');
    void w.videos.render(w.run(render.id, 1));
    await settle();
    await w.videos.stalled(render.id, 1);
    void w.videos.render(w.run(render.id, 2));
    await settle();
    await w.videos.abandoned('video.render', { renderId: render.id }, true, 'job stalled more than allowable limit');
    expect(w.renders.row(render.id)).toMatchObject({ status: 'failed', error: { code: 'WORKER_LOST', stage: 'rendering' } });
    expect(w.renders.eventsOf(render.id)).toEqual(['render.queued', 'render.started', 'render.failed']);
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'release 1']);
    // The dead runs' cancel watch sees the render settled and stops their engine calls.
    await w.clock.advance(500);
    expect(w.renders.eventsOf(render.id)).toHaveLength(3);
  });

  it('a fault of ours is run again; the same fault on the next run fails RENDER_FAILED at once (issue 27), not a third run', async () => {
    const w = world();
    const { render } = await w.claim('video');
    w.engine.next(new Error('frame 12 could not be drawn'), new Error('frame 13 could not be drawn'));
    await expect(w.videos.render(w.run(render.id, 1))).rejects.toThrow('frame 12');
    expect(w.renders.row(render.id)).toMatchObject({ status: 'queued' });
    expect(await w.videos.render(w.run(render.id, 2, 'frame 12 could not be drawn'))).toEqual({ status: 'failed' });
    expect(w.renders.row(render.id).error).toMatchObject({ code: 'RENDER_FAILED' });
    expect(w.renders.creditsOf(render.id)).toEqual(['hold 1', 'release 1']);
  });

  it('§8 queue depth: a claim past the plan\'s queue keeps nothing (no row, hold or event)', async () => {
    const w = world();
    for (let i = 0; i < 3; i++) await w.claim('video');
    await expect(w.claim('video')).rejects.toMatchObject({ code: 'LIMIT_QUEUE_DEPTH' });
    expect(w.renders.ledger).toHaveLength(3);
    expect(w.renders.events).toHaveLength(3);
  });
});
