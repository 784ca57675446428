import sharp from 'sharp';
import { blurredShadow, tint } from './text.js';
import type { Raster } from './raster.js';

describe('text shadows (issue 33: the blur of one channel)', () => {
  test("a shadow blurred as its coverage alone matches sharp's blur of the tinted RGBA picture within 3 levels", async () => {
    // Glyph-like coverage: strokes with anti-aliased edges, drawn at 60 % alpha.
    const width = 180;
    const height = 60;
    const glyphs: Raster = { data: Buffer.alloc(width * height * 4), width, height };
    for (let y = 10; y < 50; y++) {
      for (let x = 10; x < 170; x++) {
        const edge = Math.min(x - 10, 170 - x, y - 10, 50 - y, Math.abs((x % 24) - 12));
        const a = edge >= 3 ? 153 : Math.round((153 * edge) / 3);
        glyphs.data.set([255, 255, 255, a], (y * width + x) * 4);
      }
    }
    for (const [colour, sigma] of [[{ r: 255, g: 51, b: 102, a: 0.8 }, 6], [{ r: 0, g: 0, b: 0, a: 0.5 }, 2.5], [{ r: 34, g: 204, b: 136, a: 1 }, 1]] as const) {
      const margin = Math.ceil(sigma * 3);
      const got = await blurredShadow(glyphs, colour, 0.6, sigma, margin);
      // The former way: the tinted picture, extended with transparent black, blurred by sharp in RGBA.
      const tinted = tint(glyphs, colour, 0.6);
      const { data, info } = await sharp(tinted.data, { raw: { width, height, channels: 4 } })
        .extend({ top: margin, bottom: margin, left: margin, right: margin, background: { r: 0, g: 0, b: 0, alpha: 0 } })
        .blur(sigma)
        .raw()
        .toBuffer({ resolveWithObject: true });
      expect([got.width, got.height]).toEqual([info.width, info.height]);
      let worst = 0;
      for (let i = 0; i < data.length; i += 4) {
        // Colour only matters where the shadow shows: weigh it by the alpha, as it is painted.
        worst = Math.max(worst, Math.abs(got.data[i + 3]! - data[i + 3]!));
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(got.data[i + c]! * got.data[i + 3]! - data[i + c]! * data[i + 3]!) / 255);
      }
      expect(worst).toBeLessThanOrEqual(3);
      // And the shadow is there: blurred beyond the strokes' edge (x 10, where the coverage is 0).
      expect(got.data[(margin + 30) * got.width * 4 + (margin + 10) * 4 + 3]).toBeGreaterThan(0);
      expect(tinted.data[30 * width * 4 + 10 * 4 + 3]).toBe(0);
    }
  });
});
