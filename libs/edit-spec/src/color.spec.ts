import { chromaKeyTables, cssColor, parseColor } from './color.js';

describe('Shotstack colours', () => {
  it('read #rgb, #rrggbb, alpha-first #aarrggbb and transparent', () => {
    expect(parseColor('#fff')).toEqual({ r: 255, g: 255, b: 255, a: 1 });
    expect(parseColor('#FF3366')).toEqual({ r: 255, g: 51, b: 102, a: 1 });
    expect(parseColor('#80ffffff')).toEqual({ r: 255, g: 255, b: 255, a: 0.502 });
    expect(parseColor('transparent').a).toBe(0);
    expect(() => parseColor('red')).toThrow(/not a colour/);
  });

  it('write CSS rgba with an extra opacity multiplied in', () => {
    expect(cssColor('#80000000', 0.5)).toBe('rgba(0, 0, 0, 0.251)');
    expect(cssColor('#00aaff')).toBe('rgba(0, 170, 255, 1)');
  });
});

describe('chroma key tables (video asset chromaKey)', () => {
  /** What the SVG filter computes from the tables for one pixel (linear interpolation, clamping). */
  function keyedAlpha(tables: ReturnType<typeof chromaKeyTables>, [r, g, b]: [number, number, number]): number {
    const lookup = (t: number[], x: number) => {
      const at = Math.min(1, Math.max(0, x)) * (t.length - 1);
      const i = Math.min(t.length - 2, Math.floor(at));
      return t[i]! + (at - i) * (t[i + 1]! - t[i]!);
    };
    const s = Math.min(1, lookup(tables.channel[0], r / 255) + lookup(tables.channel[1], g / 255) + lookup(tables.channel[2], b / 255));
    return lookup(tables.alpha, s);
  }

  it('removes colours within the threshold, fades the halo, keeps the rest (Euclidean RGB distance)', () => {
    const green = chromaKeyTables({ color: '#00b140' }); // threshold 150, halo 100
    expect(keyedAlpha(green, [0, 177, 64])).toBeCloseTo(0, 2);
    expect(keyedAlpha(green, [64, 192, 96])).toBeCloseTo(0, 2); // d ≈ 73
    expect(keyedAlpha(green, [200, 177, 64])).toBeCloseTo(0.5, 1); // d = 200: halfway through the halo
    expect(keyedAlpha(green, [255, 0, 0])).toBe(1);
    expect(keyedAlpha(green, [224, 172, 105])).toBeGreaterThan(0.7); // a skin tone, d ≈ 228
    const tight = chromaKeyTables({ color: '#00b140', threshold: 50, halo: 0 });
    expect(keyedAlpha(tight, [64, 192, 96])).toBe(1); // d ≈ 73 > 50: kept, hard edge
    expect(keyedAlpha(tight, [20, 180, 70])).toBe(0); // d ≈ 21
    expect(tight.alpha.every((a) => a === 0 || a === 1)).toBe(true);
  });

  it('are 256 samples within 0..1', () => {
    const t = chromaKeyTables({ color: '#ff00ff', threshold: 0, halo: 0 });
    for (const table of [...t.channel, t.alpha]) {
      expect(table).toHaveLength(256);
      expect(table.every((v) => v >= 0 && v <= 1)).toBe(true);
    }
  });
});
