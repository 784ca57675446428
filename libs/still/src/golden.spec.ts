import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { sniff } from '#libs/media';
import { FontCatalog } from './fonts.js';
import { StillEngine } from './engine.js';
import { compareImages } from '#testing/still';

/**
 * Golden images (issue 4, "Proof"): each small edit below is rendered and compared with the committed
 * reference in test/golden/still/ by SSIM ≥ 0.985 and a mean absolute difference ≤ 2 (of 255).
 * `UPDATE_GOLDEN=1 npm run -s test:jest -- --selectProjects unit --testPathPatterns golden` rewrites
 * the references; a person looks at every changed file (test/golden/still/sheet.png) before committing.
 */
const DIR = join(process.cwd(), 'test/golden/still');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const SSIM_MIN = 0.985;
const DIFF_MAX = 2;

const files = new Map<string, Buffer>();
const CDN = 'https://cdn.example.com';
let engine: StillEngine;

/** A photo-like test card: four quadrants, a diagonal and a marker in the top-left (orientation). */
async function testCard(width: number, height: number, alpha = false): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="50%" height="50%" fill="#e63946"/><rect x="50%" width="50%" height="50%" fill="#2a9d8f"/>
    <rect y="50%" width="50%" height="50%" fill="#e9c46a"/><rect x="50%" y="50%" width="50%" height="50%" fill="#264653"/>
    <line x1="0" y1="0" x2="${width}" y2="${height}" stroke="#ffffff" stroke-width="${Math.max(2, width / 60)}"/>
    <circle cx="${width * 0.15}" cy="${height * 0.2}" r="${Math.min(width, height) * 0.08}" fill="#ffffff"/>
  </svg>`;
  const image = sharp(Buffer.from(svg));
  return alpha ? image.png().toBuffer() : image.jpeg({ quality: 92 }).toBuffer();
}

function edit(tracks: JsonValue[], output: Record<string, JsonValue> = {}, timeline: Record<string, JsonValue> = {}): JsonValue {
  return {
    timeline: { background: '#203040', ...timeline, tracks: tracks.map((clips) => ({ clips: Array.isArray(clips) ? clips : [clips] })) },
    output: { format: 'png', size: { width: 240, height: 160 }, ...output },
  };
}

const clip = (asset: Record<string, JsonValue>, extra: Record<string, JsonValue> = {}): JsonValue => ({ asset, start: 0, length: 3, ...extra });
const image = (extra: Record<string, JsonValue> = {}, src = `${CDN}/card.jpg`) => clip({ type: 'image', src }, extra);
const text = (t: string, extra: Record<string, JsonValue> = {}, asset: Record<string, JsonValue> = {}) =>
  clip({ type: 'text', text: t, width: 220, height: 140, font: { family: 'Open Sans', size: 22, color: '#ffffff' }, ...asset }, extra);
const rich = (asset: Record<string, JsonValue>, extra: Record<string, JsonValue> = {}) =>
  clip({ type: 'rich-text', text: 'Rich text', font: { family: 'Roboto', size: 30, weight: 700, color: '#ffffff' }, ...asset }, { width: 220, height: 140, ...extra });

const CASES: Record<string, { edit: JsonValue; scale?: number; watermark?: boolean }> = {
  // fit (§ clip.fit) against a 240×160 frame with a 400×200 card
  'fit-crop': { edit: edit([image({ fit: 'crop' })]) },
  'fit-cover': { edit: edit([image({ fit: 'cover' })]) },
  'fit-contain': { edit: edit([image({ fit: 'contain' })]) },
  'fit-none': { edit: edit([image({ fit: 'none' })]) },
  'fit-box-contain': { edit: edit([image({ fit: 'contain', width: 120, height: 120 })]) },
  // placement: scale, position, offset, asset crop
  'position-topRight-scaled': { edit: edit([image({ scale: 0.4, position: 'topRight', offset: { x: -0.05, y: -0.05 } })]) },
  'position-bottomLeft': { edit: edit([image({ scale: 0.3, position: 'bottomLeft' })]) },
  'image-asset-crop': { edit: edit([clip({ type: 'image', src: `${CDN}/card.jpg`, crop: { left: 0.5, top: 0.5 } })]) },
  'image-alpha-png': { edit: edit([image({ fit: 'contain', scale: 0.8 }, `${CDN}/card.png`)], {}, { background: '#ff00ff' }) },
  // transform and opacity
  'transform-rotate': { edit: edit([image({ scale: 0.5, transform: { rotate: { angle: 30 } } })]) },
  'transform-flip': { edit: edit([image({ scale: 0.6, transform: { flip: { horizontal: true, vertical: true } } })]) },
  'transform-skew': { edit: edit([image({ scale: 0.5, transform: { skew: { x: 20, y: 0 } } })]) },
  'opacity-half': { edit: edit([image({ opacity: 0.5 })], {}, { background: '#ffffff' }) },
  'opacity-keyframes-at-rest': { edit: edit([image({ opacity: [{ from: 0, to: 1, start: 0, length: 2 }] })], { poster: { capture: 1 } }) },
  // track order: the first track is on top
  'track-order': { edit: edit([clip({ type: 'shape', shape: 'circle', circle: { radius: 50 }, fill: { color: '#ffcc00' } }), image()]) },
  // filters
  ...Object.fromEntries(['greyscale', 'negative', 'blur', 'boost', 'contrast', 'darken', 'lighten', 'muted'].map((f) => [`filter-${f}`, { edit: edit([image({ filter: f })]) }])),
  // text
  'text-wrap-center': { edit: edit([text('The quick brown fox jumps over the lazy dog')]) },
  'text-align-left-top': { edit: edit([text('Left top aligned text', {}, { alignment: { horizontal: 'left', vertical: 'top' } })]) },
  'text-align-right-bottom': { edit: edit([text('Right bottom', {}, { alignment: { horizontal: 'right', vertical: 'bottom' } })]) },
  'text-background-stroke': {
    edit: edit([text('Boxed', {}, { width: 180, height: 80, font: { family: 'Inter', size: 40, weight: 800, color: '#ffcc00', lineHeight: 1 }, background: { color: '#000000', opacity: 0.6, padding: 10, borderRadius: 16 }, stroke: { width: 2, color: '#d62828' } })]),
  },
  'text-cjk-emoji': { edit: edit([text('你好世界 こんにちは 😀🎉', {}, { font: { family: 'Noto Sans CJK SC', size: 22, color: '#ffffff' } })]) },
  'text-markup-escaped': { edit: edit([text('<b>not bold</b> & <span foreground="red">x</span>')]) },
  'text-weights': {
    edit: edit([
      text('Light 300', { position: 'top' }, { height: 50, font: { family: 'Lato', size: 26, weight: 300, color: '#ffffff' } }),
      text('Black 900', { position: 'bottom' }, { height: 50, font: { family: 'Lato', size: 26, weight: 900, color: '#ffffff' } }),
    ]),
  },
  // rich text
  'rich-gradient-shadow': {
    edit: edit([rich({ text: 'Gradient', font: { family: 'League Spartan', size: 44, weight: 900, color: '#ffffff' }, style: { gradient: { type: 'linear', angle: 90, stops: [{ offset: 0, color: '#ff006e' }, { offset: 1, color: '#ffbe0b' }] } }, shadow: { offsetX: 3, offsetY: 4, blur: 6, color: '#000000', opacity: 0.7 } })]),
  },
  'rich-spacing-transform-decoration': {
    edit: edit([rich({ text: 'spaced out', style: { letterSpacing: 6, textTransform: 'uppercase', textDecoration: 'underline' }, font: { family: 'Roboto', size: 24, weight: 500, color: '#e0fbfc' } })]),
  },
  'rich-background-border-padding': {
    edit: edit([rich({ text: 'Card', background: { color: '#ffffff', opacity: 1, borderRadius: 20 }, border: { width: 4, color: '#3a86ff', radius: 20 }, padding: 16, font: { family: 'Roboto', size: 34, weight: 700, color: '#1d3557' }, align: { horizontal: 'left', vertical: 'top' } })]),
  },
  // title presets
  'title-blockbuster': { edit: edit([clip({ type: 'title', text: 'Blockbuster', style: 'blockbuster', size: 'large' })]) },
  'title-subtitle-bottom': { edit: edit([clip({ type: 'title', text: 'A subtitle line', style: 'subtitle', size: 'small', position: 'bottom' }), image()]) },
  'title-marker-offset': { edit: edit([clip({ type: 'title', text: 'Marker', style: 'marker', size: 'x-large', color: '#ffb703', offset: { x: 0.1, y: 0.1 } })]) },
  // shapes
  'shape-rectangle': { edit: edit([clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 160, height: 80, cornerRadius: 20 }, fill: { color: '#ff3366', opacity: 0.9 }, stroke: { color: '#ffffff', width: 4 } })]) },
  'shape-circle-topLeft': { edit: edit([clip({ type: 'shape', shape: 'circle', circle: { radius: 40 }, width: 90, height: 90, fill: { color: '#00b4d8' } }, { position: 'topLeft' })]) },
  'shape-line-rotated': { edit: edit([clip({ type: 'shape', shape: 'line', line: { length: 200, thickness: 6 }, fill: { color: '#ffffff' } }, { transform: { rotate: { angle: -20 } } })]) },
  // svg
  'svg-inline': {
    edit: edit([clip({ type: 'svg', src: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" height="100"><polygon points="50,5 95,95 5,95" fill="#90be6d" stroke="#fff" stroke-width="4"/></svg>' }, { scale: 1.2 })]),
  },
  // output: background, transparency, device scale, watermark
  'background-transparent': { edit: edit([clip({ type: 'shape', shape: 'circle', circle: { radius: 60 }, fill: { color: '#ef476f', opacity: 0.8 } })], {}, { background: 'transparent' }) },
  'background-alpha-first': { edit: edit([clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 60, height: 60, cornerRadius: 0 }, fill: { color: '#000000' } })], {}, { background: '#80ffffff' }) },
  'scale-2': { edit: edit([text('Sharp at 2×'), image({ scale: 0.5, position: 'bottomRight' })]), scale: 2 },
  'watermark-test-mode': { edit: edit([image()]), watermark: true },
  'resolution-preview-16x9': { edit: { timeline: { background: '#000000', tracks: [{ clips: [image()] }] }, output: { format: 'png', resolution: 'preview', aspectRatio: '4:3' } } },
};

beforeAll(async () => {
  files.set(`${CDN}/card.jpg`, await testCard(400, 200));
  files.set(`${CDN}/card.png`, await testCard(300, 300, true));
  engine = new StillEngine({
    fonts: await FontCatalog.system(),
    fetch: async (url) => {
      const bytes = files.get(url);
      if (!bytes) throw new Error(`no fixture for ${url}`);
      return { url, bytes, ...sniff(bytes)! };
    },
  });
  mkdirSync(DIR, { recursive: true });
});

afterAll(async () => {
  if (!UPDATE) return;
  // A contact sheet of every reference, for the person reviewing the update.
  const names = Object.keys(CASES);
  const cell = { width: 240, height: 190 };
  const cols = 6;
  const tiles = await Promise.all(names.map(async (name, i) => {
    const png = await sharp(join(DIR, `${name}.png`)).resize(240, 160, { fit: 'contain', background: '#888888' }).png().toBuffer();
    const label = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="240" height="30"><text x="4" y="20" font-family="DejaVu Sans" font-size="13" fill="#000">${name}</text></svg>`);
    return [
      { input: png, left: (i % cols) * cell.width, top: Math.floor(i / cols) * cell.height },
      { input: label, left: (i % cols) * cell.width, top: Math.floor(i / cols) * cell.height + 160 },
    ];
  }));
  await sharp({ create: { width: cols * cell.width, height: Math.ceil(names.length / cols) * cell.height, channels: 3, background: '#dddddd' } })
    .composite(tiles.flat())
    .png()
    .toFile(join(DIR, 'sheet.png'));
});

describe('still engine golden images (issue 4; edit spec §2 output/edit, docs/edit-spec.md)', () => {
  test.each(Object.keys(CASES))('%s', async (name) => {
    const c = CASES[name]!;
    const out = await engine.render(assertEdit(c.edit), { scale: c.scale ?? 1, watermark: c.watermark ?? false });
    const reference = join(DIR, `${name}.png`);
    if (UPDATE || !existsSync(reference)) {
      if (!UPDATE) throw new Error(`no reference for ${name}: run with UPDATE_GOLDEN=1 and look at it`);
      writeFileSync(reference, out.bytes);
      return;
    }
    const sim = await compareImages(out.bytes, readFileSync(reference));
    expect(sim.sameSize).toBe(true);
    expect(sim.ssim).toBeGreaterThanOrEqual(SSIM_MIN);
    expect(sim.meanAbsDiff).toBeLessThanOrEqual(DIFF_MAX);
  });
});
