import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber } from 'pdf-lib';
import sharp from 'sharp';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { FontCatalog, StillEngine } from '#libs/still';
import { compareImages } from '#testing/still';
import { makeTestVideo, mapFetcher } from '#testing/video';
import { VideoEngine } from './engine.js';

/**
 * PDFs as documents of layers (issue 32, "Documents with pictures keep their text"): invoices,
 * certificates and tickets whose logos, backgrounds and stamps lie above and below their html and
 * text clips. Every word is read back with poppler's `pdftotext -bbox` at the place it is drawn, and
 * `pdfimages -list` shows each picture as an image object of its own pixels, not a page-sized raster.
 */
const run = promisify(execFile);
const CDN = 'https://cdn.example.com';
const files = new Map<string, Buffer>();
let video: VideoEngine;
let stills: StillEngine;
let dir: string;
let printed = 0;
/** The clips each browser-drawn picture held (renderHtmlStill's `clips`; undefined: the whole frame). */
const browserDrew: (readonly string[] | undefined)[] = [];

interface Word { text: string; xMin: number; yMin: number; xMax: number; yMax: number }
interface ImageRow { width: number; height: number; type: string; enc: string; xppi: number }

async function pdfFile(pdf: Buffer): Promise<string> {
  const file = join(dir, `doc-${Math.random().toString(36).slice(2)}.pdf`);
  await writeFile(file, pdf);
  return file;
}

/** Every word of the page with its box (points, y down from the page's top), from `pdftotext -bbox`. */
async function words(pdf: Buffer): Promise<Word[]> {
  const { stdout } = await run('pdftotext', ['-bbox', await pdfFile(pdf), '-']);
  const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  return [...stdout.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)]
    .map((m) => ({ text: unescape(m[5]!), xMin: Number(m[1]), yMin: Number(m[2]), xMax: Number(m[3]), yMax: Number(m[4]) }));
}

/** The page's fonts (`pdffonts`): name (a subset's `ABCDEF+` prefix kept), embedded, subset. */
async function fonts(pdf: Buffer): Promise<{ name: string; emb: boolean; sub: boolean }[]> {
  const { stdout } = await run('pdffonts', [await pdfFile(pdf)]);
  return stdout.split('\n').slice(2).filter(Boolean).map((row) => row.trim().split(/\s+/))
    .map((c) => ({ name: c[0]!, emb: c.at(-5) === 'yes', sub: c.at(-4) === 'yes' }));
}

/** The page's image objects (`pdfimages -list`): soft masks left out. */
async function images(pdf: Buffer): Promise<ImageRow[]> {
  const { stdout } = await run('pdfimages', ['-list', await pdfFile(pdf)]);
  return stdout.split('\n').slice(2).filter(Boolean).map((row) => row.trim().split(/\s+/))
    .map((c) => ({ type: c[2]!, width: Number(c[3]), height: Number(c[4]), enc: c[8]!, xppi: Number(c[12]) }))
    .filter((r) => r.type === 'image');
}

/** The page drawn by poppler at `dpi`, as a PNG. */
async function rasterise(pdf: Buffer, dpi: number): Promise<Buffer> {
  const file = await pdfFile(pdf);
  await run('pdftoppm', ['-png', '-singlefile', '-r', String(dpi), file, file]);
  return readFile(`${file}.png`);
}

/**
 * Where a line of words is expected, in design px of the frame (the PDF is at 150 dpi: 0.48 pt a px).
 * `left`: the line starts there (left-aligned html); `centre`: the line is centred on it (a centred
 * text clip). `top`: the top of the line's box (html), or `middle`: its middle (a text clip centred in
 * its box); `size`: its font size.
 */
interface Line { text: string; size: number; top?: number; middle?: number; left?: number; centre?: number }
const PT = 72 / 150;

/**
 * Each word of `line` found once, in order, on one row at the expected place. Tolerances: a word's
 * box from pdftotext spans the face's ascent to descent at the font size, its top below the line's top
 * by the half-leading, so the top is within 0.35 × the font size of the line's top (a centred line's
 * middle within as much of the box's middle: the face's ascent and descent differ); the line's start
 * (html: a glyph origin at the div's left edge, no side bearing counted) within 3 pt (6 design px);
 * a centred clip's line centre within half the font size (its layer is laid out from the face's
 * advance widths, without Pango's kerning).
 */
function expectLine(found: Word[], line: Line): void {
  const wanted = line.text.split(' ');
  const start = found.findIndex((w, i) => wanted.every((text, j) => found[i + j]?.text === text));
  if (start < 0) throw new Error(`"${line.text}" is not on the page; pdftotext read: ${found.map((w) => w.text).join(' ')}`);
  const row = found.slice(start, start + wanted.length);
  const tolerance = 0.35 * line.size * PT;
  for (const w of row) {
    const off = line.top !== undefined ? w.yMin - line.top * PT : (w.yMin + w.yMax) / 2 - line.middle! * PT;
    expect({ word: w.text, placed: Math.abs(off) <= tolerance }).toEqual({ word: w.text, placed: true });
    expect(w.yMax - w.yMin).toBeLessThan(line.size * PT * 1.6);
  }
  // One row, left to right.
  row.slice(1).forEach((w, i) => expect(w.xMin).toBeGreaterThanOrEqual(row[i]!.xMax - 0.5));
  if (line.left !== undefined) expect(Math.abs(row[0]!.xMin - line.left * PT)).toBeLessThanOrEqual(3);
  if (line.centre !== undefined) expect(Math.abs((row[0]!.xMin + row.at(-1)!.xMax) / 2 - line.centre * PT)).toBeLessThanOrEqual((line.size * PT) / 2);
}

/** An html page whose lines are absolutely placed (CSS px = design px), so each word's place is known. */
function placedHtml(lines: Line[], extra = ''): string {
  return lines.map((l) => `<div style="position:absolute;left:${l.left}px;top:${l.top}px;font:${l.size}px/${Math.round(l.size * 1.25)}px 'DejaVu Sans';color:#111;white-space:nowrap">${l.text.replace(/&/g, '&amp;')}</div>`).join('') + extra;
}

const clip = (asset: Record<string, JsonValue>, extra: Record<string, JsonValue> = {}): JsonValue => ({ asset, start: 0, length: 1, ...extra });
const image = (name: string, extra: Record<string, JsonValue> = {}) => clip({ type: 'image', src: `${CDN}/${name}` }, extra);
const doc = (tracks: JsonValue[], output: Record<string, JsonValue>) => assertEdit({
  timeline: { background: '#ffffff', tracks: tracks.map((c) => ({ clips: [c] })) },
  output: { format: 'pdf', ...output },
});

/** A round stamp with a transparent outside and a see-through inside (a PNG with alpha). */
function stampPng(size: number, colour: string, label: string): Promise<Buffer> {
  const r = size / 2;
  return sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}">
    <circle cx="${r}" cy="${r}" r="${r - 12}" fill="${colour}" fill-opacity="0.25" stroke="${colour}" stroke-width="16"/>
    <text x="${r}" y="${r + 20}" text-anchor="middle" font-family="DejaVu Sans" font-weight="bold" font-size="${Math.round(size / 6)}" fill="${colour}">${label}</text>
  </svg>`)).png().toBuffer();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdf-layers-test-'));
  files.set(`${CDN}/paper.jpg`, await sharp({ create: { width: 1240, height: 1754, channels: 3, background: '#f4eedc', noise: { type: 'gaussian', mean: 232, sigma: 5 } } }).jpeg({ quality: 80 }).toBuffer());
  files.set(`${CDN}/logo.png`, await sharp({ create: { width: 600, height: 240, channels: 3, background: '#1d3557', noise: { type: 'gaussian', mean: 70, sigma: 30 } } }).png().toBuffer());
  files.set(`${CDN}/paid.png`, await stampPng(320, '#c00000', 'PAID'));
  files.set(`${CDN}/copy.png`, await stampPng(400, '#2a9d8f', 'COPY'));
  files.set(`${CDN}/seal.png`, await stampPng(240, '#b8860b', 'SEAL'));
  files.set(`${CDN}/marble.png`, await sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="877" height="620">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#f7f1e3"/><stop offset="1" stop-color="#d8cbb0"/></linearGradient></defs>
    <rect width="877" height="620" fill="url(#g)"/></svg>`)).png().toBuffer());
  files.set(`${CDN}/photo.jpg`, await sharp({ create: { width: 400, height: 300, channels: 3, background: '#457b9d', noise: { type: 'gaussian', mean: 110, sigma: 40 } } }).jpeg().toBuffer());
  // Smooth pictures for comparing pixels (noise resampled by two libraries differs pixel by pixel).
  const gradient = (w: number, h: number, from: string, to: string) => sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs>
    <rect width="${w}" height="${h}" fill="url(#g)"/><circle cx="${w / 2}" cy="${h / 2}" r="${Math.min(w, h) / 3}" fill="#ffffff" fill-opacity="0.6"/></svg>`)).flatten();
  files.set(`${CDN}/badge.png`, await gradient(600, 240, '#1d3557', '#a8dadc').png().toBuffer());
  files.set(`${CDN}/sky.jpg`, await gradient(400, 300, '#264653', '#e9c46a').jpeg({ quality: 90 }).toBuffer());
  files.set(`${CDN}/clip.mp4`, await makeTestVideo({ width: 320, height: 240, seconds: 1, fps: 12 }));
  const fetch = mapFetcher(files);
  video = await VideoEngine.start({ fetch });
  stills = new StillEngine({
    fonts: await FontCatalog.system(),
    fetch,
    browserStill: (edit, opts) => {
      browserDrew.push(opts.clips);
      return video.renderHtmlStill(edit, opts);
    },
    printHtml: (edit, opts) => {
      printed++;
      return video.printHtmlClips(edit, opts);
    },
  });
}, 90_000);

afterAll(async () => {
  await video?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('PDF documents of layers (issue 32: "Documents with pictures keep their text")', () => {
  it('an invoice: its html text stays text under a logo and a PAID stamp above it and over a COPY stamp and paper below it; each picture an image object of its own pixels', async () => {
    const lines: Line[] = [
      { text: 'Invoice INV-2026-0042', left: 80, top: 90, size: 56 },
      { text: 'Billed to: Müller & Søn GmbH', left: 80, top: 220, size: 30 },
      { text: 'Widget assembly x 12 — 960.00 EUR', left: 80, top: 300, size: 30 },
      { text: 'Total due: 1,234.56 EUR', left: 80, top: 380, size: 36 },
      { text: 'Pay this invoice online', left: 80, top: 470, size: 30 },
    ];
    const html = placedHtml(lines.slice(0, 4)) + `<a href="https://pay.example.com/inv/42" style="position:absolute;left:80px;top:470px;font:30px/38px 'DejaVu Sans';color:#0033cc">Pay this invoice online</a>`;
    const thanks: Line = { text: 'Thank you for your business', middle: 1500, size: 40, centre: 620 };
    const edit = doc([
      // Top first: the PAID stamp over the total, the logo over the heading's end.
      image('paid.png', { width: 320, height: 320, fit: 'contain', position: 'topLeft', offset: { x: 300 / 1240, y: -300 / 1754 } }),
      image('logo.png', { width: 300, height: 120, fit: 'contain', position: 'topLeft', offset: { x: 700 / 1240, y: -70 / 1754 } }),
      clip({ type: 'html', html, width: 1240, height: 600 }, { width: 1240, height: 600, position: 'topLeft' }),
      clip({ type: 'text', text: thanks.text, font: { family: 'Open Sans', size: 40, color: '#333333' }, width: 1000, height: 100 }, { width: 1000, height: 100, position: 'topLeft', offset: { x: 120 / 1240, y: -1450 / 1754 } }),
      // Below: a COPY stamp under the billing lines and the thank-you line, the paper under everything.
      image('copy.png', { width: 400, height: 400, fit: 'contain', position: 'topLeft', offset: { x: 500 / 1240, y: -150 / 1754 } }),
      image('copy.png', { width: 400, height: 400, fit: 'contain', position: 'topLeft', offset: { x: 420 / 1240, y: -1320 / 1754 } }),
      image('paper.jpg'),
    ], { size: { width: 1240, height: 1754 } });
    const out = await stills.render(edit);
    if (process.env.PDF_DUMP) await writeFile(process.env.PDF_DUMP, out.bytes);

    const found = await words(out.bytes);
    for (const line of [...lines, thanks]) expectLine(found, line);
    const { stdout: urls } = await run('pdfinfo', ['-url', await pdfFile(out.bytes)]);
    expect(urls).toContain('https://pay.example.com/inv/42');

    // The paper is its own JPEG (not decoded and compressed again), 150 ppi on A4; the logo its own
    // 600×240 pixels shown 300 design px wide (300 ppi); each stamp its own pixels. No page-sized raster
    // but the paper, and the thank-you line's picture is the size of its words, not of the page.
    const objects = await images(out.bytes);
    const sized = (w: number, h: number) => objects.filter((o) => o.width === w && o.height === h);
    expect(sized(1240, 1754)).toEqual([expect.objectContaining({ enc: 'jpeg', xppi: 150 })]);
    expect(sized(600, 240)).toEqual([expect.objectContaining({ xppi: 300 })]);
    expect(sized(320, 320)).toHaveLength(1);
    expect(sized(400, 400)).toHaveLength(2);
    expect(objects.filter((o) => o.width * o.height > 1240 * 1754 / 4)).toHaveLength(1);
  }, 30_000);
  it('a certificate (text clips only): every word where it is drawn, under a seal above the name and over a ribbon and a circle below; shapes are vector paths, a blurred photo a picture of its own box; the page looks as the PNG', async () => {
    const text = (t: string, size: number, top: number, colour = '#1b1b3a') => clip(
      { type: 'text', text: t, font: { family: 'Open Sans', size, color: colour }, width: 1400, height: Math.round(size * 2) },
      { width: 1400, height: Math.round(size * 2), position: 'topLeft', offset: { x: 177 / 1754, y: -top / 1240 } },
    );
    const lines: Line[] = [
      { text: 'Certificate of Completion', size: 72, middle: 200 + 72, centre: 877 },
      { text: 'Awarded to Ada Lovelace', size: 56, middle: 480 + 56, centre: 877 },
      { text: 'For outstanding work on analytical engines', size: 36, middle: 700 + 36, centre: 877 },
      { text: 'Issued 28 November 2026', size: 30, middle: 900 + 30, centre: 877 },
    ];
    const edit = doc([
      // Top first: a blurred photo over the date (a filter: a picture of that clip alone), the seal over the name.
      image('photo.jpg', { width: 300, height: 160, fit: 'cover', filter: 'blur', opacity: 0.6, position: 'topLeft', offset: { x: 560 / 1754, y: -860 / 1240 } }),
      image('seal.png', { width: 240, height: 240, fit: 'contain', position: 'topLeft', offset: { x: 980 / 1754, y: -420 / 1240 } }),
      ...lines.map((l) => text(l.text, l.size, l.middle! - l.size)),
      // Below the text: a ribbon under the title and a pale circle under the name.
      clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 1300, height: 170, cornerRadius: 40 }, fill: { color: '#f4d35e', opacity: 0.8 }, stroke: { color: '#8a6d00', width: 6 }, width: 1400, height: 200 }, { width: 1400, height: 200, position: 'topLeft', offset: { x: 177 / 1754, y: -172 / 1240 } }),
      clip({ type: 'shape', shape: 'circle', circle: { radius: 150 }, fill: { color: '#a8dadc', opacity: 1 }, width: 320, height: 320 }, { width: 320, height: 320, position: 'topLeft', offset: { x: 300 / 1754, y: -380 / 1240 } }),
      image('marble.png'),
    ], { size: { width: 1754, height: 1240 } });
    const before = { printed, drew: browserDrew.length };
    const out = await stills.render(edit);
    // No html, video, luma or caption: the browser draws nothing; it prints the text clips, once.
    expect([printed, browserDrew.length]).toEqual([before.printed + 1, before.drew]);
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.cert.pdf`, out.bytes);

    const found = await words(out.bytes);
    for (const line of lines) expectLine(found, line);

    // The background at its own 877×620 pixels (75 ppi, not a 1754×1240 raster), the seal at its own
    // 240×240; the blurred photo a picture of its box (300×160 and the blur's margin), not of the page.
    const objects = await images(out.bytes);
    expect(objects.filter((o) => o.width === 877 && o.height === 620)).toEqual([expect.objectContaining({ xppi: 75 })]);
    expect(objects.filter((o) => o.width === 240 && o.height === 240)).toHaveLength(1);
    expect(objects.filter((o) => o.width * o.height > 1754 * 1240 / 8)).toEqual([expect.objectContaining({ width: 877, height: 620 })]);
    const blurred = objects.filter((o) => o.width >= 300 && o.width <= 340 && o.height >= 160 && o.height <= 200);
    expect(blurred).toHaveLength(1);
    // The shapes are paths: no picture of the 1300×170 ribbon or of the 300×300 circle.
    expect(objects.filter((o) => (o.width >= 1300 && o.height >= 170 && o.height <= 200) || (o.width === 300 && o.height === 300))).toEqual([]);

    // The page, drawn by poppler at the frame's own density, is the PNG of the same edit.
    const png = await stills.render({ ...edit, output: { ...edit.output, format: 'png' } });
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.cert.png`, png.bytes);
    const similarity = await compareImages(await rasterise(out.bytes, 150), png.bytes);
    expect(similarity.sameSize).not.toBe(false);
    // Measured 0.965 with the text clips printed by Chromium (above 0.98 as Pango's pixels): its
    // centred line boxes sit 0.11 em lower than Pango's centred ink (docs/decisions.md "PDF text clips").
    expect(similarity.ssim).toBeGreaterThan(0.95);
  }, 30_000);

  it('text, title and rich-text clips are vector text in their own fonts, embedded as subsets (issue 32: "html AND text clips as vector text with embedded subset fonts"), no picture of them; a filtered one keeps its pixels', async () => {
    const heading: Line = { text: 'Quarterly Report 2026', size: 64, middle: 110, centre: 600 };
    const body: Line = { text: 'Prepared for the board', size: 40, middle: 300, centre: 600 };
    const soft: Line = { text: 'Draft copy', size: 30, middle: 480, centre: 1000 };
    const edit = doc([
      // A filtered clip: the engine's pixels with its words invisible over them (the fallback).
      clip({ type: 'text', text: soft.text, font: { family: 'Open Sans', size: 30, color: '#000000' }, width: 300, height: 80 }, { width: 300, height: 80, position: 'topLeft', offset: { x: 850 / 1200, y: -440 / 560 }, filter: 'greyscale' }),
      clip({ type: 'text', text: heading.text, font: { family: 'Open Sans', size: 64, color: '#1b1b3a' }, width: 1000, height: 140 }, { width: 1000, height: 140, position: 'topLeft', offset: { x: 100 / 1200, y: -40 / 560 } }),
      clip({ type: 'rich-text', text: body.text, font: { family: 'DejaVu Serif', size: 40, color: '#202020' } }, { width: 1000, height: 120, position: 'topLeft', offset: { x: 100 / 1200, y: -240 / 560 } }),
      clip({ type: 'title', text: 'Title Words', style: 'minimal', color: '#203040', size: 'small', position: 'bottomLeft' }, { width: 600, height: 120, position: 'bottomLeft' }),
      clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 1100, height: 500, cornerRadius: 0 }, fill: { color: '#eef3f8' }, width: 1100, height: 500 }, { width: 1100, height: 500, position: 'topLeft', offset: { x: 50 / 1200, y: -30 / 560 } }),
    ], { size: { width: 1200, height: 560 } });
    const out = await stills.render(edit);
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.text.pdf`, out.bytes);
    const found = await words(out.bytes);
    for (const line of [heading, body, soft]) expectLine(found, line);
    expect(found.map((w) => w.text).join(' ')).toContain('Title Words');
    // Each family drawn by the browser, embedded as a subset (ABCDEF+Name).
    const listed = await fonts(out.bytes);
    for (const family of ['OpenSans', 'DejaVuSerif']) {
      expect(listed.filter((f) => f.name.replace(/-/g, '').includes(family))).toEqual(expect.arrayContaining([expect.objectContaining({ emb: true, sub: true, name: expect.stringMatching(/^[A-Z]{6}\+/) })]));
    }
    // One picture on the page: the filtered clip's, the size of its box; none of the vector clips.
    const objects = await images(out.bytes);
    expect(objects).toEqual([expect.objectContaining({ width: expect.any(Number) })]);
    expect(objects[0]!.width).toBeLessThanOrEqual(300 * 2);
    expect(objects[0]!.height).toBeLessThanOrEqual(80 * 2);
    // Drawn, not invisible: with no picture of them, the heading's and body's ink is on the page.
    const { data, info } = await sharp(await rasterise(out.bytes, 150)).removeAlpha().greyscale().raw().toBuffer({ resolveWithObject: true });
    const ink = (top: number, bottom: number) => {
      let dark = 0;
      for (let y = top; y < bottom; y++) for (let x = 100; x < 1100; x++) if (data[y * info.width + x]! < 100) dark++;
      return dark;
    };
    expect(ink(80, 145)).toBeGreaterThan(2000);
    expect(ink(280, 325)).toBeGreaterThan(1000);
    // The page looks as the PNG of the same edit, its words laid out by Chromium (as the video's), not
    // by Pango: each line's ink within 0.15 em of the PNG's (measured: 0.11 em lower, a centred line
    // box against Pango's centred ink), the same width within 2 % (docs/decisions.md "PDF text clips").
    const png = await stills.render({ ...edit, output: { ...edit.output, format: 'png' } });
    const drawn = await sharp(png.bytes).removeAlpha().greyscale().raw().toBuffer();
    const inkBox = (pixels: Buffer, top: number, bottom: number) => {
      const box = { x0: Infinity, x1: -1, y0: Infinity, y1: -1 };
      for (let y = top; y < bottom; y++) for (let x = 100; x < 1100; x++) if (pixels[y * info.width + x]! < 100) Object.assign(box, { x0: Math.min(box.x0, x), x1: Math.max(box.x1, x), y0: Math.min(box.y0, y), y1: Math.max(box.y1, y) });
      return box;
    };
    for (const [line, top, bottom] of [[heading, 40, 180], [body, 250, 350]] as const) {
      const [a, b] = [inkBox(data, top, bottom), inkBox(drawn, top, bottom)];
      expect(Math.abs(a.y0 - b.y0)).toBeLessThanOrEqual(0.15 * line.size);
      expect(Math.abs(a.y1 - b.y1)).toBeLessThanOrEqual(0.15 * line.size);
      expect(Math.abs((a.x1 - a.x0) / (b.x1 - b.x0) - 1)).toBeLessThan(0.02);
    }
    const similarity = await compareImages(await rasterise(out.bytes, 150), png.bytes);
    expect(similarity.sameSize).not.toBe(false);
    // Measured 0.946: the words' edges differ by the 0.11 em above, every other pixel the same.
    expect(similarity.ssim).toBeGreaterThan(0.93);
  }, 30_000);

  it('where the browser does not print text yet (a worker whose engine has not started), text clips stay pixels with their words invisible over them, and the browser is not asked', async () => {
    const engine = new StillEngine({ fonts: await FontCatalog.system(), fetch: mapFetcher(files), printHtml: () => Promise.reject(new Error('no browser here')), printsText: () => false });
    const line: Line = { text: 'Searchable all the same', size: 40, middle: 100, centre: 400 };
    const out = await engine.render(doc([
      clip({ type: 'text', text: line.text, font: { family: 'Open Sans', size: 40, color: '#000000' }, width: 700, height: 100 }, { width: 700, height: 100, position: 'topLeft', offset: { x: 50 / 800, y: -50 / 300 } }),
    ], { size: { width: 800, height: 300 } }));
    expectLine(await words(out.bytes), line);
    expect((await images(out.bytes)).length).toBeGreaterThan(0);
  }, 30_000);

  it('a ticket: html details under an ADMIT stamp and over a photo, a seat line under a translucent band, the link kept; the photo its own JPEG', async () => {
    const lines: Line[] = [
      { text: 'Orbital Jazz Night', left: 40, top: 40, size: 48 },
      { text: 'Sat 12 Dec 2026 · Doors 19:30', left: 40, top: 130, size: 26 },
      { text: 'Hall B — Standing', left: 40, top: 180, size: 26 },
      { text: 'Ticket #A7-00912', left: 40, top: 230, size: 26 },
    ];
    const html = placedHtml(lines) + `<a href="https://tickets.example.com/a7-00912" style="position:absolute;left:40px;top:300px;font:24px/30px 'DejaVu Sans'">Manage booking</a>`;
    const seat: Line = { text: 'Row F Seat 12', size: 40, middle: 400, centre: 900 };
    const edit = doc([
      image('paid.png', { width: 200, height: 200, fit: 'contain', position: 'topLeft', offset: { x: 260 / 1200, y: -60 / 480 } }),
      clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 500, height: 50, cornerRadius: 0 }, fill: { color: '#ffffff', opacity: 0.4 }, width: 500, height: 50 }, { width: 500, height: 50, position: 'topLeft', offset: { x: 650 / 1200, y: -375 / 480 } }),
      clip({ type: 'html', html, width: 700, height: 480 }, { width: 700, height: 480, position: 'topLeft' }),
      clip({ type: 'text', text: seat.text, font: { family: 'Open Sans', size: 40, color: '#ffffff' }, width: 500, height: 100 }, { width: 500, height: 100, position: 'topLeft', offset: { x: 650 / 1200, y: -350 / 480 } }),
      // The photo under the right half of the details and the seat line.
      image('photo.jpg', { width: 600, height: 450, fit: 'cover', position: 'topLeft', offset: { x: 600 / 1200, y: -15 / 480 } }),
    ], { size: { width: 1200, height: 480 } });
    const out = await stills.render(edit);
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.ticket.pdf`, out.bytes);
    const found = await words(out.bytes);
    for (const line of [...lines, seat, { text: 'Manage booking', left: 40, top: 300, size: 24 }]) expectLine(found, line);
    const { stdout: urls } = await run('pdfinfo', ['-url', await pdfFile(out.bytes)]);
    expect(urls).toContain('https://tickets.example.com/a7-00912');
    const objects = await images(out.bytes);
    expect(objects.filter((o) => o.width === 400 && o.height === 300)).toEqual([expect.objectContaining({ enc: 'jpeg' })]);
    expect(objects.filter((o) => o.width === 320 && o.height === 320)).toHaveLength(1);
    expect(objects.filter((o) => o.width * o.height > 1200 * 480 / 4)).toEqual([]);
  }, 30_000);
  it('turned, skewed, flipped and faded clips stay image objects, paths and printed text, placed by the page\'s matrix as the PNG draws them', async () => {
    const edit = doc([
      clip({ type: 'text', text: 'Rotated words here', font: { family: 'Open Sans', size: 40, color: '#202020' }, width: 500, height: 80 }, { width: 500, height: 80, position: 'topLeft', offset: { x: 250 / 800, y: -420 / 600 }, transform: { rotate: { angle: 10 } } }),
      image('badge.png', { width: 300, height: 120, fit: 'contain', position: 'topLeft', offset: { x: 40 / 800, y: -60 / 600 }, opacity: 0.8, transform: { rotate: { angle: 30 } } }),
      image('sky.jpg', { width: 280, height: 210, fit: 'cover', position: 'topLeft', offset: { x: 460 / 800, y: -40 / 600 }, transform: { skew: { x: 15, y: 5 }, flip: { horizontal: true } } }),
      clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 200, height: 120, cornerRadius: 20 }, fill: { color: '#e63946' }, stroke: { color: '#1d3557', width: 8 }, width: 240, height: 160 }, { width: 240, height: 160, position: 'topLeft', offset: { x: 80 / 800, y: -380 / 600 }, opacity: 0.5, transform: { rotate: { angle: 45 }, flip: { vertical: true } } }),
    ], { size: { width: 800, height: 600 }, pdf: { dpi: 72 } });
    const out = await stills.render(edit);
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.turned.pdf`, out.bytes);
    const objects = await images(out.bytes);
    expect(objects.filter((o) => o.width === 600 && o.height === 240)).toHaveLength(1);
    expect(objects.filter((o) => o.width === 400 && o.height === 300)).toEqual([expect.objectContaining({ enc: 'jpeg' })]);
    const { stdout } = await run('pdftotext', ['-raw', await pdfFile(out.bytes), '-']);
    expect(stdout.replace(/\s+/g, ' ')).toContain('Rotated words here');
    const png = await stills.render({ ...edit, output: { ...edit.output, format: 'png' } });
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.turned.png`, png.bytes);
    const similarity = await compareImages(await rasterise(out.bytes, 72), png.bytes);
    expect(similarity.sameSize).not.toBe(false);
    expect(similarity.ssim).toBeGreaterThan(0.98);
  }, 30_000);

  it('a turned and faded html clip is printed too (its words text, faded as one), under a picture above it', async () => {
    const before = printed;
    const edit = doc([
      image('seal.png', { width: 160, height: 160, fit: 'contain', position: 'topLeft', offset: { x: 300 / 800, y: -250 / 600 } }),
      clip(
        { type: 'html', html: '<div style="width:400px;height:200px;background:#000000;color:#ffffff;font:40px/50px \'DejaVu Sans\'">Boarding pass 77<br><a href="https://air.example.com/bp/77" style="color:#ffffff">Check in</a></div>', width: 400, height: 200 },
        { width: 400, height: 200, position: 'topLeft', offset: { x: 200 / 800, y: -200 / 600 }, opacity: 0.5, transform: { rotate: { angle: 90 } } },
      ),
    ], { size: { width: 800, height: 600 }, pdf: { dpi: 72 } });
    const out = await stills.render(edit);
    expect(printed).toBe(before + 1);
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.html-turned.pdf`, out.bytes);
    const { stdout } = await run('pdftotext', ['-raw', await pdfFile(out.bytes), '-']);
    expect(stdout.replace(/\s+/g, ' ')).toContain('Boarding pass 77');
    // The link turned with it: standing (taller than wide) inside the turned box (x 300–500, y 100–500 from the bottom).
    const annots = (await PDFDocument.load(out.bytes)).getPage(0).node.Annots();
    const links = Array.from({ length: annots?.size() ?? 0 }, (_, i) => annots!.lookup(i, PDFDict))
      .filter((a) => a.lookup(PDFName.of('A'), PDFDict).lookup(PDFName.of('URI'))?.toString().includes('air.example.com'));
    expect(links).toHaveLength(1);
    const [x1, y1, x2, y2] = [0, 1, 2, 3].map((i) => links[0]!.lookup(PDFName.of('Rect'), PDFArray).lookup(i, PDFNumber).asNumber()) as [number, number, number, number];
    expect(x1).toBeGreaterThanOrEqual(299);
    expect(x2).toBeLessThanOrEqual(501);
    expect(y1).toBeGreaterThanOrEqual(99);
    expect(y2).toBeLessThanOrEqual(501);
    expect(y2 - y1).toBeGreaterThan(x2 - x1);
    // Turned a quarter about its box's centre (400, 300): the 400×200 box stands 200×400, from x 300 to 500.
    const { data, info } = await sharp(await rasterise(out.bytes, 72)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => data[(y * info.width + x) * 3]!;
    expect(Math.abs(px(320, 120) - 128)).toBeLessThan(8); // black at half opacity over white
    expect(px(250, 300)).toBe(255); // left of the turned box: the page
    expect(px(420, 480)).toBeLessThan(140); // low in the turned box, where the unturned box never was
  }, 30_000);
  it('a video clip over the html is drawn by the browser alone, a picture of its box at its place in the stack; the html words under it stay text', async () => {
    const lines: Line[] = [
      { text: 'Gate 14 boarding 09:40', left: 40, top: 40, size: 40 },
      { text: 'Passenger: Grace Hopper', left: 40, top: 120, size: 30 },
    ];
    const before = { printed, drew: browserDrew.length };
    const edit = doc([
      clip({ type: 'video', src: `${CDN}/clip.mp4` }, { width: 320, height: 240, fit: 'contain', position: 'topLeft', offset: { x: 300 / 800, y: -60 / 600 } }),
      clip({ type: 'html', html: placedHtml(lines), width: 800, height: 300 }, { width: 800, height: 300, position: 'topLeft' }),
      image('paper.jpg'),
    ], { size: { width: 800, height: 600 }, pdf: { dpi: 72 } });
    const out = await stills.render(edit);
    if (process.env.PDF_DUMP) await writeFile(`${process.env.PDF_DUMP}.video.pdf`, out.bytes);
    expect(printed).toBe(before.printed + 1);
    expect(browserDrew.slice(before.drew)).toEqual([['0:0']]);
    const found = await words(out.bytes);
    // At 72 dpi a point is a design px.
    for (const line of lines) expectLine(found, { ...line, top: line.top! * (150 / 72), size: line.size * (150 / 72), left: line.left! * (150 / 72) });
    const objects = await images(out.bytes);
    // The paper: the part the 4:3 frame shows (cover), at the paper's own 1240 px across; the video's
    // picture: its 320×240 box (the transparent rest of the frame left out), not the page.
    expect(objects.map((o) => [o.width, o.height])).toEqual([[1240, 931], [320, 240]]);
  }, 30_000);
});
