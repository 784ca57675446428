import type { Size } from './geometry.js';
import type { Asset, Clip, Fit, Position } from './model.js';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutInput {
  /** The output frame in design pixels. */
  viewport: Size;
  /** The clip's bounding box (clip `width`/`height`); when absent the asset fits the viewport. */
  box?: Size;
  /** The asset's own size in pixels (image/video dimensions, text box, …). */
  source: Size;
  fit: Fit;
  scale?: number;
  position?: Position;
  /** Fractions of the viewport: x right-positive, y up-positive. */
  offset?: { x: number; y: number };
}

export interface Placement {
  /** The clip's element in the viewport (y down): what position/offset place and what rotation turns. */
  box: Rect;
  /** Where the visible part of the asset is drawn (inside `box`). */
  content: Rect;
  /** The part of the source shown, in source pixels (smaller than the source for `crop`). */
  crop: Rect;
}

interface Fitted {
  /** The asset as drawn, relative to the container's top-left. */
  drawn: Rect;
  kx: number;
  ky: number;
}

/**
 * Scales a source into a container: `crop` fills it keeping the aspect ratio (overflow is cut),
 * `cover` stretches to fill it exactly, `contain` fits it whole keeping the aspect ratio, `none`
 * keeps the source's size. The result is centred in the container.
 */
export function fitInto(source: Size, container: Size, fit: Fit): Fitted {
  let kx = 1;
  let ky = 1;
  if (fit === 'cover') {
    kx = container.width / source.width;
    ky = container.height / source.height;
  } else if (fit === 'crop' || fit === 'contain') {
    const pick = fit === 'crop' ? Math.max : Math.min;
    kx = ky = pick(container.width / source.width, container.height / source.height);
  }
  const width = source.width * kx;
  const height = source.height * ky;
  return { drawn: { x: (container.width - width) / 2, y: (container.height - height) / 2, width, height }, kx, ky };
}

function intersect(a: Rect, b: Rect): Rect {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const right = Math.min(a.x + a.width, b.x + b.width);
  const bottom = Math.min(a.y + a.height, b.y + b.height);
  return { x, y, width: Math.max(0, right - x), height: Math.max(0, bottom - y) };
}

/** Top-left of an element of `size` anchored at `position` in the viewport (y down). */
export function anchor(viewport: Size, size: Size, position: Position): { x: number; y: number } {
  const h = position === 'left' || position === 'topLeft' || position === 'bottomLeft' ? 0
    : position === 'right' || position === 'topRight' || position === 'bottomRight' ? 1 : 0.5;
  const v = position === 'top' || position === 'topLeft' || position === 'topRight' ? 0
    : position === 'bottom' || position === 'bottomLeft' || position === 'bottomRight' ? 1 : 0.5;
  return { x: (viewport.width - size.width) * h, y: (viewport.height - size.height) * v };
}

/**
 * Places a clip: fit → scale → position → offset (rotation turns the box about its centre afterwards).
 * With a clip box, the box is the element and the asset is fitted and centred inside it, clipped to it.
 * Without one, the asset is fitted to the viewport and the element is the fitted asset (the viewport
 * for `crop`/`cover`, which cut or stretch to it).
 */
export function layoutClip(input: LayoutInput): Placement {
  const { viewport, source, fit } = input;
  const scale = input.scale ?? 1;
  const container = input.box ?? viewport;
  const { drawn, kx, ky } = fitInto(source, container, fit);
  const clipsToContainer = input.box !== undefined || fit === 'crop' || fit === 'cover';
  const element: Rect = clipsToContainer ? { x: 0, y: 0, width: container.width, height: container.height } : drawn;
  const visible = clipsToContainer ? intersect(drawn, element) : drawn;

  const size = { width: element.width * scale, height: element.height * scale };
  const at = anchor(viewport, size, input.position ?? 'center');
  const box = {
    x: at.x + (input.offset?.x ?? 0) * viewport.width,
    y: at.y - (input.offset?.y ?? 0) * viewport.height,
    ...size,
  };
  return {
    box,
    content: {
      x: box.x + (visible.x - element.x) * scale,
      y: box.y + (visible.y - element.y) * scale,
      width: visible.width * scale,
      height: visible.height * scale,
    },
    crop: { x: (visible.x - drawn.x) / kx, y: (visible.y - drawn.y) / ky, width: visible.width / kx, height: visible.height / ky },
  };
}

/** Scales a rectangle about its centre. */
export function scaleAboutCentre(rect: Rect, factor: number): Rect {
  const width = rect.width * factor;
  const height = rect.height * factor;
  return { x: rect.x + (rect.width - width) / 2, y: rect.y + (rect.height - height) / 2, width, height };
}

const LENGTH = /^\s*([0-9]*\.?[0-9]+)\s*(px)?\s*$/;

/** Size of SVG markup from its root `width`/`height` (px or unitless), else its `viewBox`. */
export function svgSize(markup: string): Size | undefined {
  const root = /<svg\b([^>]*)>/i.exec(markup)?.[1];
  if (root === undefined) return undefined;
  const attribute = (name: string) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(root)?.[1];
  const width = LENGTH.exec(attribute('width') ?? '')?.[1];
  const height = LENGTH.exec(attribute('height') ?? '')?.[1];
  if (width && height && Number(width) > 0 && Number(height) > 0) return { width: Number(width), height: Number(height) };
  const box = (attribute('viewBox') ?? '').trim().split(/[\s,]+/).map(Number);
  const [, , w, h] = box;
  return box.length === 4 && w !== undefined && h !== undefined && w > 0 && h > 0 ? { width: w, height: h } : undefined;
}

/**
 * The size an asset is laid out at. Image, video and luma need their probed `media` size (undefined
 * without it); SVG markup gives its own; text and html use their asset box, else the clip box, else
 * the viewport; shapes their box or the viewport; title, rich-text and captions the clip box or the
 * viewport. Audio has no size.
 */
export function intrinsicSize(asset: Asset, clip: Pick<Clip, 'width' | 'height'>, viewport: Size, media?: Size): Size | undefined {
  const clipBox = { width: clip.width ?? viewport.width, height: clip.height ?? viewport.height };
  switch (asset.type) {
    case 'image':
    case 'video':
    case 'luma':
      return media;
    case 'svg':
      return svgSize(asset.src) ?? media ?? clipBox;
    case 'text':
    case 'html':
      return { width: asset.width ?? clipBox.width, height: asset.height ?? clipBox.height };
    case 'shape':
      return { width: asset.width ?? viewport.width, height: asset.height ?? viewport.height };
    case 'title':
    case 'rich-text':
    case 'caption':
      return clipBox;
    case 'audio':
      return undefined;
  }
}

/** The clip's bounding box when it sets one (a missing side takes the viewport's). */
export function clipBox(clip: Pick<Clip, 'width' | 'height'>, viewport: Size): Size | undefined {
  if (clip.width === undefined && clip.height === undefined) return undefined;
  return { width: clip.width ?? viewport.width, height: clip.height ?? viewport.height };
}
