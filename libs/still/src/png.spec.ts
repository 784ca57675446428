import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { adler32, adler32Combine, encodePng } from './png.js';

describe('fast PNG encoder (issue 4: encoder settings)', () => {
  test.each([[3], [4]] as const)('round-trips %i-channel pixels exactly through a standard decoder', async (channels) => {
    const width = 301;
    const height = 97;
    const { data } = await sharp({ create: { width, height, channels, background: { r: 10, g: 200, b: 90, alpha: 0.5 }, noise: { type: 'gaussian', mean: 128, sigma: 50 } } })
      .raw()
      .toBuffer({ resolveWithObject: true });
    for (const bands of [1, 2, 3, 4, 7]) {
      const png = await encodePng(data, width, height, channels, bands);
      const back = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      expect([back.info.width, back.info.height, back.info.channels]).toEqual([width, height, channels]);
      expect(back.data.equals(data)).toBe(true);
    }
  });

  test('drops the alpha of RGBA input when asked for RGB', async () => {
    const { data } = await sharp({ create: { width: 64, height: 33, channels: 4, background: '#102030', noise: { type: 'gaussian', mean: 100, sigma: 40 } } }).raw().toBuffer({ resolveWithObject: true });
    const back = await sharp(await encodePng(data, 64, 33, 3, 2, 4)).raw().toBuffer({ resolveWithObject: true });
    expect(back.info.channels).toBe(3);
    const rgb = Buffer.alloc(64 * 33 * 3);
    for (let p = 0; p < 64 * 33; p++) data.copy(rgb, p * 3, p * 4, p * 4 + 3);
    expect(back.data.equals(rgb)).toBe(true);
  });

  test('adler32 matches zlib (the trailer of a zlib stream)', () => {
    const buf = Buffer.alloc(70_000, 0xff);
    buf[12345] = 7;
    const z = deflateSync(buf);
    expect(adler32(buf)).toBe(z.readUInt32BE(z.length - 4));
    expect(adler32(Buffer.from('Wikipedia'))).toBe(0x11e60398);
  });

  test('adler32Combine gives the checksum of the joined buffers (the trailer of a banded stream)', () => {
    const a = Buffer.alloc(100_003, 0x5a);
    const b = Buffer.from(Array.from({ length: 70_001 }, (_, i) => (i * 7919) & 0xff));
    expect(adler32Combine(adler32(a), adler32(b), b.length)).toBe(adler32(Buffer.concat([a, b])));
    expect(adler32Combine(1, adler32(b), b.length)).toBe(adler32(b));
    expect(adler32Combine(adler32(a), 1, 0)).toBe(adler32(a));
  });

  test('refuses a buffer of the wrong size', async () => {
    await expect(encodePng(Buffer.alloc(10), 4, 4, 3)).rejects.toThrow(/expected 48 bytes/);
  });
});
