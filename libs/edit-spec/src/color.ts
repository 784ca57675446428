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
