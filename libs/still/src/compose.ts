import sharp, * as Sharp from 'sharp';
import { cropRaster, RAW, toRaster, type Raster } from './raster.js';

export interface Placed {
  raster: Raster;
  left: number;
  top: number;
  /** Every pixel has alpha 255 (lets a full-frame bottom layer be the canvas itself). */
  opaque?: boolean;
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

/** The layers flattened into one raster of width × height. */
export async function flatten(width: number, height: number, layers: readonly Placed[], background: Background = TRANSPARENT): Promise<Raster> {
  const overlays = clipToCanvas(layers, width, height);
  if (overlays.length === 0 && background.alpha === 0) return { data: Buffer.alloc(width * height * 4), width, height };
  return toRaster(sharp({ create: { width, height, channels: 4, background } }).composite(overlays));
}

/** Rasterises SVG markup at its own width/height (72 dpi: one SVG px per pixel). */
export function svgRaster(svg: string): Promise<Raster> {
  return toRaster(sharp(Buffer.from(svg), { density: 72 }));
}
