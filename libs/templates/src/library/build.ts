import type { JsonValue } from '#libs/edit-spec';
import type { FieldConfig, FieldDefinition, FieldType } from '../fields.js';

/**
 * The pictures the library's templates use: assets of the stock library (libs/assets/src/stock.ts,
 * copies of libs/templates/seed/media), named by id in edits and field defaults, so no URL is stored.
 */
export const STOCK_PICTURES = [
  'bg-aurora', 'bg-sunset-waves', 'bg-mesh-dark', 'product-mug', 'avatar-portrait', 'logo-mark', 'photo-mountains', 'photo-city', 'photo-beach', 'seal-gold',
] as const;
export type StockPicture = (typeof STOCK_PICTURES)[number];

/** A stock picture's asset id: `ast_lib_<slug>` with `-` as `_` (libs/assets `stockAssetId`). */
export function stock(slug: StockPicture): string {
  return `ast_lib_${slug.replace(/-/g, '_')}`;
}

export type Obj = { [key: string]: JsonValue };

export interface View {
  width: number;
  height: number;
}

/** A rectangle in viewport pixels, from the top-left corner. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Timing {
  start?: number;
  length?: number;
  transition?: { in?: string; out?: string };
  effect?: string;
  opacity?: JsonValue;
  scale?: JsonValue;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/** Clip placement of a box: anchored top-left, moved by offsets in viewport fractions (y up). */
export function at(view: View, box: Pick<Box, 'x' | 'y'>): Obj {
  return { position: 'topLeft', offset: { x: round(box.x / view.width), y: round(-box.y / view.height) } };
}

function timing(t: Timing): Obj {
  const out: Obj = { start: t.start ?? 0, length: t.length ?? 5 };
  if (t.transition) out.transition = t.transition as Obj;
  if (t.effect) out.effect = t.effect;
  if (t.opacity !== undefined) out.opacity = t.opacity;
  if (t.scale !== undefined) out.scale = t.scale;
  return out;
}

export interface TextStyle {
  family?: string;
  size: number;
  weight?: number;
  color?: string;
  lineHeight?: number;
  letterSpacing?: number;
  transform?: 'uppercase' | 'lowercase' | 'capitalize';
  decoration?: 'underline' | 'line-through';
  align?: 'left' | 'center' | 'right';
  valign?: 'top' | 'middle' | 'bottom';
  background?: { color: string; borderRadius?: number; opacity?: number };
  padding?: number | { top: number; right: number; bottom: number; left: number };
  shadow?: { offsetX?: number; offsetY?: number; blur: number; color?: string; opacity?: number };
  border?: { width: number; color: string; radius?: number; opacity?: number };
  animation?: { preset: string; duration?: number; direction?: string; style?: string };
}

/** A rich-text clip laid out in `box`. */
export function richText(view: View, box: Box, text: string, s: TextStyle, t: Timing = {}): Obj {
  const style: Obj = {};
  if (s.lineHeight !== undefined) style.lineHeight = s.lineHeight;
  if (s.letterSpacing !== undefined) style.letterSpacing = s.letterSpacing;
  if (s.transform) style.textTransform = s.transform;
  if (s.decoration) style.textDecoration = s.decoration;
  const asset: Obj = {
    type: 'rich-text',
    text,
    font: { family: s.family ?? 'Open Sans', size: s.size, weight: s.weight ?? 400, color: s.color ?? '#ffffff' },
    align: { horizontal: s.align ?? 'left', vertical: s.valign ?? 'top' },
  };
  if (Object.keys(style).length) asset.style = style;
  if (s.background) asset.background = s.background as Obj;
  if (s.padding !== undefined) asset.padding = s.padding as JsonValue;
  if (s.shadow) asset.shadow = s.shadow as Obj;
  if (s.border) asset.border = s.border as Obj;
  if (s.animation) asset.animation = s.animation as Obj;
  return { asset, width: box.w, height: box.h, ...at(view, box), ...timing(t) };
}

/** An image clip; without a box it fills the frame (fit crop). */
export function image(view: View, src: string, box: Box | null, fit: 'crop' | 'contain' | 'cover' = 'crop', t: Timing = {}): Obj {
  const place = box ? { width: box.w, height: box.h, ...at(view, box) } : {};
  return { asset: { type: 'image', src }, fit, ...place, ...timing(t) };
}

/** A filled rectangle. */
export function rect(view: View, box: Box, color: string, o: { radius?: number; opacity?: number } = {}, t: Timing = {}): Obj {
  const fill: Obj = { color };
  if (o.opacity !== undefined) fill.opacity = o.opacity;
  return {
    asset: { type: 'shape', shape: 'rectangle', width: box.w, height: box.h, rectangle: { width: box.w, height: box.h, cornerRadius: o.radius ?? 0 }, fill },
    ...at(view, box),
    ...timing(t),
  };
}

/** A filled circle of `radius` centred on (cx, cy). */
export function circle(view: View, cx: number, cy: number, radius: number, color: string, opacity?: number, t: Timing = {}): Obj {
  const fill: Obj = { color };
  if (opacity !== undefined) fill.opacity = opacity;
  const size = radius * 2;
  return {
    asset: { type: 'shape', shape: 'circle', width: size, height: size, circle: { radius }, fill },
    ...at(view, { x: cx - radius, y: cy - radius }),
    ...timing(t),
  };
}

/** Inline SVG markup covering the whole frame (its own width and height are the viewport's). */
export function svgLayer(markup: string, t: Timing = {}): Obj {
  return { asset: { type: 'svg', src: markup }, ...timing(t) };
}

/**
 * A fade to a colour as inline SVG, darkest toward `toward` (`down`: the bottom): the scrim that keeps
 * text readable over pictures. `from`/`to` are where the fade starts and ends along that direction.
 */
export function scrim(view: View, o: { toward: 'down' | 'up' | 'left' | 'right'; from: number; to: number; opacity: number; color?: string }): string {
  const [x1, y1, x2, y2] = { down: [0, 0, 0, 1], up: [0, 1, 0, 0], right: [0, 0, 1, 0], left: [1, 0, 0, 0] }[o.toward];
  const c = o.color ?? '#000000';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${view.width}" height="${view.height}" viewBox="0 0 ${view.width} ${view.height}">`
    + `<defs><linearGradient id="s" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}"><stop offset="${o.from}" stop-color="${c}" stop-opacity="0"/>`
    + `<stop offset="${o.to}" stop-color="${c}" stop-opacity="${o.opacity}"/></linearGradient></defs>`
    + `<rect width="${view.width}" height="${view.height}" fill="url(#s)"/></svg>`;
}

export function track(...clips: Obj[]): Obj {
  return { clips };
}

// --- fields -------------------------------------------------------------------------------------

interface FieldOptions {
  group?: string;
  required?: boolean;
  placeholder?: string;
  config?: FieldConfig;
}

function field(type: FieldType, key: string, label: string, defaultValue: JsonValue, o: FieldOptions, group: string): FieldDefinition {
  return {
    key, label, type, group: o.group ?? group, required: o.required ?? false, defaultValue,
    ...(o.placeholder ? { placeholder: o.placeholder } : {}), config: o.config ?? {},
  };
}

export const f = {
  text: (key: string, label: string, defaultValue: string | null, maxLength: number, o: FieldOptions = {}) =>
    field('text', key, label, defaultValue, { ...o, config: { maxLength, ...o.config } }, 'Text'),
  image: (key: string, label: string, defaultValue: string | null, o: FieldOptions = {}) => field('image', key, label, defaultValue, o, 'Media'),
  color: (key: string, label: string, defaultValue: string, o: FieldOptions = {}) => field('color', key, label, defaultValue, o, 'Style'),
};

