#!/usr/bin/env node
// Video engine benchmark (issue 6): a 10 s hd (1280×720) 30 fps edit with a background video, an
// image, two animated text clips and a soundtrack, rendered by VideoEngine (Remotion + Debian
// Chromium). Prints render time ÷ media duration, the peak RSS of this process and its children
// (Chromium, the compositor, ffmpeg), and, in the same run, the time the shipped ffmpeg alone takes to
// encode the same number of frames of similar footage with the same x264 settings (the floor).
// Runs dist/ (npm run -s build first). Usage:
//   node bench/video-render.mjs [--runs 2] [--concurrency N] [--preset veryfast] [--seconds 10] [--json]
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { assertEdit } from '../dist/libs/edit-spec/src/index.js';
import { CRF, VideoEngine, runBinary } from '../dist/libs/video/src/index.js';
import { makeTestVideo, mapFetcher, probeStreams, sineWav } from '../dist/libs/video/src/testing.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '2' },
    concurrency: { type: 'string' },
    preset: { type: 'string', default: 'veryfast' },
    seconds: { type: 'string', default: '10' },
    jpeg: { type: 'string', default: '80' },
    json: { type: 'boolean', default: false },
  },
});
const RUNS = Number(args.runs);
const SECONDS = Number(args.seconds);
const FPS = 30;
const [W, H] = [1280, 720];
const CONCURRENCY = args.concurrency ? Number(args.concurrency) : availableParallelism();
const log = (...a) => { if (!args.json) console.error(...a); };

// --- peak RSS of this process tree (Node, Chromium and its helpers, the compositor, ffmpeg) ------
function treeRssBytes() {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch { /* gone */ }
  }
  let total = 0;
  const stack = [process.pid];
  while (stack.length) {
    const pid = stack.pop();
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch { /* gone */ }
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}
let peakRss = 0;
const sampler = setInterval(() => { peakRss = Math.max(peakRss, treeRssBytes()); }, 100);

// --- inputs ---------------------------------------------------------------------------------------
const CDN = 'https://cdn.example.com';
const files = new Map();
let t = performance.now();
files.set(`${CDN}/background.mp4`, await makeTestVideo({ width: W, height: H, seconds: SECONDS, fps: FPS, preset: 'ultrafast' }));
files.set(`${CDN}/music.wav`, sineWav(SECONDS, 330));
files.set(`${CDN}/logo.png`, await sharp({ create: { width: 400, height: 400, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
  .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400"><circle cx="200" cy="200" r="180" fill="#e63946"/><rect x="120" y="150" width="160" height="100" rx="20" fill="#ffffff"/></svg>') }])
  .png().toBuffer());
log(`inputs made in ${((performance.now() - t) / 1000).toFixed(1)} s`);

const edit = assertEdit({
  timeline: {
    background: '#000000',
    soundtrack: { src: `${CDN}/music.wav`, effect: 'fadeInFadeOut', volume: 0.8 },
    tracks: [
      { clips: [{ asset: { type: 'rich-text', text: 'Summer collection', font: { family: 'Inter', size: 84, weight: 800, color: '#ffffff' }, shadow: { offsetX: 0, offsetY: 4, blur: 12, color: '#000000', opacity: 0.5 }, animation: { preset: 'ascend', duration: 1.2 } }, start: 0.5, length: SECONDS - 1, width: 1000, height: 140, position: 'top', offset: { y: -0.08 }, transition: { out: 'fade' } }] },
      { clips: [{ asset: { type: 'text', text: 'Up to 50 % off, this week only', width: 900, height: 110, font: { family: 'Open Sans', size: 44, color: '#111111' }, background: { color: '#ffffff', opacity: 0.9, padding: 20, borderRadius: 24 } }, start: 2, length: SECONDS - 3, position: 'bottom', offset: { y: [{ from: -0.2, to: 0.08, start: 0, length: 1, interpolation: 'bezier', easing: 'easeOutBack' }] }, transition: { in: 'fade', out: 'slideDown' } }] },
      { clips: [{ asset: { type: 'image', src: `${CDN}/logo.png` }, start: 0, length: SECONDS, fit: 'none', scale: 0.4, position: 'topRight', offset: { x: -0.03, y: -0.03 }, opacity: [{ from: 0, to: 1, start: 0, length: 1 }] }] },
      { clips: [{ asset: { type: 'video', src: `${CDN}/background.mp4` }, start: 0, length: SECONDS, effect: 'zoomInSlow' }] },
    ],
  },
  output: { format: 'mp4', resolution: 'hd', fps: FPS },
});

// --- the engine -------------------------------------------------------------------------------------
const work = await mkdtemp(join(tmpdir(), 'bench-video-'));
t = performance.now();
const engine = await VideoEngine.start({ fetch: mapFetcher(files), concurrency: CONCURRENCY, x264Preset: args.preset, jpegQuality: Number(args.jpeg), workDir: join(tmpdir(), 'video-engine') });
const startMs = performance.now() - t;
log(`engine started in ${(startMs / 1000).toFixed(1)} s (bundle + browser)`);

const renders = [];
for (let i = 0; i < RUNS; i++) {
  const out = await engine.render(edit, { outputDir: work });
  const probed = await probeStreams(out.file);
  renders.push({ ms: out.renderMs, bytes: out.fileSizeBytes, frames: probed.frames, duration: probed.duration });
  log(`render ${i + 1}: ${(out.renderMs / 1000).toFixed(2)} s, ${(out.fileSizeBytes / 1e6).toFixed(2)} MB, ${probed.frames} frames, ${probed.codec} ${probed.width}×${probed.height} + ${probed.audio}`);
}
await engine.close();
clearInterval(sampler);

// --- the floor: the shipped ffmpeg alone encoding the same frames -----------------------------------
// The same kind of footage (a noisy, striped picture panned across) at 1280×720 30 fps, with the
// engine's x264 preset and CRF, no compositing: what encoding alone costs on this machine.
const pan = join(work, 'pan.png');
await sharp({ create: { width: W * 2, height: H, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 12 } } }).png().toFile(pan);
t = performance.now();
await runBinary('ffmpeg', ['-v', 'error', '-y', '-loop', '1', '-framerate', String(FPS), '-t', String(SECONDS), '-i', pan,
  '-vf', `crop=${W}:${H}:x='t*${W / SECONDS}':y=0,format=yuv420p`, '-c:v', 'libx264', '-preset', args.preset, '-crf', String(CRF.h264.high), '-r', String(FPS), join(work, 'floor.mp4')], { timeoutMs: 600_000 });
const floorMs = performance.now() - t;
await rm(work, { recursive: true, force: true });

const best = Math.min(...renders.map((r) => r.ms));
const median = [...renders.map((r) => r.ms)].sort((a, b) => a - b)[Math.floor(renders.length / 2)];
const result = {
  mediaSeconds: SECONDS,
  frames: SECONDS * FPS,
  concurrency: CONCURRENCY,
  x264Preset: args.preset,
  startMs: Math.round(startMs),
  renderMs: renders.map((r) => r.ms),
  realtimeRatio: best / 1000 / SECONDS,
  medianRealtimeRatio: median / 1000 / SECONDS,
  fps: (SECONDS * FPS) / (best / 1000),
  peakRssMB: Math.round(peakRss / 1024 / 1024),
  floorMs: Math.round(floorMs),
  floorRatio: best / floorMs,
  loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  targets: { realtimeRatio: 1.0, peakRssMB: 1536 },
};
if (args.json) {
  console.log(JSON.stringify(result));
} else {
  console.log(`renders      ${result.renderMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')} for ${SECONDS} s of ${W}×${H} ${FPS} fps (${result.fps.toFixed(1)} frames/s at best)`);
  console.log(`floor        ffmpeg alone: ${(floorMs / 1000).toFixed(2)} s for the same ${SECONDS * FPS} frames (libx264 ${args.preset}, crf ${CRF.h264.high})`);
  console.log(`peak RSS     ${result.peakRssMB} MB (process tree)   load average ${result.loadAverage}`);
  console.log(`video-render: ${result.realtimeRatio.toFixed(2)} x media duration (target <= 1.0), ${result.floorRatio.toFixed(2)} x ffmpeg floor, peak RSS ${result.peakRssMB} MB (target <= 1536)`);
}
