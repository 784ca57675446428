#!/usr/bin/env node
// Video engine benchmark (issue 6): a 10 s hd (1280×720) 30 fps edit with a background video, an
// image, two animated text clips and a soundtrack, rendered by VideoEngine (Remotion + Debian
// Chromium). Prints render time ÷ media duration, the peak RSS of this process and its children
// (Chromium, the compositor, ffmpeg), and, in the same run, the time the shipped ffmpeg alone takes to
// encode the same number of frames of similar footage with the same x264 settings (the floor).
// Runs dist/ (npm run -s build first). Usage:
//   node bench/video-render.mjs [--runs 2] [--parallelism N] [--browser PATH] [--concurrency N] [--preset veryfast] [--seconds 10] [--json]
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { assertEdit } from '../dist/libs/edit-spec/src/index.js';
import { CRF, VideoEngine, runBinary } from '../dist/libs/video/src/index.js';
import { makeTestVideo, mapFetcher, probeStreams, sineWav } from '#testing/video';
import { integer, log, number, onCleanup, positive, procStat, quantile, runBench, tempDir } from './lib/harness.mjs';

const FPS = 30;
const [W, H] = [1280, 720];

// --- peak RSS of this process tree (Node, Chromium and its helpers, the compositor, ffmpeg) ------
/** CPU time used by the tree, per process (pid + start time), for the load-independent CPU figure. */
const cpuTicks = new Map();
const cpuSeconds = () => [...cpuTicks.values()].reduce((a, b) => a + b, 0) / 100;
/** RSS and PSS (shared pages divided among the processes sharing them) summed over the tree. */
function treeMemory() {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = procStat(name);
    if (!f) continue;
    const ppid = Number(f[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  let rss = 0;
  let pss = 0;
  const stack = [process.pid];
  while (stack.length) {
    const pid = stack.pop();
    const f = procStat(pid);
    if (f) {
      // utime + stime in clock ticks (100/s); the most seen per process (exited ones keep their last).
      const key = `${pid}:${f[19]}`;
      cpuTicks.set(key, Math.max(cpuTicks.get(key) ?? 0, Number(f[11]) + Number(f[12])));
      try {
        const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
        rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
        pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
      } catch { /* gone */ }
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return { rss, pss };
}

async function run(args) {
  const SECONDS = args.seconds;
  const CONCURRENCY = args.concurrency ?? availableParallelism();
  let peakRss = 0;
  let peakPss = 0;
  const sampler = setInterval(() => {
    const m = treeMemory();
    peakRss = Math.max(peakRss, m.rss);
    peakPss = Math.max(peakPss, m.pss);
  }, 150);

  // --- inputs -------------------------------------------------------------------------------------
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

  // --- the engine -----------------------------------------------------------------------------------
  const work = tempDir('bench-video');
  t = performance.now();
  const engine = await VideoEngine.start({ fetch: mapFetcher(files), concurrency: CONCURRENCY, ...(args.parallelism ? { parallelism: args.parallelism } : {}), ...(args.browser ? { browserExecutable: args.browser } : {}), x264Preset: args.preset, jpegQuality: args.jpeg, workDir: join(tmpdir(), 'video-engine') });
  onCleanup(() => engine.close());
  const startMs = performance.now() - t;
  log(`engine started in ${(startMs / 1000).toFixed(1)} s (bundle + browser)`);

  const renders = [];
  let lastFile;
  for (let i = 0; i < args.runs; i++) {
    treeMemory();
    const cpuBefore = cpuSeconds();
    const out = await engine.render(edit, { outputDir: work });
    treeMemory();
    const cpu = cpuSeconds() - cpuBefore;
    lastFile = out.file;
    const probed = await probeStreams(out.file);
    renders.push({ ms: out.renderMs, cpu, bytes: out.fileSizeBytes, frames: probed.frames, duration: probed.duration });
    log(`render ${i + 1}: ${(out.renderMs / 1000).toFixed(2)} s (${cpu.toFixed(1)} CPU-s), ${(out.fileSizeBytes / 1e6).toFixed(2)} MB, ${probed.frames} frames, ${probed.codec} ${probed.width}×${probed.height} + ${probed.audio}`);
  }
  await engine.close();
  clearInterval(sampler);

  // --- the floor: the shipped ffmpeg alone encoding the same frames ---------------------------------
  // The engine's own output decoded and encoded again with the same x264 preset and CRF: what
  // encoding these 300 frames costs on this machine with no browser at all (h264 decoding included,
  // which is cheaper than the JPEG decoding of the engine's frame pipe).
  t = performance.now();
  await runBinary('ffmpeg', ['-v', 'error', '-y', '-i', lastFile, '-an', '-c:v', 'libx264', '-preset', args.preset, '-crf', String(CRF.h264.high), '-pix_fmt', 'yuv420p', join(work, 'floor.mp4')], { timeoutMs: 600_000 });
  const floorMs = performance.now() - t;

  const best = Math.min(...renders.map((r) => r.ms));
  const median = quantile(renders.map((r) => r.ms), 0.5);
  return {
    mediaSeconds: SECONDS,
    frames: SECONDS * FPS,
    concurrency: CONCURRENCY,
    x264Preset: args.preset,
    parallelism: args.parallelism ?? availableParallelism(),
    browser: engine.browserExecutable,
    startMs: Math.round(startMs),
    renderMs: renders.map((r) => r.ms),
    cpuSeconds: renders.map((r) => Math.round(r.cpu * 10) / 10),
    // On an idle machine of this many cores, a render that keeps them all busy takes about this long.
    idleEstimateRatio: Math.min(...renders.map((r) => r.cpu)) / availableParallelism() / SECONDS,
    realtimeRatio: best / 1000 / SECONDS,
    medianRealtimeRatio: median / 1000 / SECONDS,
    fps: (SECONDS * FPS) / (best / 1000),
    peakRssMB: Math.round(peakRss / 1024 / 1024),
    peakPssMB: Math.round(peakPss / 1024 / 1024),
    floorMs: Math.round(floorMs),
    floorRatio: best / floorMs,
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    targets: { realtimeRatio: 1.0, peakRssMB: 1536 },
  };
}

await runBench({
  name: 'video-render',
  flags: {
    runs: { arg: 'N', default: 2, parse: integer(1), help: 'renders of the edit; the figure is the best (default 2)' },
    concurrency: { arg: 'N', parse: integer(1), help: "the engine's concurrency, browser tabs (default: this machine's available parallelism)" },
    parallelism: { arg: 'N', parse: integer(1), help: "parts rendered at once by the engine (default: this machine's available parallelism)" },
    browser: { arg: 'PATH', help: 'the browser executable (default: the engine\'s, Debian\'s chromium-headless-shell)' },
    preset: { arg: 'P', default: 'veryfast', help: 'x264 preset of the engine and of the ffmpeg floor (default veryfast)' },
    seconds: { arg: 'S', default: 10, parse: positive, help: 'media duration of the edit (default 10)' },
    jpeg: { arg: 'Q', default: 80, parse: number(0), help: "JPEG quality of the engine's frames (default 80)" },
  },
  run,
  summary: (r) => {
    console.log(`renders      ${r.renderMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')} for ${r.mediaSeconds} s of ${W}×${H} ${FPS} fps (${r.fps.toFixed(1)} frames/s at best)`);
    console.log(`cpu          ${r.cpuSeconds.map((c) => `${c} CPU-s`).join(', ')} (process tree): about ${r.idleEstimateRatio.toFixed(2)} x media duration on ${availableParallelism()} idle cores`);
    console.log(`floor        ffmpeg alone: ${(r.floorMs / 1000).toFixed(2)} s for the same ${r.frames} frames (libx264 ${r.x264Preset}, crf ${CRF.h264.high})`);
    console.log(`memory       peak RSS ${r.peakRssMB} MB, peak PSS ${r.peakPssMB} MB (process tree: Node, Chromium, ffmpeg)   load average ${r.loadAverage}`);
  },
  figure: (r) => `${r.realtimeRatio.toFixed(2)} x media duration (target <= 1.0), ${r.floorRatio.toFixed(2)} x ffmpeg floor, peak RSS ${r.peakRssMB} MB / PSS ${r.peakPssMB} MB (target <= 1536)`,
});
