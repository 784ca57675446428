import type * as Sharp from 'sharp';
import sharp from 'sharp';
import { BLUR_SIGMA, type Filter } from '#libs/edit-spec';

/** Straight (not premultiplied) 8-bit RGBA pixels. Every layer travels in this form between steps. */
export interface Raster {
  data: Buffer;
  width: number;
  height: number;
}

/**
 * sharp's options for the SVG markup this engine writes itself (shapes, gradients, the watermark):
 * 72 dpi, and a decode limit of the largest frame it draws (engine.ts MAX_PIXELS), so no input reaches
 * libvips unbounded (issue 27).
 */
export const OWN_SVG = { density: 72, limitInputPixels: 80_000_000 } as const;

export const RAW = (r: Raster) => ({ raw: { width: r.width, height: r.height, channels: 4 as const } });

export function blank(width: number, height: number): Raster {
  return { data: Buffer.alloc(width * height * 4), width, height };
}

/** Reads any sharp pipeline into a Raster (alpha added when missing). */
export async function toRaster(image: Sharp.Sharp): Promise<Raster> {
  const { data, info } = await image.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`expected 4 channels, got ${info.channels}`);
  return { data, width: info.width, height: info.height };
}

export function fromRaster(r: Raster): Sharp.Sharp {
  return sharp(r.data, RAW(r));
}

/** The part of a raster inside `rect` (clamped); copies rows, no sharp round trip. */
export function cropRaster(r: Raster, rect: { left: number; top: number; width: number; height: number }): Raster {
  const left = Math.max(0, rect.left);
  const top = Math.max(0, rect.top);
  const right = Math.min(r.width, rect.left + rect.width);
  const bottom = Math.min(r.height, rect.top + rect.height);
  const width = Math.max(0, right - left);
  const height = Math.max(0, bottom - top);
  if (left === 0 && top === 0 && width === r.width && height === r.height) return r;
  const out = Buffer.allocUnsafe(width * height * 4);
  for (let y = 0; y < height; y++) {
    const from = ((top + y) * r.width + left) * 4;
    r.data.copy(out, y * width * 4, from, from + width * 4);
  }
  return { data: out, width, height };
}

/** The raster with `n` transparent pixels added on every side. */
export function padRaster(r: Raster, n: number): Raster {
  const width = r.width + 2 * n;
  const out = Buffer.alloc(width * (r.height + 2 * n) * 4);
  for (let y = 0; y < r.height; y++) r.data.copy(out, ((y + n) * width + n) * 4, y * r.width * 4, (y + 1) * r.width * 4);
  return { data: out, width, height: r.height + 2 * n };
}

/** Pixels a JavaScript pixel loop touches before it lets the event loop run (~5 ms of work). */
export const PIXELS_PER_TURN = 1 << 20;

/**
 * Runs `work` over rows [0, height) in bands of at most PIXELS_PER_TURN pixels, letting the event loop
 * turn between bands: a frame-sized layer of a large still (67 megapixels at 8192²) is ~0.4 s of
 * JavaScript per pass, long enough to starve the worker's job-lock renewals (STILL_LOCK_MS) and the
 * other stills drawing beside it. Small rasters run in one call, as before.
 */
export async function inBands(height: number, width: number, work: (from: number, to: number) => void, pixelsPerTurn = PIXELS_PER_TURN): Promise<void> {
  const rows = Math.max(1, Math.floor(pixelsPerTurn / Math.max(1, width)));
  for (let from = 0; from < height; from += rows) {
    if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    work(from, Math.min(height, from + rows));
  }
}

/**
 * Multiplies the alpha channel (clip opacity) in place, in bands of rows that let the event loop turn:
 * for a raster nobody else holds (every drawable's draw, filter and transform hand back their own),
 * so a frame-sized layer is not copied (320 MB at 80 megapixels; docs/decisions.md "Hostile input
 * (issue 27): budget").
 */
export async function fadeInPlace(r: Raster, opacity: number, pixelsPerTurn = PIXELS_PER_TURN): Promise<Raster> {
  if (opacity >= 1) return r;
  const { data, width } = r;
  await inBands(r.height, width, (from, to) => {
    for (let i = from * width * 4 + 3, end = to * width * 4; i < end; i += 4) data[i] = Math.round(data[i]! * opacity);
  }, pixelsPerTurn);
  return r;
}

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);

/** Per-pixel colour operations of the spec's filters (blur is done by sharp). */
function colourFilter(filter: Exclude<Filter, 'blur'>): (r: number, g: number, b: number) => [number, number, number] {
  const luma = (r: number, g: number, b: number) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const saturate = (k: number) => (r: number, g: number, b: number): [number, number, number] => {
    const l = luma(r, g, b);
    return [l + (r - l) * k, l + (g - l) * k, l + (b - l) * k];
  };
  const contrast = (k: number) => (v: number) => (v - 128) * k + 128;
  switch (filter) {
    case 'greyscale':
      return (r, g, b) => {
        const l = luma(r, g, b);
        return [l, l, l];
      };
    case 'negative':
      return (r, g, b) => [255 - r, 255 - g, 255 - b];
    case 'darken':
      return (r, g, b) => [r * 0.7, g * 0.7, b * 0.7];
    case 'lighten':
      return (r, g, b) => [r + (255 - r) * 0.3, g + (255 - g) * 0.3, b + (255 - b) * 0.3];
    case 'contrast': {
      const c = contrast(1.4);
      return (r, g, b) => [c(r), c(g), c(b)];
    }
    case 'boost': {
      const c = contrast(1.15);
      const s = saturate(1.4);
      return (r, g, b) => {
        const [x, y, z] = s(r, g, b);
        return [c(x), c(y), c(z)];
      };
    }
    case 'muted': {
      const c = contrast(0.85);
      const s = saturate(0.55);
      return (r, g, b) => {
        const [x, y, z] = s(r, g, b);
        return [c(x), c(y), c(z)];
      };
    }
  }
}

/**
 * The spec's filters as sharp can do them: greyscale, negative, brightness (darken/lighten),
 * contrast, saturation + contrast (boost, muted) per pixel, and a Gaussian blur.
 */
export async function applyFilter(r: Raster, filter: Filter | undefined, pixelRatio: number): Promise<Raster> {
  if (!filter) return r;
  if (filter === 'blur') {
    const sigma = Math.max(0.3, BLUR_SIGMA * pixelRatio);
    return toRaster(fromRaster(r).blur(sigma));
  }
  const op = colourFilter(filter);
  const data = Buffer.allocUnsafe(r.data.length);
  const src = r.data;
  for (let i = 0; i < src.length; i += 4) {
    const [x, y, z] = op(src[i]!, src[i + 1]!, src[i + 2]!);
    data[i] = clamp(Math.round(x));
    data[i + 1] = clamp(Math.round(y));
    data[i + 2] = clamp(Math.round(z));
    data[i + 3] = src[i + 3]!;
  }
  return { data, width: r.width, height: r.height };
}

/** Escapes text for Pango markup and SVG: user text can never open a tag or an entity. */
export function escapeMarkup(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
