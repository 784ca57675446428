import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { ApiError } from '#libs/core';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { MediaFetchError, parseFont, sniff } from '#libs/media';
import { FontCatalog } from './fonts.js';
import { frameRows, StillEngine, type StillEngineOptions } from './engine.js';
import { PNG_BAND_FRAMES } from './png.js';
import { compareImages, renamedFont } from '#testing/still';
import { textAssetBlock } from './assets.js';
import { ellipsize } from './text.js';
import compressWoff2 from 'wawoff2/compress.js';

/** Still engine behaviour beyond the pictures (issue 4): errors, fonts, limits, formats, security. */
const CDN = 'https://cdn.example.com';
const files = new Map<string, Buffer>();
let engine: StillEngine;
/** The shared engine's fonts and files, for a test that needs an engine (a cache) of its own. */
let options: StillEngineOptions;

function frame(tracks: JsonValue[], output: Record<string, JsonValue> = {}, timeline: Record<string, JsonValue> = {}): ReturnType<typeof assertEdit> {
  return assertEdit({
    timeline: { background: '#000000', ...timeline, tracks: tracks.map((c) => ({ clips: [c] })) },
    output: { format: 'png', size: { width: 200, height: 120 }, ...output },
  });
}
const clip = (asset: Record<string, JsonValue>, extra: Record<string, JsonValue> = {}): JsonValue => ({ asset, start: 0, length: 2, ...extra });
const text = (t: string, family = 'Open Sans') => clip({ type: 'text', text: t, font: { family, size: 28, color: '#ffffff' } });

/** A poppler tool's output on a PDF (the outside reader of issue 21). */
async function poppler(pdf: Buffer, tool: string, ...args: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'still-pdf-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    const { stdout } = await promisify(execFile)(tool, [...args, join(dir, 'doc.pdf'), ...(tool === 'pdftotext' ? ['-'] : [])]);
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

async function redPixels(png: Buffer): Promise<number> {
  const { data } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let n = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i]! > 180 && data[i + 1]! < 80 && data[i + 2]! < 80) n++;
  return n;
}

beforeAll(async () => {
  files.set(`${CDN}/photo.jpg`, await sharp({ create: { width: 300, height: 200, channels: 3, background: '#3366cc' } }).jpeg().toBuffer());
  files.set(`${CDN}/noise.png`, await sharp({ create: { width: 200, height: 120, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer());
  files.set(`${CDN}/renamed.ttf`, renamedFont());
  files.set(`${CDN}/font.woff2`, Buffer.concat([Buffer.from('wOF2'), Buffer.alloc(60)]));
  files.set(`${CDN}/notafont.ttf`, Buffer.concat([Buffer.from([0, 1, 0, 0]), Buffer.alloc(8)]));
  options = {
    fonts: await FontCatalog.system(join(tmpdir(), `still-fonts-test-${process.pid}`)),
    fetch: async (url, expect) => {
      const bytes = files.get(url);
      if (!bytes) throw new MediaFetchError(url, 'The server answered 404');
      const type = sniff(bytes);
      if (!type) throw new MediaFetchError(url, 'The file is not a media type the renderer reads');
      if (expect && !expect.includes(type.kind)) throw new MediaFetchError(url, `Expected ${expect.join(' or ')}, got ${type.mime}`);
      return { url, bytes, ...type };
    },
  };
  engine = new StillEngine(options);
});

describe('fonts (issue 4: shipped families, timeline.fonts, unknown family is a 422)', () => {
  test('the shipped set covers Latin, CJK and colour emoji families', async () => {
    const catalog = await FontCatalog.system();
    for (const family of ['Open Sans', 'Roboto', 'Lato', 'Inter', 'Noto Sans CJK SC', 'Noto Color Emoji', 'DejaVu Sans']) expect(catalog.find(family)).toBeDefined();
    expect(catalog.find('open sans')).toBe('Open Sans');
  });

  test('an unknown family answers 422 naming the path and the family, instead of falling back', async () => {
    const err = await rejection(engine.render(frame([text('hi', 'Comic Sans Imaginary')])));
    expect(err.code).toBe('TEMPLATE_VALIDATION_FAILED');
    expect(err.status).toBe(422);
    expect(err.extras.errors?.['edit.timeline.tracks[0].clips[0].asset.font.family']?.[0]).toMatch(/unknown font family "Comic Sans Imaginary"/);
  });

  test('a font from timeline.fonts is used for that render, and only there', async () => {
    expect(parseFont(renamedFont()).families).toContain('Zqxfnt Serif');
    const withFont = await engine.render(frame([text('Serif text', 'Zqxfnt Serif')], {}, { fonts: [{ src: `${CDN}/renamed.ttf` }] }));
    const installed = await engine.render(frame([text('Serif text', 'DejaVu Serif')]));
    const sans = await engine.render(frame([text('Serif text', 'DejaVu Sans')]));
    // The renamed copy draws exactly like the original, and differently from another face.
    expect((await compareImages(withFont.bytes, installed.bytes)).ssim).toBeGreaterThan(0.99);
    expect((await compareImages(withFont.bytes, sans.bytes)).ssim).toBeLessThan(0.95);
    // Another render without timeline.fonts cannot use it.
    const err = await rejection(engine.render(frame([text('Serif text', 'Zqxfnt Serif')])));
    expect(err.code).toBe('TEMPLATE_VALIDATION_FAILED');
  });

  test('a WOFF2 font from timeline.fonts draws as its TTF does', async () => {
    files.set(`${CDN}/renamed.woff2`, Buffer.from(await compressWoff2(renamedFont())));
    const woff2 = await engine.render(frame([text('Serif text', 'Zqxfnt Serif')], {}, { fonts: [{ src: `${CDN}/renamed.woff2` }] }));
    const ttf = await engine.render(frame([text('Serif text', 'Zqxfnt Serif')], {}, { fonts: [{ src: `${CDN}/renamed.ttf` }] }));
    const sans = await engine.render(frame([text('Serif text', 'DejaVu Sans')]));
    expect((await compareImages(woff2.bytes, ttf.bytes)).ssim).toBeGreaterThan(0.99);
    expect((await compareImages(woff2.bytes, sans.bytes)).ssim).toBeLessThan(0.95);
  });

  test('a font file that is not a usable font answers 422 MEDIA_UNAVAILABLE at timeline.fonts[i].src', async () => {
    const woff2 = await rejection(engine.render(frame([text('x')], {}, { fonts: [{ src: `${CDN}/font.woff2` }] })));
    expect(woff2.code).toBe('MEDIA_UNAVAILABLE');
    expect(woff2.extras.errors?.['edit.timeline.fonts[0].src']?.[0]).toMatch(/^The font file is damaged/);
    // A header announcing a font larger than the cap is refused before anything is unpacked.
    const bomb = Buffer.concat([Buffer.from('wOF2'), Buffer.alloc(60)]);
    bomb.writeUInt32BE(bomb.length, 8);
    bomb.writeUInt32BE(0x7fffffff, 16);
    files.set(`${CDN}/bomb.woff2`, bomb);
    const big = await rejection(engine.render(frame([text('x')], {}, { fonts: [{ src: `${CDN}/bomb.woff2` }] })));
    expect(big.extras.errors?.['edit.timeline.fonts[0].src']?.[0]).toBe('The font unpacks to 2048 MB; at most 32 MB is read');
    const broken = await rejection(engine.render(frame([text('x')], {}, { fonts: [{ src: `${CDN}/photo.jpg` }, { src: `${CDN}/notafont.ttf` }] })));
    expect(Object.keys(broken.extras.errors ?? {}).sort()).toEqual(['edit.timeline.fonts[0].src', 'edit.timeline.fonts[1].src']);
    expect(broken.extras.errors?.['edit.timeline.fonts[0].src']?.[0]).toMatch(/Expected font/);
  });
});

describe('inputs refused with the contract code and the clip path', () => {
  test('html (until the browser still path) answers 422 UNSUPPORTED_ASSET naming the clip', async () => {
    const err = await rejection(engine.render(frame([text('ok'), clip({ type: 'html', html: '<p>x</p>', width: 100, height: 50 })])));
    expect(err.code).toBe('UNSUPPORTED_ASSET');
    expect(Object.keys(err.extras.errors ?? {})).toEqual(['edit.timeline.tracks[1].clips[0].asset.type']);
  });

  test('an unreachable image answers 422 MEDIA_UNAVAILABLE naming its src path and the reason', async () => {
    const err = await rejection(engine.render(frame([clip({ type: 'image', src: `${CDN}/missing.png` })])));
    expect(err.code).toBe('MEDIA_UNAVAILABLE');
    expect(err.extras.errors?.['edit.timeline.tracks[0].clips[0].asset.src']).toEqual(['The server answered 404']);
  });

  test('a decode bomb (a tiny file of 100 megapixels) is refused before it is decoded', async () => {
    // A valid PNG header claiming 10000×10000 with one compressed row of data.
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(10_000, 0);
    ihdr.writeUInt32BE(10_000, 4);
    ihdr.writeUInt8(8, 8);
    ihdr.writeUInt8(0, 9);
    const chunk = (type: string, data: Buffer) => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(data.length);
      return Buffer.concat([len, Buffer.from(type, 'latin1'), data, Buffer.alloc(4)]);
    };
    const bomb = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(10_001))), chunk('IEND', Buffer.alloc(0))]);
    files.set(`${CDN}/bomb.png`, bomb);
    const err = await rejection(engine.render(frame([clip({ type: 'image', src: `${CDN}/bomb.png` })])));
    expect(err.code).toBe('MEDIA_UNAVAILABLE');
    expect(err.extras.errors?.['edit.timeline.tracks[0].clips[0].asset.src']?.[0]).toMatch(/megapixels|pixel limit/);
  });

  test('an image whose pixels cannot be decoded fails at once with 422 RENDER_FAILED naming the clip and the cause (issue 27)', async () => {
    // Its header reads (the size is known), its pixel data is cut short: no worker can ever draw it.
    const png = await sharp({ create: { width: 200, height: 120, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer();
    files.set(`${CDN}/truncated.png`, png.subarray(0, Math.floor(png.length / 2)));
    const err = await rejection(engine.render(frame([text('top'), clip({ type: 'image', src: `${CDN}/truncated.png` })])));
    expect([err.code, err.status]).toEqual(['RENDER_FAILED', 422]);
    expect(err.message).toMatch(/^edit\.timeline\.tracks\[1\]\.clips\[0\] cannot be drawn: .+/);
    expect(Object.keys(err.extras.errors ?? {})).toEqual(['edit.timeline.tracks[1].clips[0]']);
  });

  test('an output beyond the engine ceiling answers LIMIT_IMAGE_SIZE before drawing', async () => {
    const err = await rejection(engine.render(frame([text('x')], { size: { width: 8000, height: 8000 } }), { scale: 3 }));
    expect(err.code).toBe('LIMIT_IMAGE_SIZE');
  });
});

describe('frames with html, video, luma or caption clips (the browser still path)', () => {
  test('are drawn whole by the browser engine when one is configured, then watermarked and encoded as asked', async () => {
    const calls: { time: number; scale: number }[] = [];
    const browser = new StillEngine({
      fonts: await FontCatalog.system(),
      fetch: async () => {
        throw new Error('not used');
      },
      browserStill: async (_edit, opts) => {
        calls.push(opts);
        return sharp({ create: { width: 400, height: 240, channels: 4, background: '#ff0000' } }).png().toBuffer();
      },
    });
    const edit = frame([clip({ type: 'html', html: '<p>x</p>', width: 100, height: 50 })], { format: 'jpeg', poster: { capture: 1 } });
    const out = await browser.render(edit, { scale: 2, watermark: true });
    expect(calls).toEqual([{ time: 1, scale: 2 }]);
    expect([out.contentType, out.width, out.height]).toEqual(['image/jpeg', 400, 240]);
    expect(await redPixels(out.bytes)).toBeGreaterThan(400 * 240 * 0.8);
    const live = await browser.render(edit, { scale: 2 });
    expect((await compareImages(out.bytes, live.bytes)).meanAbsDiff).toBeGreaterThan(1);
  });
});

describe('text ellipsis (a text asset\'s `ellipsis`)', () => {
  const LONG = 'Summer collection now in stores: linen shirts, light dresses and sandals for the whole family';
  const asset = (ellipsis?: string, height = 40): JsonValue => ({ type: 'text', text: LONG, width: 200, height, font: { family: 'Open Sans', size: 24, color: '#ffffff' }, ...(ellipsis !== undefined ? { ellipsis } : {}) });
  const blockOf = (ellipsis: string | undefined, height: number) => {
    const edit = frame([clip(asset(ellipsis, height) as Record<string, JsonValue>)]);
    const a = edit.timeline.tracks[0]!.clips[0]!.asset;
    if (a.type !== 'text') throw new Error('not a text asset');
    return textAssetBlock(a, { width: 200, height }, { family: 'Open Sans' });
  };

  it('cuts an overflowing text after its last whole word that fits, with the ellipsis; leaves a fitting text alone', async () => {
    const one = await ellipsize(blockOf('…', 40), '…');
    expect(one.text.endsWith('…')).toBe(true);
    const kept = one.text.slice(0, -1);
    expect(kept.length).toBeGreaterThan(5);
    expect(LONG.startsWith(kept)).toBe(true);
    expect(LONG[kept.length]).toBe(' ');
    // A taller box keeps more whole words; a box the text fits in keeps it all.
    const three = await ellipsize(blockOf(' [more]', 100), ' [more]');
    expect(three.text.endsWith(' [more]')).toBe(true);
    expect(three.text.length).toBeGreaterThan(one.text.length + 10);
    expect(LONG.startsWith(three.text.slice(0, -' [more]'.length))).toBe(true);
    const roomy = blockOf('…', 400);
    expect(await ellipsize(roomy, '…')).toBe(roomy);
  });

  it('draws the start of the text with the ellipsis where an overflowing text showed its middle lines', async () => {
    const expected = (await ellipsize(blockOf('…', 40), '…')).text;
    const cut = await engine.render(frame([clip(asset('…') as Record<string, JsonValue>)]));
    const written = await engine.render(frame([clip({ ...(asset() as Record<string, JsonValue>), text: expected })]));
    const clipped = await engine.render(frame([clip(asset() as Record<string, JsonValue>)]));
    expect((await compareImages(cut.bytes, written.bytes)).ssim).toBeGreaterThan(0.99);
    expect((await compareImages(cut.bytes, clipped.bytes)).ssim).toBeLessThan(0.95);
  });
});

describe('security of drawn content', () => {
  test('user text cannot inject Pango markup (no red from a foreground attribute)', async () => {
    const out = await engine.render(frame([text('<span foreground="#ff0000">RED RED RED</span>')]));
    expect(await redPixels(out.bytes)).toBe(0);
  });

  test('SVG cannot load local files', async () => {
    const red = join(tmpdir(), `still-red-${process.pid}.png`);
    writeFileSync(red, await sharp({ create: { width: 50, height: 50, channels: 3, background: '#ff0000' } }).png().toBuffer());
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100"><image href="file://${red}" xlink:href="file://${red}" width="100" height="100"/></svg>`;
    const out = await engine.render(frame([clip({ type: 'svg', src: svg })]));
    expect(await redPixels(out.bytes)).toBe(0);
  });
});

describe('output formats (§2 output.format, §4.1 scale)', () => {
  const scene = () => frame([text('Invoice 42'), clip({ type: 'image', src: `${CDN}/photo.jpg` })], {}, { background: '#ffffff' });

  test('png: the size of output.size, opaque when the background is, see-through where it is transparent', async () => {
    const out = await engine.render(scene());
    const meta = await sharp(out.bytes).metadata();
    expect([out.contentType, meta.format, meta.width, meta.height]).toEqual(['image/png', 'png', 200, 120]);
    expect((await sharp(out.bytes).stats()).isOpaque).toBe(true);
    const clear = await engine.render(frame([text('x')], {}, { background: 'transparent' }));
    const { data, info } = await sharp(clear.bytes).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    expect(data[3]).toBe(0); // the top-left corner shows through
    expect((await sharp(clear.bytes).stats()).isOpaque).toBe(false);
  });

  test('jpeg: quality follows output.quality', async () => {
    const photo = frame([text('Some words to encode'), clip({ type: 'image', src: `${CDN}/noise.png` })], { format: 'jpg' });
    const low = await engine.render({ ...photo, output: { ...photo.output, quality: 'verylow' } });
    const high = await engine.render({ ...photo, output: { ...photo.output, quality: 'veryhigh' } });
    expect((await sharp(low.bytes).metadata()).format).toBe('jpeg');
    expect(low.contentType).toBe('image/jpeg');
    expect(high.bytes.length).toBeGreaterThan(low.bytes.length * 2);
  });

  test('pdf: one page of the design size at 150 dpi holding the picture, with the text searchable', async () => {
    const out = await engine.render({ ...scene(), output: { ...scene().output, format: 'pdf' } }, { scale: 2 });
    expect(out.contentType).toBe('application/pdf');
    expect(out.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const doc = await PDFDocument.load(out.bytes);
    expect(doc.getPageCount()).toBe(1);
    expect(doc.getPage(0).getSize()).toEqual({ width: 96, height: 57.6 });
    // The hidden text layer, read by poppler: the words, in the clip's own font embedded as a subset.
    expect(await poppler(out.bytes, 'pdftotext')).toContain('Invoice 42');
    expect(await poppler(out.bytes, 'pdffonts')).toMatch(/^[A-Z]{6}\+OpenSans\s+CID TrueType\s+Identity-H\s+yes yes yes/m);
  });

  test('pdf text layer (issue 21): every text clip\'s words where the clip is, in its own or a fallback font, any script', async () => {
    const edit = frame([
      clip({ type: 'text', text: 'Total due 1,234.56 EUR', font: { family: 'Open Sans', size: 14, color: '#000000', weight: 700 }, width: 200, height: 30 }, { position: 'top' }),
      clip({ type: 'text', text: '合计 Müller & Søn', font: { family: 'Noto Sans CJK SC', size: 12, color: '#000000' }, width: 200, height: 30 }, { position: 'bottom' }),
      text('Serif here', 'Zqxfnt Serif'),
    ], { format: 'pdf', pdf: { dpi: 72 } }, { background: '#ffffff', fonts: [{ src: `${CDN}/renamed.ttf` }] });
    const out = await engine.render(edit);
    const words = await poppler(out.bytes, 'pdftotext', '-raw');
    for (const line of ['Total due 1,234.56 EUR', '合计 Müller & Søn', 'Serif here']) expect(words).toContain(line);
    const fonts = await poppler(out.bytes, 'pdffonts');
    expect(fonts).toMatch(/^[A-Z]{6}\+OpenSans-Bold\s+CID TrueType\s+Identity-H\s+yes yes yes/m);
    // Noto Sans CJK is an OpenType/CFF collection: the layer uses DejaVu Sans; the downloaded font is its own.
    expect(fonts).toMatch(/^[A-Z]{6}\+DejaVuSans\s+CID TrueType\s+Identity-H\s+yes yes yes/m);
    expect(fonts).toMatch(/^[A-Z]{6}\+ZqxfntSerif\s+CID TrueType/m);
    expect(fonts).not.toMatch(/Helvetica/);
    // Where the words are: the top clip's words in the top 30 pt of a 200×120 pt page, centred.
    const bbox = await poppler(out.bytes, 'pdftotext', '-bbox');
    const total = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">Total<\/word>/.exec(bbox);
    expect(total).not.toBeNull();
    const [xMin, yMin, , yMax] = total!.slice(1).map(Number) as [number, number, number, number];
    expect(yMin).toBeGreaterThanOrEqual(0);
    expect(yMax).toBeLessThanOrEqual(30);
    expect(xMin).toBeGreaterThan(10);
    expect(xMin).toBeLessThan(60);
    // The subset is small: the whole PDF of a 200×120 frame with three fonts stays under 60 KB.
    expect(out.bytes.length).toBeLessThan(60_000);
  });

  test('device scale multiplies the pixels and draws the same picture', async () => {
    const one = await engine.render(scene(), { scale: 1 });
    const three = await engine.render(scene(), { scale: 3 });
    expect([three.width, three.height]).toEqual([600, 360]);
    const down = await sharp(three.bytes).resize(200, 120).png().toBuffer();
    expect((await compareImages(down, one.bytes)).ssim).toBeGreaterThan(0.9);
    const clamped = await engine.render(scene(), { scale: 7 });
    expect(clamped.width).toBe(600);
  });

  test('the same edit renders to the same bytes, the second time from cached layers', async () => {
    const edit = frame([text('Cache me'), clip({ type: 'image', src: `${CDN}/photo.jpg` }, { scale: 0.5 })]);
    const first = await engine.render(edit);
    const hits = engine.cacheStats.hits;
    const second = await engine.render(edit);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(engine.cacheStats.hits).toBeGreaterThan(hits);
  });

  test('a template rendered with new text every time keeps its photo cached and does not fill the cache with one-off layers', async () => {
    const own = new StillEngine(options);
    const edit = (n: number) => frame([text(`Once ${n}`), clip({ type: 'image', src: `${CDN}/photo.jpg` }, { scale: 0.5 })]);
    await own.render(edit(0));
    await own.render(edit(1));
    const settled = own.cacheStats;
    for (let n = 2; n < 150; n++) await own.render(edit(n));
    const after = own.cacheStats;
    // The photo layer hits on every render; each new text layer misses once.
    expect(after.hits - settled.hits).toBe(148);
    expect(after.misses - settled.misses).toBe(148);
    // One-off text layers take the probation window (64 of them) at most: a 200×120 frame's layer is
    // 96 KB, so 150 renders would hold ~14 MB of them without it.
    expect(after.bytes).toBeLessThanOrEqual(65 * 200 * 120 * 4);
    expect(after.bytes).toBeGreaterThan(0);
  });

  test('a template rendered again with new text writes only the rows under the text into its PNG: the same pixels as a fresh engine draws (issue 33)', async () => {
    const own = new StillEngine(options);
    const edit = (headline: string) =>
      frame(
        [
          clip({ type: 'text', text: headline, font: { family: 'Open Sans', size: 40, color: '#ffffff' } }, { position: 'top', offset: { y: -0.05 }, width: 440, height: 80 }),
          clip({ type: 'shape', shape: 'rectangle', rectangle: { width: 120, height: 40, cornerRadius: 12 }, fill: { color: '#e63946' } }, { width: 120, height: 40, position: 'bottom' }),
          clip({ type: 'image', src: `${CDN}/noise.png` }, { fit: 'cover' }),
        ],
        { size: { width: 480, height: 360 } },
      );
    await own.render(edit('First headline'));
    const before = own.cacheStats.pngBands;
    const frames = { ...PNG_BAND_FRAMES };
    const again = await own.render(edit('Second headline'));
    const kept = own.cacheStats.pngBands;
    expect(kept.hits).toBeGreaterThan(before.hits);
    // Joined from kept and new bands, not written whole after all.
    expect(PNG_BAND_FRAMES).toEqual({ joined: frames.joined + 1, whole: frames.whole });
    const fresh = await new StillEngine(options).render(edit('Second headline'));
    const [a, b] = await Promise.all([again, fresh].map((o) => sharp(o.bytes).raw().toBuffer()));
    expect(a!.equals(b!)).toBe(true);
    // And the text did change: the first render's pixels differ.
    const first = await sharp((await new StillEngine(options).render(edit('First headline'))).bytes).raw().toBuffer();
    expect(first.equals(a!)).toBe(false);
  });

  test('frame bands are cut at layer edges within the frame and named only when every layer over them is cached (issue 33)', () => {
    const raster = (width: number, height: number) => ({ data: Buffer.alloc(width * height * 4), width, height });
    const photo = { raster: raster(100, 300), left: 0, top: 0, key: 'photo' };
    const text = { raster: raster(80, 40), left: 10.4, top: 99.6, key: 'text' };
    const off = { raster: raster(20, 50), left: 5, top: 280, key: 'logo' }; // reaches past the bottom
    const rows = frameRows([photo, text, off], 300, 'bg');
    expect(rows.map((r) => [r.from, r.to])).toEqual([[0, 100], [100, 140], [140, 280], [280, 300]]);
    // The photo alone above and between: the same name for the same layers (the writer adds the rows).
    expect(rows[2]!.key).toBe(rows[0]!.key);
    expect(new Set(rows.map((r) => r.key)).size).toBe(3);
    const moved = frameRows([photo, { ...text, left: 12 }, off], 300, 'bg');
    expect(moved[0]!.key).toBe(rows[0]!.key);
    expect(moved[1]!.key).not.toBe(rows[1]!.key); // the text moved: its rows are not the same
    expect(frameRows([photo, text, off], 300, 'other background')[0]!.key).not.toBe(rows[0]!.key);
    // A layer without a key (the watermark, a browser frame): its rows are unnamed, the others not.
    const unnamed = frameRows([photo, { ...text, key: undefined }], 300, 'bg');
    expect(unnamed.map((r) => r.key === undefined)).toEqual([false, true, false]);
  });

  test('the watermark is visible: a test render differs from the live one', async () => {
    const live = await engine.render(scene());
    const test = await engine.render(scene(), { watermark: true });
    const sim = await compareImages(test.bytes, live.bytes);
    expect(sim.meanAbsDiff).toBeGreaterThan(1);
  });
});

describe('bounded memory (issue 27: layers composited a bounded number of pixels at a time)', () => {
  test('a frame over the pixels in flight is drawn in groups, each composited in turn, and looks as drawn at once', async () => {
    const edit = assertEdit({
      timeline: {
        background: '#204060',
        tracks: Array.from({ length: 6 }, (_, i) => ({ clips: [{ asset: { type: 'text', text: `Layer ${i}`, font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1, offset: { x: 0, y: 0.3 - i * 0.1 }, opacity: 0.8, ...(i % 2 ? { filter: 'blur' } : {}) }] })),
      },
      output: { format: 'png', size: { width: 320, height: 240 } },
    });
    const fetch = async () => {
      throw new Error('not used');
    };
    const fonts = await FontCatalog.system();
    const atOnce = await new StillEngine({ fonts, fetch }).render(edit);
    // Each text layer is the whole frame (76,800 px): 100,000 px in flight draws them one by one.
    const grouped = await new StillEngine({ fonts, fetch, pixelsInFlight: 100_000 }).render(edit);
    const { ssim } = await compareImages(grouped.bytes, atOnce.bytes);
    expect(ssim).toBeGreaterThan(0.995);
  });
});

describe('placement to the sub-pixel (issue 32: a still is the frame the browser draws)', () => {
  /** The alpha-weighted centre of a PNG, in output pixels (pixel i spans i..i+1). */
  async function centre(png: Buffer): Promise<{ x: number; y: number; area: number }> {
    const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    let sx = 0;
    let sy = 0;
    let mass = 0;
    for (let y = 0; y < info.height; y++) {
      for (let x = 0; x < info.width; x++) {
        const a = data[(y * info.width + x) * 4 + 3]! / 255;
        sx += a * (x + 0.5);
        sy += a * (y + 0.5);
        mass += a;
      }
    }
    return { x: sx / mass, y: sy / mass, area: mass };
  }

  it('turns and flips a picture about the exact centre of its box, as CSS transform-origin: center does', async () => {
    // 61 × 40 at offset (0.0125, -0.025): the box is 72..133 × 43..83, its centre (102.5, 63) on a
    // pixel's middle, not its corner.
    files.set(`${CDN}/white.png`, await sharp({ create: { width: 61, height: 40, channels: 3, background: '#ffffff' } }).png().toBuffer());
    const exact = { x: 102.5, y: 63 };
    for (const transform of [{ rotate: { angle: 30 } }, { rotate: { angle: -73 } }, { flip: { horizontal: true, vertical: false }, rotate: { angle: 12 } }, { flip: { horizontal: true, vertical: true } }] as JsonValue[]) {
      const edit = frame([clip({ type: 'image', src: `${CDN}/white.png` }, { fit: 'none', offset: { x: 0.0125, y: -0.025 }, transform })], {}, { background: 'transparent' });
      const got = await centre((await engine.render(edit)).bytes);
      expect({ transform, dx: Math.abs(got.x - exact.x) < 0.05, dy: Math.abs(got.y - exact.y) < 0.05, area: Math.abs(got.area / (61 * 40) - 1) < 0.01 })
        .toEqual({ transform, dx: true, dy: true, area: true });
    }
  });
});
