export interface Rgba {
  r: number;
  g: number;
  b: number;
  /** 0..1 */
  a: number;
}

/**
 * Reads a colour of the edit spec: `#rgb`, `#rrggbb`, `#aarrggbb` (Shotstack puts alpha first,
 * the opposite of CSS: `#80ffffff` is white at 50 %) or `transparent`.
 */
export function parseColor(value: string): Rgba {
  const hex = value.trim().toLowerCase();
  if (hex === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  const digits = hex.replace(/^#/, '');
  const full = digits.length === 3 ? [...digits].map((c) => c + c).join('') : digits;
  const byte = (i: number) => parseInt(full.slice(i, i + 2), 16);
  if (!/^([0-9a-f]{6}|[0-9a-f]{8})$/.test(full)) throw new Error(`not a colour: ${value}`);
  return full.length === 8
    ? { a: Math.round((byte(0) / 255) * 1000) / 1000, r: byte(2), g: byte(4), b: byte(6) }
    : { r: byte(0), g: byte(2), b: byte(4), a: 1 };
}

/** The colour in CSS syntax, with an optional extra opacity multiplied in: `rgba(255, 255, 255, 0.5)`. */
export function cssColor(value: string, opacity = 1): string {
  const { r, g, b, a } = parseColor(value);
  return `rgba(${r}, ${g}, ${b}, ${Math.round(a * opacity * 1000) / 1000})`;
}

/** Shotstack's chroma key defaults (threshold and halo in RGB distance units, 0–255 per channel). */
export const CHROMA_KEY_DEFAULTS = { threshold: 150, halo: 100 } as const;

/**
 * A video asset's `chromaKey` as lookup tables for an SVG filter (the composition's ChromaKey):
 * a pixel at Euclidean RGB distance d (0–255 units) from `color` keeps alpha
 * clamp((d − threshold) / halo, 0, 1): closer than `threshold` it is removed, over the next `halo` it fades
 * back in (a hard edge when halo is 0).
 *
 * `channel[c]` maps a channel value x (0..1, 256 samples) to min(1, (x − k)² / D²), D being
 * threshold + halo; the three are summed (clamped to 1, which only happens at d ≥ D, where alpha is
 * 1 anyway) into s = d² / D², and `alpha` maps s to the alpha above. Squares keep the distance
 * Euclidean; scaling by D spends the 8 bits of each step on distances that matter.
 */
export function chromaKeyTables(key: { color: string; threshold?: number; halo?: number }): { channel: [number[], number[], number[]]; alpha: number[] } {
  const { r, g, b } = parseColor(key.color);
  const threshold = Math.max(0, key.threshold ?? CHROMA_KEY_DEFAULTS.threshold);
  const halo = Math.max(0, key.halo ?? CHROMA_KEY_DEFAULTS.halo);
  const reach = Math.max(1, threshold + halo); // D, in 0–255 units
  const samples = (f: (x: number) => number) => Array.from({ length: 256 }, (_, i) => Math.round(f(i / 255) * 1e5) / 1e5);
  const channel = (k: number) => samples((x) => Math.min(1, ((x * 255 - k) / reach) ** 2));
  const alpha = samples((s) => {
    const d = Math.sqrt(s) * reach;
    if (halo === 0) return d >= threshold ? 1 : 0;
    return Math.min(1, Math.max(0, (d - threshold) / halo));
  });
  return { channel: [channel(r), channel(g), channel(b)], alpha };
}
