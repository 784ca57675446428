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
import { parseArgs } from 'node:util';
import { cleanup, childOutputs, installCleanupHandlers, log, startStack } from './lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    width: { type: 'string', default: '640' },
    height: { type: 'string', default: '360' },
    fps: { type: 'string', default: '30' },
    chunk: { type: 'string', default: '300' },
    'cores-per-worker': { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(args.seconds);
const CORES = Number(args['cores-per-worker']);
if (CORES * 2 > availableParallelism()) throw new Error(`--cores-per-worker ${CORES}: two workers need ${CORES * 2} cores, this machine has ${availableParallelism()}`);
/** taskset CPU list of worker i (undefined: not pinned). */
const cpusOf = (i) => (CORES === 0 ? undefined : CORES === 1 ? String(i) : `${i * CORES}-${i * CORES + CORES - 1}`);
installCleanupHandlers();

// A long edit of the kinds of clips the renderer draws per frame: a moving background shape, a title
// fading in and out every 5 s, a boxed caption with a tween; no media downloads.
function longEdit() {
  const titles = Array.from({ length: Math.ceil(SECONDS / 5) }, (_, i) => ({
    asset: { type: 'text', text: `Scene ${i + 1}`, font: { family: 'Open Sans', size: 48, color: '#ffffff', weight: 700 } },
    start: i * 5, length: Math.min(5, SECONDS - i * 5), transition: { in: 'fade', out: 'fade' }, position: 'top', offset: { y: -0.1 },
  }));
  return {
    timeline: {
      background: '#14213d',
      tracks: [
        { clips: titles },
        { clips: [{ asset: { type: 'text', text: 'Chunked across workers', font: { family: 'Inter', size: 28, color: '#14213d' }, background: { color: '#fca311', padding: 16, borderRadius: 12 } }, start: 0, length: SECONDS, position: 'bottom', offset: { y: 0.08 }, effect: 'slideUp' }] },
        { clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 120 }, fill: { color: '#e5e5e5', opacity: 0.25 } }, start: 0, length: SECONDS, effect: 'zoomInSlow' }] },
      ],
    },
    output: { format: 'mp4', size: { width: Number(args.width), height: Number(args.height) }, fps: Number(args.fps) },
  };
}

async function renderWith(workers) {
  const stack = await startStack({
    name: `chunks${workers}`,
    workers,
    workerCpus: Array.from({ length: workers }, (_, i) => cpusOf(i)),
    extraEnv: { VIDEO_ENGINE: 'on', VIDEO_CHUNK_FRAMES: args.chunk, VIDEO_CHUNK_MIN_FRAMES: String(Number(args.chunk) * 2 - 1), VIDEO_CONCURRENCY: '1' },
  });
  const key = stack.workspace.liveKey;
  const call = (method, path, body) =>
    fetch(`${stack.base}/api${path}`, { method, headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) }).then((r) => r.json());
  // Warm-up: every worker's engine up (a short render each), so the timed render measures rendering.
  for (let deadline = Date.now() + 120_000; ; ) {
    const r = await call('POST', '/v1/render', { edit: { ...longEdit(), timeline: { ...longEdit().timeline, tracks: [{ clips: [{ asset: { type: 'text', text: 'warm' }, start: 0, length: 1 }] }] } } });
    if (r.data?.id) {
      for (;;) {
        const s = (await call('GET', `/v1/render/${r.data.id}`)).data;
        if (['done', 'failed', 'cancelled'].includes(s.status)) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      break;
    }
    if (Date.now() > deadline) throw new Error(`no video engine: ${JSON.stringify(r)}\n${childOutputs()}`);
    await new Promise((res) => setTimeout(res, 500));
  }
  await new Promise((res) => setTimeout(res, 3000)); // the other workers' engines
  const started = performance.now();
  const accepted = await call('POST', '/v1/render', { edit: longEdit() });
  if (!accepted.data?.id) throw new Error(`render refused: ${JSON.stringify(accepted)}`);
  let status;
  for (;;) {
    status = (await call('GET', `/v1/render/${accepted.data.id}`)).data;
    if (['done', 'failed', 'cancelled'].includes(status.status)) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  const ms = performance.now() - started;
  if (status.status !== 'done') throw new Error(`render ${status.status}: ${JSON.stringify(status.error)}\n${childOutputs()}`);
  await cleanup();
  return ms;
}

try {
  log(`${SECONDS} s at ${args.width}×${args.height} ${args.fps} fps, chunks of ${args.chunk} frames, ${CORES === 0 ? 'workers sharing every core' : `${CORES} core(s) of its own per worker`}`);
  const one = await renderWith(1);
  log(`one worker:  ${(one / 1000).toFixed(1)} s`);
  const two = await renderWith(2);
  log(`two workers: ${(two / 1000).toFixed(1)} s`);
  const result = { seconds: SECONDS, size: `${args.width}x${args.height}`, fps: Number(args.fps), chunkFrames: Number(args.chunk), coresPerWorker: CORES || null, oneWorkerMs: one, twoWorkersMs: two, speedup: one / two, target: 1.6 };
  if (args.json) console.log(JSON.stringify(result));
  else console.log(`video-chunks: one worker ${(one / 1000).toFixed(1)} s, two workers ${(two / 1000).toFixed(1)} s: ${(one / two).toFixed(2)} x faster (target >= 1.6; ${CORES === 0 ? 'both workers share this machine\'s cores' : `${CORES} core(s) per worker`})`);
} finally {
  await cleanup();
}
