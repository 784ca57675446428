import type * as Sharp from 'sharp';
import sharp from 'sharp';
import type { Rgba, Size } from '#libs/edit-spec';
import { ByteLru } from './cache.js';
import { flatten, svgRaster, type Placed } from './compose.js';
import { escapeMarkup, OWN_SVG, toRaster, type Raster } from './raster.js';

/**
 * One block of text in a box: what text, rich-text and title assets all become before drawing.
 * Sizes are design pixels; `renderTextBlock` draws it at `scale` output pixels per design pixel.
 */
export interface TextStyle {
  /** Pango family name (installed, or declared by `fontFile`). */
  family: string;
  fontFile?: string;
  size: number;
  weight: number;
  italic?: boolean;
  color: Rgba;
  /** Extra space between letters, design px. */
  letterSpacing?: number;
  /** Line height as a multiple of the font size. */
  lineHeight?: number;
  decoration?: 'underline' | 'line-through';
  /** Highlight behind the glyphs (rich-text `font.background`). */
  highlight?: Rgba;
}

export interface Sides {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

export interface TextBlock {
  text: string;
  style: TextStyle;
  box: Size;
  padding: Sides;
  align: { horizontal: 'left' | 'center' | 'right'; vertical: 'top' | 'center' | 'bottom' };
  /** Moves the text inside the box (title offsets), design px, y down. */
  nudge?: { x: number; y: number };
  /** Fills the whole box. */
  background?: { color: Rgba; radius: number };
  /** A rounded box hugging the laid-out text (title backgrounds, subtitles). */
  plate?: { color: Rgba; padding: number; radius: number };
  border?: { width: number; color: Rgba; radius: number };
  stroke?: { width: number; color: Rgba };
  shadow?: { offsetX: number; offsetY: number; blur: number; color: Rgba };
  gradient?: { type: 'linear' | 'radial'; angle: number; stops: { offset: number; color: Rgba }[] };
}

export const NO_PADDING: Sides = { top: 0, right: 0, bottom: 0, left: 0 };

/** Boxes, plates and borders repeat from render to render of a template: drawn once each. */
const shapes = new ByteLru<Raster>(64 * 1024 * 1024);
const cachedSvg = (svg: string) => shapes.through(svg, () => svgRaster(svg), (r) => r.data.length);

/** What a glyph's alpha, drawn at `drawnAlpha`, is multiplied by to be its coverage in `colour`. */
const tintScale = (colour: Rgba, drawnAlpha: number) => colour.a / Math.max(drawnAlpha, 1 / 255);

/** The glyph coverage of `r` (drawn with alpha `drawnAlpha`) in another colour. */
export function tint(r: Raster, colour: Rgba, drawnAlpha: number): Raster {
  const data = Buffer.allocUnsafe(r.data.length);
  const k = tintScale(colour, drawnAlpha);
  for (let i = 0; i < data.length; i += 4) {
    data[i] = colour.r;
    data[i + 1] = colour.g;
    data[i + 2] = colour.b;
    data[i + 3] = Math.min(255, Math.round(r.data[i + 3]! * k));
  }
  return { data, width: r.width, height: r.height };
}

/**
 * `tint` blurred with a margin around it. The shadow is one colour, so blurring its premultiplied
 * picture (as sharp blurs RGBA) is blurring its coverage alone: one 8-bit channel instead of four in
 * floats, a quarter of the time (a 920×260 headline's shadow at blur 12: ~9 ms to ~2 ms; issue 33).
 */
export async function blurredShadow(r: Raster, colour: Rgba, drawnAlpha: number, sigma: number, margin: number): Promise<Raster> {
  const width = r.width + 2 * margin;
  const height = r.height + 2 * margin;
  const coverage = Buffer.alloc(width * height);
  const k = tintScale(colour, drawnAlpha);
  for (let y = 0; y < r.height; y++) {
    for (let x = 0, i = (y + margin) * width + margin, j = y * r.width * 4 + 3; x < r.width; x++, i++, j += 4) coverage[i] = Math.min(255, Math.round(r.data[j]! * k));
  }
  const soft = await sharp(coverage, { raw: { width, height, channels: 1 } }).blur(sigma).extractChannel(0).raw().toBuffer();
  if (soft.length !== width * height) throw new Error(`a shadow's blur gave ${soft.length} bytes for ${width}×${height}`);
  const data = Buffer.allocUnsafe(width * height * 4);
  for (let i = 0, j = 0; i < soft.length; i++, j += 4) {
    data[j] = colour.r;
    data[j + 1] = colour.g;
    data[j + 2] = colour.b;
    data[j + 3] = soft[i]!;
  }
  return { data, width, height };
}

const hex = (c: Rgba) => `#${[c.r, c.g, c.b].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
const svgFill = (c: Rgba) => `fill="${hex(c)}" fill-opacity="${Math.round(c.a * 1000) / 1000}"`;

/** The Pango markup of the whole block: every user character escaped, attributes from the style. */
export function textMarkup(text: string, style: TextStyle, colour: Rgba = style.color): string {
  const attrs: string[] = [
    `font_family="${escapeMarkup(style.family)}"`,
    `font_weight="${Math.round(style.weight)}"`,
    `font_size="${Math.max(1, Math.round(style.size * 1024))}"`,
    `foreground="${hex(colour)}"`,
    `fgalpha="${Math.max(1, Math.round(colour.a * 65535))}"`,
  ];
  if (style.italic) attrs.push('font_style="italic"');
  if (style.letterSpacing) attrs.push(`letter_spacing="${Math.round(style.letterSpacing * 1024)}"`);
  if (style.lineHeight) attrs.push(`line_height="${style.lineHeight}"`);
  if (style.decoration === 'underline') attrs.push('underline="single"');
  if (style.decoration === 'line-through') attrs.push('strikethrough="true"');
  if (style.highlight && style.highlight.a > 0) {
    attrs.push(`background="${hex(style.highlight)}"`, `bgalpha="${Math.max(1, Math.round(style.highlight.a * 65535))}"`);
  }
  return `<span ${attrs.join(' ')}>${escapeMarkup(text)}</span>`;
}

/** Lays the text out with Pango at `scale` (dpi 72 × scale: font sizes are design px). */
async function layout(block: TextBlock, scale: number, colour: Rgba, width: number): Promise<Raster | undefined> {
  if (block.text.trim() === '' || colour.a <= 0) return undefined;
  const options: Sharp.CreateText = {
    text: textMarkup(block.text, block.style, colour),
    rgba: true,
    dpi: Math.max(1, Math.round(72 * scale * 1000) / 1000),
    align: block.align.horizontal === 'center' ? 'centre' : block.align.horizontal,
    wrap: 'word-char',
    width: Math.max(1, Math.floor(width)),
  };
  if (block.style.fontFile) options.fontfile = block.style.fontFile;
  return toRaster(sharp({ text: options }));
}

/**
 * The text asset's `ellipsis`: when the block's text does not fit the height of its box (laid out by
 * Pango at design size in the box's width less padding), the text becomes its longest start that
 * fits with `ellipsis` appended, cut after the last whole word of that start when it has one (else
 * between two characters), trailing spaces dropped. A text that fits is left as it is. Both engines
 * draw the returned block, so stills and videos cut at the same place.
 */
export async function ellipsize(block: TextBlock, ellipsis: string): Promise<TextBlock> {
  // A template rendered again with the same text measures it once (a cut takes several layouts).
  const key = JSON.stringify([block.text, block.style, block.box, block.padding, ellipsis]);
  const text = await cuts.through(key, () => ellipsizedText(block, ellipsis), (t) => t.length * 2 + key.length * 2);
  return text === block.text ? block : { ...block, text };
}

/** Texts cut by `ellipsize`, keyed by what the cut depends on. */
const cuts = new ByteLru<string>(4 * 1024 * 1024);

async function ellipsizedText(block: TextBlock, ellipsis: string): Promise<string> {
  const pad = block.padding;
  const innerWidth = Math.max(1, block.box.width - pad.left - pad.right);
  const innerHeight = block.box.height - pad.top - pad.bottom;
  const opaque: Rgba = { r: 0, g: 0, b: 0, a: 1 };
  const fits = async (text: string) => {
    const laid = await layout({ ...block, text }, 1, opaque, innerWidth);
    return !laid || laid.height <= innerHeight + 0.5;
  };
  if (await fits(block.text)) return block.text;
  const chars = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(block.text)].map((g) => g.segment);
  const cut = (n: number) => chars.slice(0, n).join('').trimEnd() + ellipsis;
  // The longest start that fits (fitting shrinks as the start grows); 0 characters: the ellipsis alone.
  let lo = 0;
  let hi = chars.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (await fits(cut(mid))) lo = mid;
    else hi = mid - 1;
  }
  let n = lo;
  // Whole words: back to the last space of that start, unless the cut already falls on one.
  if (n > 0 && n < chars.length && !/\s/u.test(chars[n]!) && !/\s/u.test(chars[n - 1]!)) {
    const space = chars.slice(0, n).findLastIndex((ch) => /\s/u.test(ch));
    if (space > 0) n = space;
  }
  return cut(n);
}

function roundedRect(width: number, height: number, x: number, y: number, w: number, h: number, radius: number, fill: Rgba, stroke?: { width: number; color: Rgba }): string {
  const r = Math.max(0, Math.min(radius, w / 2, h / 2));
  const paint = stroke
    ? `fill="none" stroke="${hex(stroke.color)}" stroke-opacity="${stroke.color.a}" stroke-width="${stroke.width}"`
    : svgFill(fill);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect x="${x}" y="${y}" width="${Math.max(0, w)}" height="${Math.max(0, h)}" rx="${r}" ry="${r}" ${paint}/></svg>`;
}

function gradientSvg(width: number, height: number, g: NonNullable<TextBlock['gradient']>): string {
  const stops = g.stops.map((s) => `<stop offset="${s.offset}" stop-color="${hex(s.color)}" stop-opacity="${s.color.a}"/>`).join('');
  const rad = (g.angle * Math.PI) / 180;
  // CSS angles: 0deg points up, 90deg right.
  const dx = Math.sin(rad) / 2;
  const dy = -Math.cos(rad) / 2;
  const def = g.type === 'radial'
    ? `<radialGradient id="g" cx="0.5" cy="0.5" r="0.5">${stops}</radialGradient>`
    : `<linearGradient id="g" x1="${0.5 - dx}" y1="${0.5 - dy}" x2="${0.5 + dx}" y2="${0.5 + dy}">${stops}</linearGradient>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs>${def}</defs><rect width="100%" height="100%" fill="url(#g)"/></svg>`;
}

/** Draws a text block into a raster of its box at `scale`: background, plate, shadow, stroke, text, border. */
export async function renderTextBlock(block: TextBlock, scale: number): Promise<Raster> {
  const width = Math.max(1, Math.round(block.box.width * scale));
  const height = Math.max(1, Math.round(block.box.height * scale));
  const pad = block.padding;
  const innerWidth = Math.max(1, (block.box.width - pad.left - pad.right) * scale);
  const innerHeight = (block.box.height - pad.top - pad.bottom) * scale;
  const white: Rgba = { r: 255, g: 255, b: 255, a: 1 };

  const fill = await layout(block, scale, block.gradient ? white : block.style.color, innerWidth);
  const layers: Placed[] = [];
  if (block.background && block.background.color.a > 0) {
    layers.push({ raster: await cachedSvg(roundedRect(width, height, 0, 0, width, height, block.background.radius * scale, block.background.color)), left: 0, top: 0 });
  }
  if (fill) {
    const h = block.align.horizontal === 'left' ? 0 : block.align.horizontal === 'right' ? 1 : 0.5;
    const v = block.align.vertical === 'top' ? 0 : block.align.vertical === 'bottom' ? 1 : 0.5;
    const left = pad.left * scale + (innerWidth - fill.width) * h + (block.nudge?.x ?? 0) * scale;
    const top = pad.top * scale + (innerHeight - fill.height) * v + (block.nudge?.y ?? 0) * scale;

    if (block.plate && block.plate.color.a > 0) {
      const p = block.plate.padding * scale;
      const svg = roundedRect(width, height, left - p, top - p, fill.width + 2 * p, fill.height + 2 * p, block.plate.radius * scale, block.plate.color);
      layers.push({ raster: await svgRaster(svg), left: 0, top: 0 });
    }
    // Shadow and outline are the glyphs' coverage in another colour: one Pango layout serves all three.
    const fillAlpha = block.gradient ? 1 : block.style.color.a;
    if (block.shadow && block.shadow.color.a > 0) {
      const sigma = Math.max(0, (block.shadow.blur / 2) * scale);
      const margin = Math.ceil(sigma * 3);
      const soft = sigma >= 0.3 ? await blurredShadow(fill, block.shadow.color, fillAlpha, sigma, margin) : tint(fill, block.shadow.color, fillAlpha);
      const shift = sigma >= 0.3 ? margin : 0;
      layers.push({ raster: soft, left: left + block.shadow.offsetX * scale - shift, top: top + block.shadow.offsetY * scale - shift });
    }
    if (block.stroke && block.stroke.width > 0 && block.stroke.color.a > 0) {
      const outline = tint(fill, block.stroke.color, fillAlpha);
      const grow = Math.max(1, Math.round(block.stroke.width * scale));
      // The outline is the glyphs stamped around circles of radius 1..grow (libvips' dilate is
      // binary and would lose the anti-aliasing).
      const stamps: Placed[] = [];
      for (let r = grow; r > 0; r -= 2) {
        const steps = Math.max(8, Math.ceil(2 * Math.PI * r));
        for (let i = 0; i < steps; i++) {
          const a = (2 * Math.PI * i) / steps;
          stamps.push({ raster: outline, left: grow + r * Math.cos(a), top: grow + r * Math.sin(a) });
        }
      }
      const thick = await flatten(outline.width + 2 * grow, outline.height + 2 * grow, stamps);
      layers.push({ raster: thick, left: left - grow, top: top - grow });
    }
    if (block.gradient) {
      const paint = await toRaster(
        sharp(Buffer.from(gradientSvg(fill.width, fill.height, block.gradient)), OWN_SVG)
          .resize(fill.width, fill.height, { fit: 'fill' })
          .composite([{ input: fill.data, raw: { width: fill.width, height: fill.height, channels: 4 }, blend: 'dest-in' }]),
      );
      layers.push({ raster: paint, left, top });
    } else {
      layers.push({ raster: fill, left, top });
    }
  }
  if (block.border && block.border.width > 0 && block.border.color.a > 0) {
    const w = block.border.width * scale;
    const svg = roundedRect(width, height, w / 2, w / 2, width - w, height - w, block.border.radius * scale, block.border.color, { width: w, color: block.border.color });
    layers.push({ raster: await cachedSvg(svg), left: 0, top: 0 });
  }
  return flatten(width, height, layers);
}
