import { crc32, inflateSync } from 'node:zlib';
import sharp from 'sharp';
import { joinPngBands, parsePngBand } from './png-bands.js';
import { encodeFramePng, FramePngWriter, PNG_BAND_FRAMES } from './png.js';

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

/** LSB-first bit packing, as deflate stores header fields (Huffman codes go most significant bit first). */
class Bits {
  bytes: number[] = [];
  pos = 0;
  put(value: number, n: number): void {
    for (let i = 0; i < n; i++, this.pos++) {
      if ((this.pos & 7) === 0) this.bytes.push(0);
      this.bytes[this.bytes.length - 1]! |= ((value >> i) & 1) << (this.pos & 7);
    }
  }
  code(code: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) this.put((code >> i) & 1, 1);
  }
}

function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/**
 * A band's PNG as another deflate writer might make it: one dynamic block of literals only, whose
 * code gives literals 0, 1, 2 and 4 (the filter bytes) the lengths asked for; its first row filtered
 * with `filter` against a row of zeros, the others with Sub.
 */
function syntheticBand(rgba: Buffer, width: number, rows: number, filter: 0 | 1 | 2 | 4, lengthOf: { 0: number; 1: number; 2: number; 4: number }): Buffer {
  const stride = width * 4;
  const raw = Buffer.alloc(rows * (stride + 1));
  for (let y = 0; y < rows; y++) {
    const f = y === 0 ? filter : 1;
    raw[y * (stride + 1)] = f;
    for (let x = 0; x < stride; x++) {
      const v = rgba[y * stride + x]!;
      const left = x >= 4 ? rgba[y * stride + x - 4]! : 0;
      raw[y * (stride + 1) + 1 + x] = f === 1 || f === 4 ? (v - left) & 255 : v; // Paeth and Up against zeros: Sub and None
    }
  }
  // A complete code over the 257 literals: the four asked for, then the rest at 8 and 9 bits.
  const lengths = new Array<number>(257).fill(9);
  for (const [symbol, length] of Object.entries(lengthOf)) lengths[Number(symbol)] = length;
  const taken = Object.values(lengthOf).reduce((sum, l) => sum + 512 / 2 ** l, 0);
  let eights = 512 - taken - 253;
  for (let sym = 0; sym < 256 && eights > 0; sym++) {
    if (sym in lengthOf) continue;
    lengths[sym] = 8;
    eights--;
  }
  const count = new Array<number>(16).fill(0);
  for (const l of lengths) count[l]++;
  const next: number[] = [];
  for (let len = 1, c = 0; len < 16; len++) next[len] = c = (c + (len > 1 ? count[len - 1]! : 0)) << 1;
  const codes = lengths.map((l) => next[l]!++);
  const bits = new Bits();
  bits.put(1, 1); // BFINAL
  bits.put(2, 2); // dynamic
  bits.put(0, 5); // 257 literal/length codes
  bits.put(0, 5); // one distance code
  bits.put(15, 4); // 19 code length codes
  const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  for (const sym of order) bits.put(sym < 16 ? 4 : 0, 3); // lengths 0–15 each a 4-bit code (its own value)
  for (const l of [...lengths, 1]) bits.code(l, 4);
  for (const byte of raw) bits.code(codes[byte]!, lengths[byte]!);
  bits.code(codes[256]!, lengths[256]!);
  const zlib = Buffer.concat([Buffer.from([0x78, 0x01]), Buffer.from(bits.bytes), Buffer.alloc(4)]);
  zlib.writeUInt32BE(adler32(raw), zlib.length - 4);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(rows, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib), chunk('IEND', Buffer.alloc(0))]);
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
    const joined = PNG_BAND_FRAMES.joined;
    const png = await encodeFramePng(rgba, width, height);
    expect(PNG_BAND_FRAMES.joined).toBe(joined + 1);
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

  test.each([
    ['equal lengths: nothing to line up', { 0: 3, 1: 3, 2: 3, 4: 3 }],
    ['Paeth and Up 2 bits longer than Sub and None: one fixed block', { 0: 2, 1: 3, 2: 4, 4: 5 }],
    ['6 and 4 bits longer: three and two fixed blocks', { 0: 4, 1: 2, 2: 8, 4: 8 }],
    ['shorter (−2 and −2): three fixed blocks', { 0: 5, 1: 6, 2: 3, 4: 4 }],
  ] as const)('bands of another writer join whatever their codes: %s', async (_, lengthOf) => {
    // Bands of 1, 2, 3 and 5 rows, each first row filtered with each filter the join rewrites or keeps.
    const width = 37;
    const heights = [1, 2, 3, 5];
    const height = heights.reduce((a, b) => a + b, 0);
    const rgba = await photoLike(width, height, true);
    for (const filter of [0, 1, 2, 4] as const) {
      let row = 0;
      const bands = heights.map((rows) => {
        const band = parsePngBand(syntheticBand(rgba.subarray(row * width * 4, (row + rows) * width * 4), width, rows, filter, lengthOf));
        row += rows;
        return band;
      });
      expect(bands.every((b) => b !== undefined)).toBe(true);
      const png = joinPngBands(bands as NonNullable<(typeof bands)[number]>[], height)!;
      const { raw } = readPng(png);
      expect(raw.length).toBe(height * (width * 4 + 1));
      expect((await pixels(png)).data.equals(rgba)).toBe(true);
    }
  });

  test('a band whose filter code and its replacement differ by an odd number of bits is not joined', () => {
    const rgba = Buffer.alloc(16 * 2 * 4, 7);
    expect(parsePngBand(syntheticBand(rgba, 16, 2, 4, { 0: 2, 1: 3, 2: 5, 4: 4 }))).toBeUndefined();
    expect(parsePngBand(syntheticBand(rgba, 16, 2, 2, { 0: 2, 1: 3, 2: 5, 4: 4 }))).toBeUndefined();
    // The same lengths with a filter that is kept as it is: joinable.
    expect(parsePngBand(syntheticBand(rgba, 16, 2, 1, { 0: 2, 1: 3, 2: 5, 4: 4 }))).toBeDefined();
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
    const whole = PNG_BAND_FRAMES.whole;
    const back = await pixels(await encodeFramePng(rgba, width, height));
    expect(back.data.equals(rgba)).toBe(true);
    expect(PNG_BAND_FRAMES.whole).toBe(whole + 1);
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
    const joined = PNG_BAND_FRAMES.joined;
    const b = await writer.write(second, width, height, rows('headline 2'));
    expect(PNG_BAND_FRAMES.joined).toBe(joined + 1);
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
