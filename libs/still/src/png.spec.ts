import { crc32, inflateSync } from 'node:zlib';
import sharp from 'sharp';
import { parsePngBand } from './png-bands.js';
import { encodeFramePng, FramePngWriter } from './png.js';

/** A photo-like RGBA frame: smooth structure and grain (the still engine's usual PNG). */
async function photoLike(width: number, height: number, alphaNoise = false): Promise<Buffer> {
  const base = sharp({ create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 50 } } }).blur(2);
  const rgb = await base.raw().toBuffer();
  const rgba = await sharp(rgb, { raw: { width, height, channels: 3 } }).ensureAlpha().raw().toBuffer();
  if (alphaNoise) for (let i = 3; i < rgba.length; i += 4) rgba[i] = (i * 7919) % 251;
  return rgba;
}

/** The PNG's chunks, each CRC checked, and its image data inflated (zlib checks the Adler-32). */
function readPng(png: Buffer): { types: string[]; raw: Buffer } {
  const types: string[] = [];
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    expect(png.readUInt32BE(at + 8 + length)).toBe(crc32(png.subarray(at + 4, at + 8 + length)));
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    types.push(type);
    at += 12 + length;
  }
  return { types, raw: inflateSync(Buffer.concat(idat)) };
}

async function pixels(png: Buffer): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

describe('frame PNG encoder (issue 4: encoder settings; issue 33: written in bands)', () => {
  test('round-trips RGBA pixels exactly through a standard decoder', async () => {
    const width = 301;
    const height = 97;
    const { data } = await sharp({ create: { width, height, channels: 4, background: { r: 10, g: 200, b: 90, alpha: 0.5 }, noise: { type: 'gaussian', mean: 128, sigma: 50 } } })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const back = await sharp(await encodeFramePng(data, width, height)).raw().toBuffer({ resolveWithObject: true });
    expect([back.info.width, back.info.height, back.info.channels]).toEqual([width, height, 4]);
    expect(back.data.equals(data)).toBe(true);
  });

  test('refuses pixels that are not width × height × 4 bytes', async () => {
    await expect(encodeFramePng(Buffer.alloc(10), 4, 4)).rejects.toThrow(/expected 64 bytes/);
  });

  test.each([
    [1080, 1080, false],
    [517, 333, false],
    [256, 256, false],
    [640, 481, true],
  ])('a %i×%i frame written in two bands is one PNG of exactly its pixels (alpha varying: %s)', async (width, height, alphaNoise) => {
    const rgba = await photoLike(width, height, alphaNoise);
    const png = await encodeFramePng(rgba, width, height);
    const { types, raw } = readPng(png);
    expect(types).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(raw.length).toBe(height * (width * 4 + 1));
    // The bottom band's first row was filtered against a row of zeros with Paeth, which the join
    // rewrites to Sub (the same bytes whatever the row above).
    const split = height >> 1;
    expect([0, 1]).toContain(raw[split * (width * 4 + 1)]);
    const back = await pixels(png);
    expect([back.width, back.height, back.channels]).toEqual([width, height, 4]);
    expect(back.data.equals(rgba)).toBe(true);
  });

  test('a frame whose bottom band cannot be joined (its first row filtered with Avg) is written whole, exactly', async () => {
    const width = 256;
    const height = 512;
    const rgba = await photoLike(width, height);
    // Each byte half the one a pixel to its left: Avg predicts all but one in eight exactly.
    const halving = (row: number) => {
      for (let x = 0; x < width; x++) for (let c = 0; c < 4; c++) rgba[(row * width + x) * 4 + c] = 128 >> x % 8;
    };
    halving(height >> 1);
    const alone = Buffer.from(rgba.subarray((height >> 1) * width * 4, ((height >> 1) + 40) * width * 4));
    const band = await encodeFramePng(alone, width, 40); // under the size written in bands: one piece
    expect(readPng(band).raw[0]).toBe(3);
    expect(parsePngBand(band)).toBeUndefined();
    const back = await pixels(await encodeFramePng(rgba, width, height));
    expect(back.data.equals(rgba)).toBe(true);
  });

  test('named rows are written once and joined again into later frames; the rest is written every time', async () => {
    const width = 400;
    const height = 600;
    const writer = new FramePngWriter(16 * 1024 * 1024, 8);
    const first = await photoLike(width, height);
    const second = Buffer.from(first);
    // Rows 200–420 change (a text's rows); the rows above and below are drawn from the same layers.
    const other = await photoLike(width, 220, true);
    other.copy(second, 200 * width * 4);
    const rows = (text: string) => [
      { from: 0, to: 200, key: 'photo' },
      { from: 200, to: 420, key: text },
      { from: 420, to: height, key: 'photo' },
    ];
    const a = await writer.write(first, width, height, rows('headline 1'));
    expect((await pixels(a)).data.equals(first)).toBe(true);
    const before = writer.stats;
    const b = await writer.write(second, width, height, rows('headline 2'));
    readPng(b);
    expect((await pixels(b)).data.equals(second)).toBe(true);
    // 0–200 is two pieces (at most 128 rows each), 420–600 two: four kept; the headline's two written.
    expect(writer.stats.hits - before.hits).toBe(4);
    expect(writer.stats.misses - before.misses).toBe(2);
    // Unnamed rows are never kept.
    const c = await writer.write(second, width, height, [{ from: 0, to: height }]);
    expect((await pixels(c)).data.equals(second)).toBe(true);
    expect(writer.stats.hits - before.hits).toBe(4);
  });

  test('rows that do not cover the frame in order, or too many bands, are written whole', async () => {
    const width = 300;
    const height = 300;
    const rgba = await photoLike(width, height);
    const writer = new FramePngWriter(1024 * 1024, 8);
    expect(writer.plan(width, height, [{ from: 0, to: 100 }, { from: 120, to: 300 }])).toBeUndefined();
    expect(writer.plan(width, height, Array.from({ length: 60 }, (_, i) => ({ from: i * 5, to: i * 5 + 5 })))).toBeUndefined();
    expect((await pixels(await writer.write(rgba, width, height, [{ from: 0, to: 100 }, { from: 120, to: 300 }]))).data.equals(rgba)).toBe(true);
  });
});
