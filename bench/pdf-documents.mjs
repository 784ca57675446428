#!/usr/bin/env node
// PDF documents benchmark (issue 21): an A4 invoice (1240×1754 design px at 150 dpi, a logo picture, an
// html clip with a heading, an address, a 12-row table, a total and a payment link) rendered to PDF by
// the worker's engines: before, the whole frame drawn by the browser as one picture (StillEngine with
// only `browserStill`); after, the still engine's picture with the html printed as vector text over it
// (`printHtml`). Prints size and median time of each at device scale 1 and 2, and a stills-only PDF
// (text clip + logo: no browser) for the still engine's own cost. Runs dist/ (npm run -s build first).
// Usage: node bench/pdf-documents.mjs [--renders 5] [--json]
import sharp from 'sharp';
import { assertEdit } from '../dist/libs/edit-spec/src/index.js';
import { FontCatalog, StillEngine } from '../dist/libs/still/src/index.js';
import { VideoEngine } from '../dist/libs/video/src/index.js';
import { mapFetcher } from '#testing/video';
import { integer, log, onCleanup, quantile, runBench } from './lib/harness.mjs';

const LOGO = 'https://cdn.example.com/logo.png';
const ROWS = Array.from({ length: 12 }, (_, i) => `<tr><td>Item ${i + 1} — consulting hours</td><td>${i + 2}</td><td>${(95 + i).toFixed(2)} EUR</td></tr>`).join('');
const INVOICE = assertEdit({
  timeline: {
    background: '#ffffff',
    tracks: [
      { clips: [{ asset: { type: 'html', html: `<h1>Invoice INV-2026-0042</h1><p>Billed to: Müller &amp; Søn GmbH, Hauptstraße 5, Berlin</p><table>${ROWS}</table><p><b>Total due: 1,234.56 EUR</b></p><a href="https://pay.example.com/42">Pay online</a>`, css: 'body{font-family:"Open Sans"} h1{font-size:56px} td,p,a{font-size:26px;padding:6px 18px} table{border-collapse:collapse} td{border-bottom:1px solid #ccc}', width: 1100, height: 1300, position: 'topLeft' }, start: 0, length: 1, position: 'bottom' }] },
      { clips: [{ asset: { type: 'image', src: LOGO }, start: 0, length: 1, position: 'topLeft', offset: { x: 0.05, y: -0.03 }, fit: 'none' }] },
    ],
  },
  output: { format: 'pdf', size: { width: 1240, height: 1754 } },
});
const STILLS_ONLY = assertEdit({
  timeline: {
    background: '#ffffff',
    tracks: [
      { clips: [{ asset: { type: 'text', text: 'Invoice INV-2026-0042\nTotal due: 1,234.56 EUR', font: { family: 'Open Sans', size: 40, color: '#000000' } }, start: 0, length: 1 }] },
      { clips: [{ asset: { type: 'image', src: LOGO }, start: 0, length: 1, position: 'topLeft', fit: 'none' }] },
    ],
  },
  output: { format: 'pdf', size: { width: 1240, height: 1754 } },
});

async function run(args) {
  const files = new Map([[LOGO, await sharp({ create: { width: 300, height: 120, channels: 3, background: '#1d3557' } }).png().toBuffer()]]);
  const fetch = mapFetcher(files);
  log('starting the video engine (bundle, Chromium)…');
  const video = await VideoEngine.start({ fetch });
  onCleanup(() => video.close());
  const fonts = await FontCatalog.system();
  const browserStill = (edit, opts) => video.renderHtmlStill(edit, opts);
  const before = new StillEngine({ fonts, fetch, browserStill });
  const after = new StillEngine({ fonts, fetch, browserStill, printHtml: (edit, opts) => video.printHtmlClips(edit, opts) });
  const measure = async (engine, edit, scale) => {
    const out = await engine.render(edit, { scale }); // warm-up
    const ms = [];
    for (let i = 0; i < args.renders; i++) {
      const t = performance.now();
      await engine.render(edit, { scale });
      ms.push(performance.now() - t);
    }
    return { bytes: out.bytes.length, p50: quantile(ms, 0.5) };
  };
  const result = {};
  for (const scale of [1, 2]) {
    result[`before${scale}`] = await measure(before, INVOICE, scale);
    result[`after${scale}`] = await measure(after, INVOICE, scale);
  }
  result.stillsOnly = await measure(after, STILLS_ONLY, 1);
  await video.close();
  return result;
}

const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const ms = (n) => `${n.toFixed(0)} ms`;

await runBench({
  name: 'pdf-documents',
  flags: { renders: { arg: 'N', default: 5, parse: integer(1), help: 'timed renders of each case after a warm-up (default 5)' } },
  run,
  summary: (r) => {
    for (const scale of [1, 2]) {
      console.log(`scale ${scale}: before (browser picture) ${kb(r[`before${scale}`].bytes)} ${ms(r[`before${scale}`].p50)}; after (printed html) ${kb(r[`after${scale}`].bytes)} ${ms(r[`after${scale}`].p50)}`);
    }
    console.log(`stills-only PDF (no browser): ${kb(r.stillsOnly.bytes)} ${ms(r.stillsOnly.p50)}`);
  },
  figure: (r) => `invoice PDF ${kb(r.after1.bytes)} in ${ms(r.after1.p50)} against ${kb(r.before1.bytes)} in ${ms(r.before1.p50)} drawn whole by the browser`,
});
