import {
  STILL_FORMATS, type AspectRatio, type Fps, type Output, type OutputFormat, type Resolution,
} from './model.js';

export interface Size {
  width: number;
  height: number;
}

/** The short side of each preset: 16:9 gives preview 512×288 … 4k 3840×2160. */
export const RESOLUTION_SHORT_SIDE: Readonly<Record<Resolution, number>> = {
  preview: 288,
  mobile: 360,
  sd: 576,
  hd: 720,
  fhd: 1080,
  '4k': 2160,
};

const RATIO: Readonly<Record<AspectRatio, readonly [number, number]>> = {
  '16:9': [16, 9],
  '9:16': [9, 16],
  '1:1': [1, 1],
  '4:5': [4, 5],
  '4:3': [4, 3],
};

/** Shotstack defaults when the output names neither a size nor a resolution. */
export const DEFAULT_RESOLUTION: Resolution = 'sd';
export const DEFAULT_ASPECT_RATIO: AspectRatio = '16:9';
export const DEFAULT_FPS: Fps = 25;

/**
 * Pixel size of a preset in an aspect ratio: the preset fixes the short side, the ratio the long one
 * (hd: 16:9 → 1280×720, 9:16 → 720×1280, 1:1 → 720×720, 4:5 → 720×900, 4:3 → 960×720).
 */
export function presetSize(resolution: Resolution, aspectRatio: AspectRatio = DEFAULT_ASPECT_RATIO): Size {
  const short = RESOLUTION_SHORT_SIDE[resolution];
  const [w, h] = RATIO[aspectRatio];
  return w >= h ? { width: Math.round((short * w) / h), height: short } : { width: short, height: Math.round((short * h) / w) };
}

export function isStillFormat(format: OutputFormat): boolean {
  return STILL_FORMATS.includes(format);
}

export function outputKind(format: OutputFormat): 'image' | 'video' {
  return isStillFormat(format) ? 'image' : 'video';
}

export function outputFps(output: Output): Fps {
  return output.fps ?? DEFAULT_FPS;
}

export interface OutputSizeOptions {
  /** Device scale factor for stills, 1 to 3 (contract §4.1); ignored for video formats. */
  scale?: number;
}

export interface OutputSize extends Size {
  /** The design viewport the layout is computed in (size, or resolution + aspectRatio). */
  viewport: Size;
  /** Output pixels per viewport pixel (scaleTo × device scale). */
  pixelRatio: number;
}

function roundEven(n: number): number {
  return Math.max(2, Math.round(n / 2) * 2);
}

/**
 * The output's pixel size. The viewport is `size` when given (it wins over resolution and
 * aspectRatio), else the preset `resolution` (default sd) in `aspectRatio` (default 16:9). `scaleTo`
 * then rescales the whole frame so its short side is that preset's, and a still's device `scale`
 * multiplies it. Video formats (mp4, gif) are rounded to even dimensions, as encoders need.
 */
export function outputSize(output: Output, opts: OutputSizeOptions = {}): OutputSize {
  const viewport = output.size ?? presetSize(output.resolution ?? DEFAULT_RESOLUTION, output.aspectRatio ?? DEFAULT_ASPECT_RATIO);
  const scaleTo = output.scaleTo ? RESOLUTION_SHORT_SIDE[output.scaleTo] / Math.min(viewport.width, viewport.height) : 1;
  const still = isStillFormat(output.format);
  const device = still ? Math.min(3, Math.max(1, opts.scale ?? 1)) : 1;
  const pixelRatio = scaleTo * device;
  const width = viewport.width * pixelRatio;
  const height = viewport.height * pixelRatio;
  return {
    width: still ? Math.max(1, Math.round(width)) : roundEven(width),
    height: still ? Math.max(1, Math.round(height)) : roundEven(height),
    viewport,
    pixelRatio,
  };
}

/** Relative tolerance of an aspect-ratio rule (2 %: a 1080×1080 crop of a 1:1 field passes, 1080×1000 does not). */
export const ASPECT_TOLERANCE = 0.02;

/** Why a picture of `size` breaks an aspect ratio `W:H` (a message), or null when it fits. */
export function aspectMismatch(aspectRatio: string, size: Size): string | null {
  const [w, h] = aspectRatio.split(':').map(Number);
  if (!w || !h || size.width <= 0 || size.height <= 0) return null;
  const want = w / h;
  const got = size.width / size.height;
  return Math.abs(got - want) / want <= ASPECT_TOLERANCE ? null : `must be an image of aspect ratio ${aspectRatio}, got ${size.width}×${size.height}`;
}
