#!/usr/bin/env node
/**
 * Font and SVG readers (issue 27): the hand-written ones (libs/media font.ts and svg.ts, the PDF
 * text layer's subsetter libs/still pdf-font.ts) against fontkit and DOMPurify + jsdom, in one run:
 * the time to read a normal font's family (TTF, WOFF, WOFF2) and to subset 60 glyphs, the hostile
 * fonts (a WOFF bomb, overlapping and out-of-range tables, a form-feed family name: refused or not,
 * bytes inflated), the time to sanitise a 60 KB SVG and what of eight hostile SVGs each lets through;
 * each library's time as a ratio to ours. The libraries are not dependencies of the project: they
 * are loaded from the folder given (npm install fontkit dompurify jsdom there first).
 * Runs dist/ (npm run -s build first). Figures: docs/decisions.md "Hostile input (issue 27): fonts".
 *
 *   node bench/font-svg-readers.mjs /path/with/node_modules
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
const W = new URL('../dist/libs', import.meta.url).pathname;
const from = process.argv[2];
if (!from) throw new Error('usage: node bench/font-svg-readers.mjs <folder holding node_modules with fontkit, dompurify, jsdom>');
const lib = createRequire(`${from.replace(/\/$/, '')}/package.json`);
const { readFont } = await import(`${W}/media/src/font.js`);
const { hostileWoff, withFamilyName, woffFromSfnt } = await import('#testing/media');
const { sanitizeSvg } = await import(`${W}/media/src/svg.js`);
const { parseTrueType, subsetTrueType } = await import(`${W}/still/src/pdf-font.js`);
const fontkit = lib('fontkit');

const mib = (n) => (n / 1024 / 1024).toFixed(1);
const time = async (n, fn) => { for (let i = 0; i < Math.min(5, n); i++) await fn(); const t = performance.now(); for (let i = 0; i < n; i++) await fn(); return (performance.now() - t) / n; };
const outcome = async (fn) => { const rss = process.memoryUsage().rss; const t = performance.now(); try { const r = await fn(); return `accepted (${r}) ${(performance.now() - t).toFixed(1)} ms, rss +${mib(process.memoryUsage().rss - rss)} MiB`; } catch (e) { return `refused: ${e.message.slice(0, 90)} ${(performance.now() - t).toFixed(1)} ms`; } };

const LATO = readFileSync('/usr/share/fonts/truetype/lato/Lato-Medium.ttf');
const DEJAVU = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf');
const WOFF2 = readFileSync(new URL('../libs/media/src/fixtures/open-sans-regular.woff2', import.meta.url));
const LATO_WOFF = woffFromSfnt(LATO);

console.log('## fonts: family name of a normal font (ms per read; ratio fontkit / ours)');
for (const [name, file] of [['Lato TTF 600 KB', LATO], ['Lato WOFF', LATO_WOFF], ['Open Sans WOFF2', WOFF2]]) {
  const ours = await time(50, async () => (await readFont(file)).families[0]);
  const kit = await time(50, () => fontkit.create(file).familyName);
  // What the renderer needs is the sfnt FreeType reads: fontkit has no WOFF/WOFF2 → sfnt, so "name" only.
  console.log(`${name}: ours ${ours.toFixed(2)} ms (sfnt included), fontkit ${kit.toFixed(2)} ms (name only); ratio ${(kit / ours).toFixed(2)}`);
}

console.log('\n## fonts: hostile files');
const cases = {
  'WOFF bomb (8 tables × 16 MiB sharing one blob)': hostileWoff.bomb(DEJAVU),
  'WOFF overlapping tables': hostileWoff.overlapping(DEJAVU),
  'WOFF table inside the directory': hostileWoff.intoDirectory(DEJAVU),
  'WOFF table past the end': hostileWoff.pastTheEnd(DEJAVU),
  'WOFF compLength > origLength': hostileWoff.compLongerThanOrig(DEJAVU),
  'TTF with a form-feed family name': withFamilyName(DEJAVU, 'Evil\f} body { background: url(http://127.0.0.1:9/x) }'),
};
for (const [name, file] of Object.entries(cases)) {
  console.log(`${name} (${file.length} B)`);
  console.log(`  ours:    ${await outcome(async () => { const f = await readFont(file); return `${f.families[0]}, sfnt ${f.sfnt.length} B`; })}`);
  console.log(`  fontkit: ${await outcome(() => { const f = fontkit.create(file); return JSON.stringify(f.familyName); })}`);
  // fontkit reading every table it knows (what a subset or layout would touch): the WOFF tables inflate on access.
  if (file.toString('latin1', 0, 4) === 'wOFF') console.log(`  fontkit, every directory table read: ${await outcome(() => { const f = fontkit.create(file); let n = 0; for (const tag of Object.keys(f.directory.tables)) { try { n += f._getTableStream(tag)?.buffer.length ?? 0; } catch { /* unknown */ } } return `${mib(n)} MiB inflated`; })}`);
}

console.log('\n## PDF text layer: subset of 60 glyphs of DejaVu Sans (ms; output size)');
const gids = [...'The quick brown fox jumps over the lazy dog 0123456789 ÄÖÜ'].map((c) => c.codePointAt(0));
const tt = parseTrueType('DejaVuSans.ttf', DEJAVU);
const ourGlyphs = gids.map((cp) => tt.cmap(cp));
const ours = await time(30, () => subsetTrueType(tt, ourGlyphs));
const kitFont = fontkit.create(DEJAVU);
const kit = await time(30, () => { const s = kitFont.createSubset(); for (const cp of gids) s.includeGlyph(kitFont.glyphForCodePoint(cp)); return s.encode(); });
const kitSize = (() => { const s = kitFont.createSubset(); for (const cp of gids) s.includeGlyph(kitFont.glyphForCodePoint(cp)); return s.encode().length; })();
console.log(`ours ${ours.toFixed(2)} ms → ${subsetTrueType(tt, ourGlyphs).length} B (keep-GID: empty glyphs stay); fontkit ${kit.toFixed(2)} ms → ${kitSize} B (renumbered: would need a CIDToGIDMap rewrite); ratio ${(kit / ours).toFixed(2)}`);

console.log('\n## SVG: sanitise');
let rss = process.memoryUsage().rss;
let t = performance.now();
const { JSDOM } = lib('jsdom');
const createDOMPurify = lib('dompurify');
const window = new JSDOM('').window;
const DOMPurify = createDOMPurify(window);
console.log(`jsdom + DOMPurify start: ${(performance.now() - t).toFixed(0)} ms, rss +${mib(process.memoryUsage().rss - rss)} MiB`);
const shapes = Array.from({ length: 600 }, (_, i) => `<path d="M${i} ${i}L${i + 40} ${i * 2}C10 20 30 40 ${i} 7Z" fill="url(#g)" stroke="#${(i * 999).toString(16).padStart(6, '0').slice(0, 6)}" transform="rotate(${i % 360})"/>`).join('');
const normal = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600"><defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient><filter id="f"><feGaussianBlur stdDeviation="2"/></filter></defs><g filter="url(#f)">${shapes}</g><text x="10" y="30" font-family="Inter">Hello &amp; welcome</text></svg>`;
const purify = (s) => DOMPurify.sanitize(s, { USE_PROFILES: { svg: true, svgFilters: true } });
const o = await time(50, () => sanitizeSvg(normal));
const d = await time(50, () => purify(normal));
console.log(`normal SVG ${(normal.length / 1024).toFixed(0)} KB: ours ${o.toFixed(2)} ms, DOMPurify ${d.toFixed(2)} ms; ratio ${(d / o).toFixed(2)}`);
const hostile = {
  script: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect width="1" height="1" onload="alert(2)"/></svg>',
  'external image': '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image href="http://127.0.0.1:9/a.png" width="9" height="9"/><image xlink:href="http://127.0.0.1:9/b.png"/></svg>',
  'use of another file': '<svg xmlns="http://www.w3.org/2000/svg"><use href="http://127.0.0.1:9/x.svg#a"/></svg>',
  '<style> @import': '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(http://127.0.0.1:9/c.css); rect { fill: url(http://127.0.0.1:9/d.png) }</style><rect width="9" height="9"/></svg>',
  'style attribute url()': '<svg xmlns="http://www.w3.org/2000/svg"><rect width="9" height="9" style="fill: url(http://127.0.0.1:9/e.png)"/></svg>',
  'CSS escape spelling url': '<svg xmlns="http://www.w3.org/2000/svg"><style>rect { background: \\75 rl(http://127.0.0.1:9/f.png) }</style><rect width="9" height="9"/></svg>',
  'animate href': '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image width="9" height="9"><set attributeName="href" to="http://127.0.0.1:9/g.png"/></image></svg>',
  foreignObject: '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject width="9" height="9"><img xmlns="http://www.w3.org/1999/xhtml" src="http://127.0.0.1:9/h.png"/></foreignObject></svg>',
};
for (const [name, svg] of Object.entries(hostile)) {
  const show = (fn) => { try { const out = fn(); return /127\.0\.0\.1|script|onload|alert/.test(out) ? `LETS THROUGH: ${out.slice(0, 110)}` : 'clean'; } catch (e) { return `refused: ${e.message.slice(0, 60)}`; } };
  console.log(`${name}: ours ${show(() => sanitizeSvg(svg))}; DOMPurify ${show(() => purify(svg))}`);
}
console.log(`\nrss at the end ${mib(process.memoryUsage().rss)} MiB`);
