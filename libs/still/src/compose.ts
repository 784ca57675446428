import type * as Sharp from 'sharp';
import sharp from 'sharp';
import { cropRaster, inBands, OWN_SVG, RAW, toRaster, type Raster } from './raster.js';

export interface Placed {
  raster: Raster;
  left: number;
  top: number;
  /** Every pixel has alpha 255 (lets a full-frame bottom layer be the canvas itself). */
  opaque?: boolean;
  /** Names its pixels and place when it comes from the layer cache (the same key, the same layer). */
  key?: string;
}

/** Crops each layer to a width × height canvas (sharp refuses overlays that stick out). */
export function clipToCanvas(layers: readonly Placed[], width: number, height: number): Sharp.OverlayOptions[] {
  const overlays: Sharp.OverlayOptions[] = [];
  for (const layer of layers) {
    const left = Math.round(layer.left);
    const top = Math.round(layer.top);
    const visible = cropRaster(layer.raster, { left: -left, top: -top, width, height });
    if (visible.width === 0 || visible.height === 0) continue;
    overlays.push({ input: visible.data, ...RAW(visible), left: Math.max(0, left), top: Math.max(0, top) });
  }
  return overlays;
}

export interface Background {
  r: number;
  g: number;
  b: number;
  /** 0..1 */
  alpha: number;
}

export const TRANSPARENT: Background = { r: 0, g: 0, b: 0, alpha: 0 };

/**
 * Paints `src` over `dst` (straight alpha, in place) at a whole-pixel offset: the small compositions
 * of a text block cost less here than a round trip through a libvips pipeline.
 */
export function paintOver(dst: Raster, src: Raster, left: number, top: number, rows?: { from: number; to: number }): void {
  const x0 = Math.max(0, left);
  const y0 = Math.max(0, top, rows?.from ?? 0);
  const x1 = Math.min(dst.width, left + src.width);
  const y1 = Math.min(dst.height, top + src.height, rows?.to ?? Infinity);
  const d = dst.data;
  const s = src.data;
  for (let y = y0; y < y1; y++) {
    let di = (y * dst.width + x0) * 4;
    let si = ((y - top) * src.width + (x0 - left)) * 4;
    for (let x = x0; x < x1; x++, di += 4, si += 4) {
      const sa = s[si + 3]!;
      if (sa === 0) continue;
      const da = d[di + 3]!;
      if (da === 255 && sa !== 255) {
        // Over an opaque pixel (a photo, a filled background): integer blend, alpha stays 255.
        const ka = 255 - sa;
        d[di] = ((s[si]! * sa + d[di]! * ka + 127) / 255) | 0;
        d[di + 1] = ((s[si + 1]! * sa + d[di + 1]! * ka + 127) / 255) | 0;
        d[di + 2] = ((s[si + 2]! * sa + d[di + 2]! * ka + 127) / 255) | 0;
        continue;
      }
      if (sa === 255 || da === 0) {
        d[di] = s[si]!;
        d[di + 1] = s[si + 1]!;
        d[di + 2] = s[si + 2]!;
        d[di + 3] = sa;
        continue;
      }
      const outA = sa + (da * (255 - sa)) / 255;
      const kd = (da * (255 - sa)) / 255;
      d[di] = Math.round((s[si]! * sa + d[di]! * kd) / outA);
      d[di + 1] = Math.round((s[si + 1]! * sa + d[di + 1]! * kd) / outA);
      d[di + 2] = Math.round((s[si + 2]! * sa + d[di + 2]! * kd) / outA);
      d[di + 3] = Math.round(outA);
    }
  }
}

/** paintOver in bands of rows (inBands): the same pixels, without holding the event loop. */
export function paintOverInBands(dst: Raster, src: Raster, left: number, top: number, pixelsPerTurn?: number): Promise<void> {
  // Bands over the rows the layer covers only (a short layer on a tall canvas is one band).
  const first = Math.max(0, top);
  const rows = Math.max(0, Math.min(dst.height, top + src.height) - first);
  return inBands(rows, Math.min(dst.width, src.width), (from, to) => paintOver(dst, src, left, top, { from: first + from, to: first + to }), pixelsPerTurn);
}

/**
 * Frame-size pixel buffers reused from render to render: a 1080² RGBA frame is 4.7 MB, and allocating
 * one per render kept V8's collector busy (~6 ms a render in the worker's profile). A buffer goes
 * back with releaseFrame once nothing reads it any more.
 */
const freeFrames = new Map<number, Buffer[]>();

export function takeFrame(bytes: number): Buffer {
  return freeFrames.get(bytes)?.pop() ?? Buffer.allocUnsafe(bytes);
}

export function releaseFrame(buffer: Buffer): void {
  let free = freeFrames.get(buffer.length);
  if (!free) {
    if (freeFrames.size >= 4) freeFrames.clear();
    free = [];
    freeFrames.set(buffer.length, free);
  }
  if (free.length < 4) free.push(buffer);
}

/** One RGBA pixel of the colour (alpha 0..1 as 0..255). */
export function solidPixel(colour: Background): Buffer {
  return Buffer.from([colour.r, colour.g, colour.b, Math.round(colour.alpha * 255)]);
}

/** A width × height raster of one colour (alpha 0..1 as 0..255), in `into` when given. */
export function solidRaster(width: number, height: number, colour: Background, into?: Buffer): Raster {
  const data = into ?? Buffer.allocUnsafe(width * height * 4);
  data.fill(solidPixel(colour));
  return { data, width, height };
}

/** Below this many canvas pixels, flatten() composites in JavaScript. */
const SMALL_CANVAS = 1_500_000;

/** The layers flattened into one raster of width × height. */
export async function flatten(width: number, height: number, layers: readonly Placed[], background: Background = TRANSPARENT): Promise<Raster> {
  if (background.alpha === 0 && width * height <= SMALL_CANVAS) {
    const out: Raster = { data: Buffer.alloc(width * height * 4), width, height };
    for (const layer of layers) paintOver(out, layer.raster, Math.round(layer.left), Math.round(layer.top));
    return out;
  }
  const overlays = clipToCanvas(layers, width, height);
  if (overlays.length === 0 && background.alpha === 0) return { data: Buffer.alloc(width * height * 4), width, height };
  return toRaster(sharp({ create: { width, height, channels: 4, background } }).composite(overlays));
}

/** Rasterises SVG markup at its own width/height (72 dpi: one SVG px per pixel). */
export function svgRaster(svg: string): Promise<Raster> {
  return toRaster(sharp(Buffer.from(svg), OWN_SVG));
}
