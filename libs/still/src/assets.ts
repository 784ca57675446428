import {
  parseColor, svgSize, type Position, type RichTextAsset, type Rgba, type ShapeAsset, type Size, type TextAsset, type TitleAsset, type TitleSize, type TitleStyle,
} from '#libs/edit-spec';
import { NO_PADDING, type TextBlock, type TextStyle } from './text.js';

/**
 * How text, title and rich-text assets become text blocks, and shapes become SVG. The defaults here
 * are the engine's (docs/edit-spec.md, "Still engine"): text is Open Sans 32 px white, titles use a
 * house face per Shotstack style, sized as a fraction of the frame height.
 */
export const DEFAULT_FAMILY = 'Open Sans';

export interface FontChoice {
  family: string;
  fontFile?: string;
}

const withAlpha = (colour: string, opacity = 1): Rgba => {
  const c = parseColor(colour);
  return { ...c, a: c.a * Math.min(1, Math.max(0, opacity)) };
};

export function textAssetBlock(asset: TextAsset, box: Size, font: FontChoice): TextBlock {
  const f = asset.font;
  const style: TextStyle = {
    ...font,
    size: f.size ?? 32,
    weight: f.weight ?? 400,
    color: withAlpha(f.color ?? '#ffffff', f.opacity ?? 1),
    lineHeight: f.lineHeight ?? 1,
  };
  const padding = asset.background?.padding ?? 0;
  const block: TextBlock = {
    text: asset.text,
    style,
    box,
    padding: { top: padding, right: padding, bottom: padding, left: padding },
    align: asset.alignment,
  };
  if (asset.background?.color) block.background = { color: withAlpha(asset.background.color, asset.background.opacity ?? 1), radius: asset.background.borderRadius ?? 0 };
  if (asset.stroke) block.stroke = { width: asset.stroke.width, color: withAlpha(asset.stroke.color) };
  return block;
}

function transform(text: string, how: NonNullable<RichTextAsset['style']>['textTransform']): string {
  switch (how) {
    case 'uppercase':
      return text.toUpperCase();
    case 'lowercase':
      return text.toLowerCase();
    case 'capitalize':
      return text.replace(/(^|\s)(\p{L})/gu, (_, space: string, letter: string) => space + letter.toUpperCase());
    default:
      return text;
  }
}

export function richTextBlock(asset: RichTextAsset, box: Size, font: FontChoice): TextBlock {
  const s = asset.style ?? {};
  const style: TextStyle = {
    ...font,
    size: asset.font.size,
    weight: asset.font.weight,
    color: withAlpha(asset.font.color, asset.font.opacity),
  };
  if (s.letterSpacing) style.letterSpacing = s.letterSpacing;
  if (s.lineHeight) style.lineHeight = s.lineHeight;
  if (s.textDecoration && s.textDecoration !== 'none') style.decoration = s.textDecoration;
  if (asset.font.background) style.highlight = withAlpha(asset.font.background);
  const block: TextBlock = {
    text: transform(asset.text, s.textTransform),
    style,
    box,
    padding: asset.padding ?? NO_PADDING,
    align: { horizontal: asset.align.horizontal, vertical: asset.align.vertical === 'middle' ? 'center' : asset.align.vertical },
  };
  if (asset.background?.color) block.background = { color: withAlpha(asset.background.color, asset.background.opacity), radius: asset.background.borderRadius };
  if (asset.border) block.border = { width: asset.border.width, color: withAlpha(asset.border.color, asset.border.opacity), radius: asset.border.radius };
  const stroke = asset.stroke ?? asset.font.stroke;
  if (stroke && stroke.width > 0) block.stroke = { width: stroke.width, color: withAlpha(stroke.color, stroke.opacity) };
  if (asset.shadow) {
    block.shadow = { offsetX: asset.shadow.offsetX, offsetY: asset.shadow.offsetY, blur: asset.shadow.blur, color: withAlpha(asset.shadow.color, asset.shadow.opacity) };
  }
  if (s.gradient && s.gradient.stops.length >= 2) {
    block.gradient = { type: s.gradient.type, angle: s.gradient.angle, stops: s.gradient.stops.map((g) => ({ offset: g.offset, color: withAlpha(g.color) })) };
  }
  return block;
}

/** The house face of each Shotstack title style (open-licence families of scripts/font-packages.txt). */
export const TITLE_FACES: Readonly<Record<TitleStyle, { family: string; weight: number; upper?: boolean; spacing?: number; italic?: boolean; plate?: boolean }>> = {
  minimal: { family: 'Open Sans', weight: 400 },
  blockbuster: { family: 'Bebas Neue', weight: 700, upper: true, spacing: 0.04 },
  vogue: { family: 'EB Garamond', weight: 400, upper: true, spacing: 0.18 },
  sketchy: { family: 'Comfortaa', weight: 700 },
  skinny: { family: 'Lato', weight: 300 },
  chunk: { family: 'League Spartan', weight: 900, upper: true },
  chunkLight: { family: 'League Spartan', weight: 600, upper: true },
  marker: { family: 'Lobster Two', weight: 700 },
  future: { family: 'Inter', weight: 200, upper: true, spacing: 0.3 },
  subtitle: { family: 'Open Sans', weight: 600, plate: true },
};

/** Title font size as a fraction of the frame's short side. */
export const TITLE_SIZES_FRACTION: Readonly<Record<TitleSize, number>> = {
  'xx-small': 0.03,
  'x-small': 0.04,
  small: 0.05,
  medium: 0.065,
  large: 0.085,
  'x-large': 0.11,
  'xx-large': 0.14,
};

function titleAlign(position: Position): TextBlock['align'] {
  const horizontal = /left/i.test(position) ? 'left' : /right/i.test(position) ? 'right' : 'center';
  const vertical = /^top/.test(position) ? 'top' : /^bottom/.test(position) ? 'bottom' : 'center';
  return { horizontal, vertical };
}

export function titleFace(asset: TitleAsset) {
  return TITLE_FACES[asset.style ?? 'minimal'];
}

export function titleBlock(asset: TitleAsset, box: Size, viewport: Size): TextBlock {
  const face = titleFace(asset);
  const size = Math.round(TITLE_SIZES_FRACTION[asset.size] * Math.min(viewport.width, viewport.height));
  const margin = Math.round(Math.min(box.width, box.height) * 0.05);
  const style: TextStyle = { family: face.family, size, weight: face.weight, color: withAlpha(asset.color ?? '#ffffff'), lineHeight: 1.1 };
  if (face.spacing) style.letterSpacing = face.spacing * size;
  if (face.italic) style.italic = true;
  const block: TextBlock = {
    text: face.upper ? asset.text.toUpperCase() : asset.text,
    style,
    box,
    padding: { top: margin, right: margin, bottom: margin, left: margin },
    align: titleAlign(asset.position),
    nudge: { x: asset.offset.x * box.width, y: -asset.offset.y * box.height },
  };
  const plate = asset.background ?? (face.plate ? '#99000000' : undefined);
  if (plate) block.plate = { color: withAlpha(plate), padding: Math.round(size * 0.3), radius: Math.round(size * 0.15) };
  return block;
}

/** The families an asset asks for (checked against the render's fonts before anything is drawn). */
export function requestedFamily(asset: TextAsset | RichTextAsset | TitleAsset): string {
  if (asset.type === 'text') return asset.font.family ?? DEFAULT_FAMILY;
  if (asset.type === 'rich-text') return asset.font.family;
  return titleFace(asset).family;
}

const fmt = (n: number) => Math.round(n * 1000) / 1000;

/**
 * A shape's geometry in its box (design px, y down, centred), with its paint: what both the SVG the
 * picture is drawn from (shapeSvg) and a PDF's vector path (pdf.ts) are made of.
 */
export interface ShapeGeometry {
  element: { kind: 'rect'; x: number; y: number; width: number; height: number; radius: number } | { kind: 'circle'; cx: number; cy: number; r: number };
  fill: Rgba;
  stroke?: { color: Rgba; width: number };
}

export function shapeGeometry(asset: ShapeAsset, box: Size): ShapeGeometry {
  const fill = withAlpha(asset.fill?.color ?? '#ffffff', asset.fill?.opacity ?? 1);
  const strokeWidth = asset.stroke?.width ?? 0;
  const stroke = strokeWidth > 0 ? { color: withAlpha(asset.stroke?.color ?? '#000000'), width: strokeWidth } : undefined;
  const cx = box.width / 2;
  const cy = box.height / 2;
  let element: ShapeGeometry['element'];
  if (asset.shape === 'rectangle') {
    const { width: w, height: h, cornerRadius } = asset.rectangle;
    element = { kind: 'rect', x: cx - w / 2, y: cy - h / 2, width: w, height: h, radius: cornerRadius };
  } else if (asset.shape === 'circle') {
    element = { kind: 'circle', cx, cy, r: asset.circle.radius };
  } else {
    const { length, thickness } = asset.line;
    element = { kind: 'rect', x: cx - length / 2, y: cy - thickness / 2, width: length, height: thickness, radius: 0 };
  }
  return { element, fill, ...(stroke ? { stroke } : {}) };
}

/** A shape as SVG at `scale` output pixels per design pixel, centred in its box. */
export function shapeSvg(asset: ShapeAsset, box: Size, scale: number): string {
  const width = Math.max(1, Math.round(box.width * scale));
  const height = Math.max(1, Math.round(box.height * scale));
  const { element: e, fill, stroke } = shapeGeometry(asset, box);
  const paint = [
    `fill="rgb(${fill.r},${fill.g},${fill.b})" fill-opacity="${fmt(fill.a)}"`,
    stroke ? `stroke="rgb(${stroke.color.r},${stroke.color.g},${stroke.color.b})" stroke-opacity="${fmt(stroke.color.a)}" stroke-width="${fmt(stroke.width)}"` : '',
  ].join(' ');
  const element = e.kind === 'circle'
    ? `<circle cx="${fmt(e.cx)}" cy="${fmt(e.cy)}" r="${fmt(e.r)}" ${paint}/>`
    : `<rect x="${fmt(e.x)}" y="${fmt(e.y)}" width="${fmt(e.width)}" height="${fmt(e.height)}"${e.radius ? ` rx="${fmt(e.radius)}" ry="${fmt(e.radius)}"` : ''} ${paint}/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${fmt(box.width)} ${fmt(box.height)}">${element}</svg>`;
}

export { svgSize };
