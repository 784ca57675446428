#!/usr/bin/env node
// Video engine benchmark (issues 6, 33): two 10 s hd (1280×720) 30 fps scenes rendered by
// VideoEngine (Remotion + Debian Chromium):
//   footage:  a background video with a slow zoom, an image, two animated text clips, a soundtrack;
//   template: three photos each holding ~3 s with 0.5 s fades, a title that fades in and holds, a
//             caption line changing with each photo, a soundtrack (where static spans are drawn once).
// For each scene it prints render time ÷ media duration, the peak RSS of this process and its
// children (Chromium, the compositor, ffmpeg), and, in the same run, two baselines: the time the
// shipped ffmpeg alone takes to encode the engine's frames again with the same x264 settings (the
// floor), and the same scene written as a plain Remotion composition (bench/remotion-peer, bundled
// with the pinned Remotion) rendered with renderMedia and Debian's chromium-headless-shell (the peer).
// Runs dist/ (npm run -s build first). Usage:
//   node bench/video-render.mjs [--runs 2] [--scene both|footage|template] [--peer-runs 1] [--parallelism N] [--browser PATH] [--concurrency N] [--preset veryfast] [--seconds 10] [--frame-by-frame] [--no-compose] [--json]
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { bundle } from '@remotion/bundler';
import { renderMedia, selectComposition } from '@remotion/renderer';
import { assertEdit } from '../dist/libs/edit-spec/src/index.js';
import { CRF, VideoEngine, findChromium, runBinary } from '../dist/libs/video/src/index.js';
import { startedWithWorkerFlags, WORKER_NODE_FLAGS } from '../dist/apps/worker/src/node-flags.js';
import { makeTestVideo, mapFetcher, probeStreams, sineWav } from '#testing/video';
import { integer, log, number, onCleanup, oneOf, positive, procStat, quantile, rerunWithNodeFlags, runBench, tempDir } from './lib/harness.mjs';

const FPS = 30;
const [W, H] = [1280, 720];

// --- peak RSS of this process tree (Node, Chromium and its helpers, the compositor, ffmpeg) ------
/** CPU time used by the tree, per process (pid + start time), for the load-independent CPU figure. */
const cpuTicks = new Map();
const cpuSeconds = () => [...cpuTicks.values()].reduce((a, b) => a + b, 0) / 100;
/**
 * RSS summed over the tree (each process's resident pages, /proc/<pid>/statm), and with `pss` PSS too
 * (shared pages divided among the processes sharing them, smaps_rollup). smaps_rollup walks each
 * process's page tables: read every 150 ms it cost this process 7 CPU-s of a 24 s footage render
 * (2026-11-29), work the floor's run does not carry; PSS is read every 1.5 s instead.
 */
const PAGE = 4096;
function treeMemory({ pss: withPss = false } = {}) {
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
        rss += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE;
        if (withPss) pss += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
      } catch { /* gone */ }
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return { rss, pss: withPss ? pss : undefined };
}

/** A photo-like 1280×720 JPEG: a colour gradient with soft shapes and grain (every pixel differs). */
async function photo(seed) {
  const hue = (seed * 97) % 360;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${hue},60%,55%)"/><stop offset="1" stop-color="hsl(${(hue + 80) % 360},50%,25%)"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="${300 + seed * 250}" cy="380" r="220" fill="hsl(${(hue + 180) % 360},55%,60%)" opacity="0.7"/><rect x="700" y="${120 + seed * 60}" width="420" height="300" rx="40" fill="#ffffff" opacity="0.25"/></svg>`;
  const noise = await sharp({ create: { width: W, height: H, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 10 } } }).png().toBuffer();
  return sharp(Buffer.from(svg)).composite([{ input: noise, blend: 'overlay' }]).jpeg({ quality: 88 }).toBuffer();
}

/** The two scenes as edits of our spec (docs/edit-spec.md); the peer draws the same in plain Remotion (bench/remotion-peer/scenes.tsx). */
function scenes(CDN, SECONDS, silent) {
  const soundtrack = silent ? undefined : { src: `${CDN}/music.wav`, effect: 'fadeInFadeOut', volume: 0.8 };
  const footage = assertEdit({
    timeline: {
      background: '#000000',
      ...(soundtrack ? { soundtrack } : {}),
      tracks: [
        { clips: [{ asset: { type: 'rich-text', text: 'Summer collection', font: { family: 'Inter', size: 84, weight: 800, color: '#ffffff' }, shadow: { offsetX: 0, offsetY: 4, blur: 12, color: '#000000', opacity: 0.5 }, animation: { preset: 'ascend', duration: 1.2 } }, start: 0.5, length: SECONDS - 1, width: 1000, height: 140, position: 'top', offset: { y: -0.08 }, transition: { out: 'fade' } }] },
        { clips: [{ asset: { type: 'text', text: 'Up to 50 % off, this week only', width: 900, height: 110, font: { family: 'Open Sans', size: 44, color: '#111111' }, background: { color: '#ffffff', opacity: 0.9, padding: 20, borderRadius: 24 } }, start: 2, length: SECONDS - 3, position: 'bottom', offset: { y: [{ from: -0.2, to: 0.08, start: 0, length: 1, interpolation: 'bezier', easing: 'easeOutBack' }] }, transition: { in: 'fade', out: 'slideDown' } }] },
        { clips: [{ asset: { type: 'image', src: `${CDN}/logo.png` }, start: 0, length: SECONDS, fit: 'none', scale: 0.4, position: 'topRight', offset: { x: -0.03, y: -0.03 }, opacity: [{ from: 0, to: 1, start: 0, length: 1 }] }] },
        { clips: [{ asset: { type: 'video', src: `${CDN}/background.mp4` }, start: 0, length: SECONDS, effect: 'zoomInSlow' }] },
      ],
    },
    output: { format: 'mp4', resolution: 'hd', fps: FPS },
  });
  const each = SECONDS / 3;
  const captions = ['Handmade in Lisbon', 'Linen that breathes', 'Free returns, always'];
  const template = assertEdit({
    timeline: {
      background: '#101010',
      ...(soundtrack ? { soundtrack } : {}),
      tracks: [
        { clips: [{ asset: { type: 'rich-text', text: 'Autumn edit', font: { family: 'Inter', size: 72, weight: 800, color: '#ffffff' }, shadow: { offsetX: 0, offsetY: 4, blur: 12, color: '#000000', opacity: 0.5 } }, start: 0.3, length: SECONDS - 0.3, width: 1000, height: 120, position: 'top', offset: { y: -0.06 }, transition: { in: 'fadeFast' } }] },
        { clips: captions.map((text, i) => ({ asset: { type: 'text', text, width: 700, height: 80, font: { family: 'Open Sans', size: 40, color: '#111111' }, background: { color: '#ffffff', opacity: 0.9, padding: 12, borderRadius: 16 } }, start: i * each + 0.5, length: each - 0.5, position: 'bottom', offset: { y: 0.06 } })) },
        ...[2, 1, 0].map((i) => ({ clips: [{ asset: { type: 'image', src: `${CDN}/photo-${i + 1}.jpg` }, start: i * each, length: each + (i < 2 ? 0.5 : 0), fit: 'cover', ...(i > 0 ? { transition: { in: 'fadeFast' } } : {}) }] })),
      ],
    },
    output: { format: 'mp4', resolution: 'hd', fps: FPS },
  });
  return { footage: { edit: footage, composition: 'Footage' }, template: { edit: template, composition: 'Template' } };
}

async function run(args) {
  const SECONDS = args.seconds;
  const CONCURRENCY = args.concurrency ?? availableParallelism();
  let peakRss = 0;
  let peakPss = 0;
  let samplerUs = 0;
  let ticks = 0;
  const sampler = setInterval(() => {
    const c0 = process.cpuUsage();
    const m = treeMemory({ pss: ++ticks % 10 === 0 });
    const c1 = process.cpuUsage(c0);
    samplerUs += c1.user + c1.system;
    peakRss = Math.max(peakRss, m.rss);
    if (m.pss !== undefined) peakPss = Math.max(peakPss, m.pss);
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
  for (const i of [1, 2, 3]) files.set(`${CDN}/photo-${i}.jpg`, await photo(i));
  log(`inputs made in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const all = scenes(CDN, SECONDS, args.silent);
  const chosen = args.scene === 'both' ? ['footage', 'template'] : [args.scene];

  // --- the engine -----------------------------------------------------------------------------------
  const work = tempDir('bench-video');
  t = performance.now();
  const engineOptions = { fetch: mapFetcher(files), concurrency: CONCURRENCY, ...(args.parallelism ? { parallelism: args.parallelism } : {}), ...(args.browser ? { browserExecutable: args.browser } : {}), x264Preset: args.preset, jpegQuality: args.jpeg, workDir: join(tmpdir(), 'video-engine'), ...(args['frame-by-frame'] ? { staticSpans: false } : {}), ...(args['no-compose'] ? { composeVideo: false } : {}) };
  const engine = await VideoEngine.start(engineOptions);
  onCleanup(() => engine.close());
  const startMs = performance.now() - t;
  log(`engine started in ${(startMs / 1000).toFixed(1)} s (bundle + browser)${args['frame-by-frame'] ? ', every frame drawn (--frame-by-frame)' : args['no-compose'] ? ', no video composed (--no-compose)' : ''}`);

  const results = {};
  for (const name of chosen) {
    const renders = [];
    let lastFile;
    for (let i = 0; i < args.runs; i++) {
      treeMemory();
      const cpuBefore = cpuSeconds();
      const out = await engine.render(all[name].edit, { outputDir: work });
      treeMemory();
      const cpu = cpuSeconds() - cpuBefore;
      lastFile = out.file;
      const probed = await probeStreams(out.file);
      renders.push({ ms: out.renderMs, cpu, bytes: out.fileSizeBytes, frames: probed.frames, drawnFrames: out.drawnFrames, duration: probed.duration });
      log(`${name} render ${i + 1}: ${(out.renderMs / 1000).toFixed(2)} s (${cpu.toFixed(1)} CPU-s), ${(out.fileSizeBytes / 1e6).toFixed(2)} MB, ${probed.frames} frames (${out.drawnFrames ?? probed.frames} pictures drawn by the browser), ${probed.codec} ${probed.width}×${probed.height} + ${probed.audio}`);
    }
    results[name] = { renders, lastFile };
  }
  await engine.close();
  // The engine's peak; the sampler keeps running through the peer's renders for their CPU seconds only.
  const enginePeakRss = peakRss;
  const enginePeakPss = peakPss;
  const engineSamplerCpu = samplerUs / 1e6;

  // --- the peer: the same scenes in plain Remotion, renderMedia with its defaults -------------------
  const peer = {};
  if (args['peer-runs'] > 0) {
    t = performance.now();
    const publicDir = join(work, 'peer-public');
    mkdirSync(publicDir, { recursive: true });
    for (const [url, bytes] of files) writeFileSync(join(publicDir, url.slice(CDN.length + 1)), bytes);
    const here = dirname(fileURLToPath(import.meta.url));
    const serveUrl = await bundle({ entryPoint: join(here, 'remotion-peer/index.tsx'), rspack: true, outDir: join(work, 'peer-bundle'), publicDir, enableCaching: false });
    log(`peer bundled in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const browserExecutable = findChromium();
    for (const name of chosen) {
      const inputProps = { seconds: SECONDS };
      const composition = await selectComposition({ serveUrl, id: all[name].composition, inputProps, browserExecutable, logLevel: 'error', onBrowserDownload: noDownload });
      const times = [];
      for (let i = 0; i < args['peer-runs']; i++) {
        treeMemory();
        const cpuBefore = cpuSeconds();
        const started = performance.now();
        const output = join(work, `peer-${name}-${i}.mp4`);
        await renderMedia({ serveUrl, composition, inputProps, codec: 'h264', outputLocation: output, browserExecutable, x264Preset: args.preset, crf: CRF.h264.high, logLevel: 'error', onBrowserDownload: noDownload });
        const ms = performance.now() - started;
        treeMemory();
        times.push({ ms, cpu: cpuSeconds() - cpuBefore });
        const probed = await probeStreams(output);
        log(`${name} peer ${i + 1}: ${(ms / 1000).toFixed(2)} s (${(cpuSeconds() - cpuBefore).toFixed(1)} CPU-s), ${probed.frames} frames (plain Remotion renderMedia, ${browserExecutable})`);
      }
      peer[name] = times;
    }
  }

  clearInterval(sampler);

  // --- the floor: the shipped ffmpeg alone encoding the same frames ---------------------------------
  // The engine's own output decoded and encoded again with the same x264 preset and CRF: what
  // encoding these 300 frames costs on this machine with no browser at all (h264 decoding included,
  // which is cheaper than the JPEG decoding of the engine's frame pipe). The best of as many runs as
  // the engine's renders (at least two), as the engine's figure is its best: one run of a few seconds
  // moved by ±20 % on this shared machine.
  const scenesOut = {};
  for (const name of chosen) {
    const floorRuns = [];
    for (let i = 0; i < Math.max(2, args.runs); i++) {
      t = performance.now();
      await runBinary('ffmpeg', ['-v', 'error', '-y', '-i', results[name].lastFile, '-an', '-c:v', 'libx264', '-preset', args.preset, '-crf', String(CRF.h264.high), '-pix_fmt', 'yuv420p', join(work, `floor-${name}.mp4`)], { timeoutMs: 600_000 });
      floorRuns.push(performance.now() - t);
    }
    const floorMs = Math.min(...floorRuns);
    const renders = results[name].renders;
    const best = Math.min(...renders.map((r) => r.ms));
    const median = quantile(renders.map((r) => r.ms), 0.5);
    const peerBest = peer[name] ? Math.min(...peer[name].map((r) => r.ms)) : undefined;
    scenesOut[name] = {
      renderMs: renders.map((r) => Math.round(r.ms)),
      cpuSeconds: renders.map((r) => Math.round(r.cpu * 10) / 10),
      frames: renders.map((r) => r.frames),
      // On an idle machine of this many cores, a render that keeps them all busy takes about this long.
      idleEstimateRatio: Math.min(...renders.map((r) => r.cpu)) / availableParallelism() / SECONDS,
      realtimeRatio: best / 1000 / SECONDS,
      medianRealtimeRatio: median / 1000 / SECONDS,
      fps: (SECONDS * FPS) / (best / 1000),
      floorMs: Math.round(floorMs),
      floorRunsMs: floorRuns.map((ms) => Math.round(ms)),
      floorRatio: best / floorMs,
      ...(peerBest !== undefined ? { peerMs: peer[name].map((r) => Math.round(r.ms)), peerCpuSeconds: peer[name].map((r) => Math.round(r.cpu * 10) / 10), peerRatio: best / peerBest } : {}),
    };
  }
  return {
    mediaSeconds: SECONDS,
    frames: SECONDS * FPS,
    concurrency: CONCURRENCY,
    x264Preset: args.preset,
    parallelism: args.parallelism ?? availableParallelism(),
    staticSpans: !args['frame-by-frame'],
    composeVideo: !args['frame-by-frame'] && !args['no-compose'],
    browser: engine.browserExecutable,
    startMs: Math.round(startMs),
    scenes: scenesOut,
    peakRssMB: Math.round(enginePeakRss / 1024 / 1024),
    peakPssMB: Math.round(enginePeakPss / 1024 / 1024),
    samplerCpuSeconds: Number(engineSamplerCpu.toFixed(2)),
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    targets: { floorRatio: 5, peerRatio: 1, peakRssMB: 1536 },
  };
}

function noDownload() {
  throw new Error('the bench never downloads a browser: install Debian\'s chromium-headless-shell');
}

// The engine runs in this process as it does in a worker: with the worker's Node options.
if (!rerunWithNodeFlags(WORKER_NODE_FLAGS, startedWithWorkerFlags())) await runBench({
  name: 'video-render',
  flags: {
    runs: { arg: 'N', default: 2, parse: integer(1), help: 'renders of each scene by the engine; the figure is the best (default 2)' },
    scene: { arg: 'S', default: 'both', parse: oneOf('both', 'footage', 'template'), help: 'footage (background video), template (photos and titles holding), or both (default)' },
    'peer-runs': { arg: 'N', default: 1, parse: integer(0), help: 'renders of each scene by plain Remotion (the peer); 0 skips it (default 1)' },
    silent: { help: 'scenes without their soundtrack (the engine then renders no sound; the peer keeps its own)' },
    'frame-by-frame': { help: 'the engine draws every frame (staticSpans: false), as before issue 33' },
    'no-compose': { help: 'the page plays every played frame (composeVideo: false): no video composed outside the browser' },
    concurrency: { arg: 'N', parse: integer(1), help: "the engine's concurrency, browser tabs (default: this machine's available parallelism)" },
    parallelism: { arg: 'N', parse: integer(1), help: "parts rendered at once by the engine (default: this machine's available parallelism)" },
    browser: { arg: 'PATH', help: 'the browser executable (default: the engine\'s, Debian\'s chromium-headless-shell)' },
    preset: { arg: 'P', default: 'veryfast', help: 'x264 preset of the engine, the peer and the ffmpeg floor (default veryfast)' },
    seconds: { arg: 'S', default: 10, parse: positive, help: 'media duration of each scene (default 10)' },
    jpeg: { arg: 'Q', default: 80, parse: number(0), help: "JPEG quality of the engine's frames (default 80)" },
  },
  run,
  summary: (r) => {
    for (const [name, s] of Object.entries(r.scenes)) {
      console.log(`${name.padEnd(12)} ${s.renderMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')} for ${r.mediaSeconds} s of ${W}×${H} ${FPS} fps (${s.fps.toFixed(1)} frames/s at best); ${s.cpuSeconds.map((c) => `${c}`).join(', ')} CPU-s (about ${s.idleEstimateRatio.toFixed(2)} x media on ${availableParallelism()} idle cores)`);
      console.log(`${''.padEnd(12)} floor: ffmpeg alone ${(s.floorMs / 1000).toFixed(2)} s (best of ${s.floorRunsMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')}) (libx264 ${r.x264Preset}, crf ${CRF.h264.high}) -> ${s.floorRatio.toFixed(2)} x floor${s.peerMs ? `; peer: plain Remotion renderMedia ${s.peerMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')} (${s.peerCpuSeconds.join(', ')} CPU-s) -> ${s.peerRatio.toFixed(2)} x Remotion's own time` : ''}`);
    }
    console.log(`memory       peak RSS ${r.peakRssMB} MB, peak PSS ${r.peakPssMB} MB (process tree of the engine's renders: Node, Chromium, ffmpeg; sampled at a cost of ${r.samplerCpuSeconds} CPU-s)   load average ${r.loadAverage}`);
  },
  figure: (r) => Object.entries(r.scenes).map(([name, s]) => `${name} ${s.floorRatio.toFixed(2)} x ffmpeg floor (target <= 5)${s.peerRatio !== undefined ? `, ${s.peerRatio.toFixed(2)} x plain Remotion (target <= 1)` : ''}`).join('; ') + `; peak RSS ${r.peakRssMB} MB / PSS ${r.peakPssMB} MB (target <= 1536)`,
});
