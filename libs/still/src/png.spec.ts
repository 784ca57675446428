import sharp from 'sharp';
import { encodeFramePng } from './png.js';

describe('frame PNG encoder (issue 4: encoder settings)', () => {
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
});
