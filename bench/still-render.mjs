#!/usr/bin/env node
// Still engine benchmark (issue 4): a 1080×1080 PNG with a background, a photo (cover-fit), two text
// blocks and a shape. Prints the engine's median and p95 render time, a bare sharp composite of the
// same pre-made layers measured in the same run, their ratio, and stills per second sustained at a
// given concurrency. Runs dist/ (npm run -s build first). Usage:
//   node bench/still-render.mjs [--renders 60] [--seconds 10] [--concurrency <the worker's STILL_CONCURRENCY default, 4>] [--json]
import { availableParallelism } from 'node:os';
import sharp from 'sharp';
import { DEFAULT_STILL_CONCURRENCY } from '../dist/libs/core/src/index.js';
import { assertEdit } from '../dist/libs/edit-spec/src/index.js';
import { sniff } from '../dist/libs/media/src/index.js';
import { FontCatalog, StillEngine } from '../dist/libs/still/src/index.js';
import { encodeFramePng } from '../dist/libs/still/src/png.js';
import { integer, positive, quantile, runBench } from './lib/harness.mjs';

const PHOTO_URL = 'https://cdn.example.com/photo.jpg';

// A photo-like 2400×1600 JPEG: smooth structure (blurred coarse noise, a gradient) plus sensor-like
// grain (σ 4), JPEG q85 — it decodes and compresses like a real photograph, unlike flat art or white noise.
async function makePhoto() {
  const coarse = await sharp({ create: { width: 240, height: 160, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } })
    .blur(3).resize(2400, 1600, { kernel: 'cubic' }).raw().toBuffer();
  const grain = await sharp({ create: { width: 2400, height: 1600, channels: 3, background: '#000000', noise: { type: 'gaussian', mean: 0, sigma: 4 } } }).png().toBuffer();
  return sharp(coarse, { raw: { width: 2400, height: 1600, channels: 3 } })
    .composite([{ input: grain, blend: 'add' }])
    .jpeg({ quality: 85 })
    .toBuffer();
}

function editFor(headline, body) {
  return assertEdit({
    timeline: {
      background: '#101820',
      tracks: [
        { clips: [{ asset: { type: 'rich-text', text: headline, font: { family: 'Inter', size: 84, weight: 800, color: '#ffffff' }, shadow: { offsetX: 0, offsetY: 4, blur: 12, color: '#000000', opacity: 0.5 }, align: { horizontal: 'left', vertical: 'top' } }, start: 0, length: 5, width: 920, height: 260, position: 'topLeft', offset: { x: 0.07, y: -0.07 } }] },
        { clips: [{ asset: { type: 'text', text: body, width: 920, height: 180, font: { family: 'Open Sans', size: 40, color: '#111111' }, alignment: { horizontal: 'left', vertical: 'center' }, background: { color: '#ffffff', opacity: 0.9, padding: 28, borderRadius: 24 } }, start: 0, length: 5, position: 'bottom', offset: { y: 0.07 } }] },
        { clips: [{ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 240, height: 64, cornerRadius: 32 }, fill: { color: '#e63946' } }, start: 0, length: 5, width: 240, height: 64, position: 'right', offset: { x: -0.07 } }] },
        { clips: [{ asset: { type: 'image', src: PHOTO_URL }, start: 0, length: 5, fit: 'cover' }] },
      ],
    },
    output: { format: 'png', size: { width: 1080, height: 1080 } },
  });
}

async function run(args) {
  const RENDERS = args.renders;
  const SECONDS = args.seconds;
  const CONCURRENCY = args.concurrency;
  sharp.concurrency(Math.min(2, availableParallelism()));
  const photo = await makePhoto();
  const engine = new StillEngine({
    fonts: await FontCatalog.system(),
    fetch: async (url) => ({ url, bytes: photo, ...sniff(photo) }),
  });

  // Warm-up: fontconfig, Pango and libvips caches, the photo layer.
  for (let i = 0; i < 5; i++) await engine.render(editFor(`Warm up ${i}`, `Body ${i}`));

  // 1. The engine: every render has new text (as a template rendered with new values), so both text
  //    blocks are laid out each time; the photo and the shape come from the layer cache.
  const engineMs = [];
  const phases = { inputs: [], draw: [], encode: [] };
  for (let i = 0; i < RENDERS; i++) {
    const edit = editFor(`Summer sale ${i}`, `Only this weekend: ${i} % off everything in store, online and in shops.`);
    const t = performance.now();
    const out = await engine.render(edit);
    engineMs.push(performance.now() - t);
    for (const k of Object.keys(phases)) phases[k].push(out.timings[k]);
  }

  // 2. The bare composite: the same layers, pre-made (photo resized, texts and shape as PNGs), composited
  //    by sharp onto the photo and written by sharp's PNG writer at fast settings (level 2, no adaptive
  //    filtering), as a plain sharp program would. No layout, no parsing. A second baseline composites
  //    the same way but encodes with the engine's own PNG writer, so the engine's overhead (layout,
  //    caching, its compositing) is also seen apart from the encoder choice.
  const lastEdit = editFor('Summer sale bare', 'Only this weekend: bare % off everything in store, online and in shops.');
  const premade = {
    photo: await sharp(photo).resize(1080, 1080, { fit: 'fill' }).raw().toBuffer(),
    headline: await sharp({ text: { text: '<span foreground="#ffffff" font_family="Inter" font_weight="800" font_size="86016">Summer sale bare</span>', rgba: true, dpi: 72, width: 920 } }).png().toBuffer(),
    body: await sharp({ text: { text: '<span foreground="#111111" font_family="Open Sans" font_size="40960">Only this weekend: bare % off everything in store, online and in shops.</span>', rgba: true, dpi: 72, width: 864 } }).png().toBuffer(),
    shape: await sharp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="240" height="64"><rect width="240" height="64" rx="32" fill="#e63946"/></svg>')).png().toBuffer(),
    box: await sharp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="920" height="180"><rect width="920" height="180" rx="24" fill="#ffffff" fill-opacity="0.9"/></svg>')).png().toBuffer(),
  };
  const bareMs = [];
  const bareSameMs = [];
  const composite = () => sharp(premade.photo, { raw: { width: 1080, height: 1080, channels: 3 } })
    .composite([
      { input: premade.shape, left: 764, top: 508 },
      { input: premade.box, left: 80, top: 824 },
      { input: premade.body, left: 108, top: 870 },
      { input: premade.headline, left: 76, top: 76 },
    ]);
  for (let i = 0; i < RENDERS; i++) {
    let t = performance.now();
    await composite().png({ compressionLevel: 2, adaptiveFiltering: false }).toBuffer();
    bareMs.push(performance.now() - t);
    t = performance.now();
    await encodeFramePng(await composite().ensureAlpha().raw().toBuffer(), 1080, 1080);
    bareSameMs.push(performance.now() - t);
  }
  await engine.render(lastEdit);

  // 3. Throughput: CONCURRENCY renders in flight for SECONDS, each with new text.
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, lane) => {
    for (let i = 0; performance.now() < until; i++) {
      await engine.render(editFor(`Lane ${lane} #${i}`, `Throughput ${i} of lane ${lane}: new words each time.`));
      done++;
    }
  }));
  const perSecond = done / SECONDS;

  return {
    engine: { p50: quantile(engineMs, 0.5), p95: quantile(engineMs, 0.95) },
    phases: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, quantile(v, 0.5)])),
    bare: { p50: quantile(bareMs, 0.5), p95: quantile(bareMs, 0.95) },
    bareSameEncoder: { p50: quantile(bareSameMs, 0.5), p95: quantile(bareSameMs, 0.95) },
    ratio: quantile(engineMs, 0.5) / quantile(bareMs, 0.5),
    ratioSameEncoder: quantile(engineMs, 0.5) / quantile(bareSameMs, 0.5),
    stillsPerSecond: perSecond,
    concurrency: CONCURRENCY,
    targets: { p50Ms: 40, ratio: 1.3, stillsPerSecond: 25 },
  };
}

const f = (n) => n.toFixed(1);

await runBench({
  name: 'still-render',
  flags: {
    renders: { arg: 'N', default: 60, parse: integer(1), help: 'renders timed one after the other, engine and bare sharp each (default 60)' },
    seconds: { arg: 'S', default: 10, parse: positive, help: 'seconds of the throughput run (default 10)' },
    concurrency: { arg: 'C', default: DEFAULT_STILL_CONCURRENCY, parse: integer(1), help: `renders in flight in the throughput run (default: the worker's STILL_CONCURRENCY default, ${DEFAULT_STILL_CONCURRENCY})` },
  },
  run,
  summary: (result) => {
    console.log(`engine       p50 ${f(result.engine.p50)} ms  p95 ${f(result.engine.p95)} ms  (inputs ${f(result.phases.inputs)}, draw ${f(result.phases.draw)}, encode ${f(result.phases.encode)})`);
    console.log(`bare sharp   p50 ${f(result.bare.p50)} ms  p95 ${f(result.bare.p95)} ms`);
    console.log(`bare sharp + engine's PNG writer  p50 ${f(result.bareSameEncoder.p50)} ms  p95 ${f(result.bareSameEncoder.p95)} ms  (engine ${result.ratioSameEncoder.toFixed(2)} x)`);
    console.log(`throughput   ${f(result.stillsPerSecond)} stills/s at concurrency ${result.concurrency}`);
  },
  figure: (result) => `p50 ${f(result.engine.p50)} ms (target <= 40), ratio ${result.ratio.toFixed(2)} x bare sharp (target <= 1.3), ${f(result.stillsPerSecond)} stills/s (target >= 25)`,
});
