import {
  STILL_FORMATS, type AspectRatio, type Fps, type Output, type OutputFormat, type PageSizeName, type Resolution,
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

/** A PDF's resolution when `output.pdf` gives none: 150 design px an inch, so 1240×1754 is A4. */
export const DEFAULT_PDF_DPI = 150;

/** Named paper sizes in points, portrait (ISO 216 rounded as PDF writers do; US Letter and Legal). */
export const PAGE_POINTS: Readonly<Record<PageSizeName, { width: number; height: number }>> = {
  A3: { width: 842, height: 1191 },
  A4: { width: 595, height: 842 },
  A5: { width: 420, height: 595 },
  Letter: { width: 612, height: 792 },
  Legal: { width: 612, height: 1008 },
};

export interface PdfPageLayout {
  /** The page in points. */
  width: number;
  height: number;
  /** Where the frame sits on the page, in points from the page's top-left corner. */
  frame: { x: number; y: number; width: number; height: number };
  /** Points per design pixel. */
  pointsPerPx: number;
}

/**
 * The page of a PDF output for a frame of `viewport` design pixels: the frame at `output.pdf.dpi`
 * (default 150) design px an inch, page and frame alike; or a fixed `pageSize` (a named paper size,
 * turned to landscape for a landscape frame, or points) with the frame fitted inside it, centred.
 * Device scale and scaleTo change the picture's pixel density, never the page.
 */
export function pdfPageLayout(output: Output, viewport: Size): PdfPageLayout {
  const fixed = output.pdf?.pageSize;
  if (fixed === undefined) {
    const dpi = output.pdf?.dpi ?? DEFAULT_PDF_DPI;
    const k = 72 / dpi;
    const width = (viewport.width * 72) / dpi;
    const height = (viewport.height * 72) / dpi;
    return { width, height, frame: { x: 0, y: 0, width, height }, pointsPerPx: k };
  }
  let page = typeof fixed === 'string' ? PAGE_POINTS[fixed] : fixed;
  if (typeof fixed === 'string' && viewport.width > viewport.height) page = { width: page.height, height: page.width };
  const k = Math.min(page.width / viewport.width, page.height / viewport.height);
  const width = viewport.width * k;
  const height = viewport.height * k;
  return { width: page.width, height: page.height, frame: { x: (page.width - width) / 2, y: (page.height - height) / 2, width, height }, pointsPerPx: k };
}
