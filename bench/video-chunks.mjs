#!/usr/bin/env node
// Chunked video renders (issue 6): one long mp4 rendered through the API by one worker, then by two,
// with chunking on (VIDEO_CHUNK_FRAMES per chunk, any worker takes a chunk). Prints both wall times
// and their ratio (target: two workers >= 1.6 x faster than one on a 60 s edit). Each stack has its
// own Redis, SQLite, API and worker processes (bench/lib/stack.mjs). By default each worker gets
// cores of its own (`--cores-per-worker`, taskset: worker i on cores i*N..i*N+N-1, with its Chromium
// and ffmpeg), standing in for workers on separate machines; `--cores-per-worker 0` lets both share
// every core of this machine. Runs dist/ (npm run -s build first). Usage:
//   node bench/video-chunks.mjs [--seconds 60] [--width 640 --height 360] [--fps 30] [--chunk 300] [--cores-per-worker 1] [--json]
import { availableParallelism } from 'node:os';
import { childOutputs, cleanup, integer, log, positive, runBench, sleep, startStack } from './lib/harness.mjs';

// A long edit of the kinds of clips the renderer draws per frame: a moving background shape, a title
// fading in and out every 5 s, a boxed caption with a tween; no media downloads.
function longEdit(args) {
  const titles = Array.from({ length: Math.ceil(args.seconds / 5) }, (_, i) => ({
    asset: { type: 'text', text: `Scene ${i + 1}`, font: { family: 'Open Sans', size: 48, color: '#ffffff', weight: 700 } },
    start: i * 5, length: Math.min(5, args.seconds - i * 5), transition: { in: 'fade', out: 'fade' }, position: 'top', offset: { y: -0.1 },
  }));
  return {
    timeline: {
      background: '#14213d',
      tracks: [
        { clips: titles },
        { clips: [{ asset: { type: 'text', text: 'Chunked across workers', font: { family: 'Inter', size: 28, color: '#14213d' }, background: { color: '#fca311', padding: 16, borderRadius: 12 } }, start: 0, length: args.seconds, position: 'bottom', offset: { y: 0.08 }, effect: 'slideUp' }] },
        { clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 120 }, fill: { color: '#e5e5e5', opacity: 0.25 } }, start: 0, length: args.seconds, effect: 'zoomInSlow' }] },
      ],
    },
    output: { format: 'mp4', size: { width: args.width, height: args.height }, fps: args.fps },
  };
}

/** taskset CPU list of worker i with `cores` cores each (undefined: not pinned). */
const cpusOf = (cores, i) => (cores === 0 ? undefined : cores === 1 ? String(i) : `${i * cores}-${i * cores + cores - 1}`);

async function renderWith(args, workers) {
  const stack = await startStack({
    name: `chunks${workers}`,
    workers,
    workerCpus: Array.from({ length: workers }, (_, i) => cpusOf(args['cores-per-worker'], i)),
    extraEnv: { VIDEO_ENGINE: 'on', VIDEO_CHUNK_FRAMES: String(args.chunk), VIDEO_CHUNK_MIN_FRAMES: String(args.chunk * 2 - 1), VIDEO_CONCURRENCY: '1' },
  });
  const key = stack.workspace.liveKey;
  const call = (method, path, body) =>
    fetch(`${stack.base}/api${path}`, { method, headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) }).then((r) => r.json());
  // Warm-up: every worker's engine up (a short render each), so the timed render measures rendering.
  for (let deadline = Date.now() + 120_000; ; ) {
    const r = await call('POST', '/v1/render', { edit: { ...longEdit(args), timeline: { ...longEdit(args).timeline, tracks: [{ clips: [{ asset: { type: 'text', text: 'warm' }, start: 0, length: 1 }] }] } } });
    if (r.data?.id) {
      for (;;) {
        const s = (await call('GET', `/v1/render/${r.data.id}`)).data;
        if (['done', 'failed', 'cancelled'].includes(s.status)) break;
        await sleep(200);
      }
      break;
    }
    if (Date.now() > deadline) throw new Error(`no video engine: ${JSON.stringify(r)}\n${childOutputs()}`);
    await sleep(500);
  }
  await sleep(3000); // the other workers' engines
  const started = performance.now();
  const accepted = await call('POST', '/v1/render', { edit: longEdit(args) });
  if (!accepted.data?.id) throw new Error(`render refused: ${JSON.stringify(accepted)}`);
  let status;
  for (;;) {
    status = (await call('GET', `/v1/render/${accepted.data.id}`)).data;
    if (['done', 'failed', 'cancelled'].includes(status.status)) break;
    await sleep(250);
  }
  const ms = performance.now() - started;
  if (status.status !== 'done') throw new Error(`render ${status.status}: ${JSON.stringify(status.error)}\n${childOutputs()}`);
  await cleanup();
  return ms;
}

async function run(args) {
  const cores = args['cores-per-worker'];
  log(`${args.seconds} s at ${args.width}×${args.height} ${args.fps} fps, chunks of ${args.chunk} frames, ${cores === 0 ? 'workers sharing every core' : `${cores} core(s) of its own per worker`}`);
  const one = await renderWith(args, 1);
  log(`one worker:  ${(one / 1000).toFixed(1)} s`);
  const two = await renderWith(args, 2);
  log(`two workers: ${(two / 1000).toFixed(1)} s`);
  return { seconds: args.seconds, size: `${args.width}x${args.height}`, fps: args.fps, chunkFrames: args.chunk, coresPerWorker: cores || null, oneWorkerMs: one, twoWorkersMs: two, speedup: one / two, target: 1.6 };
}

await runBench({
  name: 'video-chunks',
  flags: {
    seconds: { arg: 'S', default: 60, parse: positive, help: 'media duration of the edit (default 60)' },
    width: { arg: 'W', default: 640, parse: integer(1), help: 'frame width (default 640)' },
    height: { arg: 'H', default: 360, parse: integer(1), help: 'frame height (default 360)' },
    fps: { arg: 'N', default: 30, parse: integer(1), help: 'frames per second (default 30)' },
    chunk: { arg: 'N', default: 300, parse: integer(1), help: 'frames per chunk, VIDEO_CHUNK_FRAMES (default 300)' },
    'cores-per-worker': { arg: 'N', default: 1, parse: integer(0), help: 'cores pinned to each worker with taskset (default 1; 0: both share every core)' },
  },
  check: (args) => {
    const cores = args['cores-per-worker'];
    if (cores * 2 > availableParallelism()) throw new Error(`--cores-per-worker ${cores}: two workers need ${cores * 2} cores, this machine has ${availableParallelism()}`);
  },
  run,
  figure: (r) => `one worker ${(r.oneWorkerMs / 1000).toFixed(1)} s, two workers ${(r.twoWorkersMs / 1000).toFixed(1)} s: ${r.speedup.toFixed(2)} x faster ` +
    `(target >= 1.6; ${r.coresPerWorker === null ? 'both workers share this machine\'s cores' : `${r.coresPerWorker} core(s) per worker`})`,
});
