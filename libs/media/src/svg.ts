import { AssetRejected } from './rejected.js';
import { isXmlChar, xmlTokens, type XmlAttr } from './xml.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';

/** Elements kept (by local name, case-sensitive: `<Script>` or `<SCRIPT>` is not on the list); any other is dropped with its content. */
const ELEMENTS = new Set([
  'svg', 'g', 'defs', 'symbol', 'use', 'image', 'switch', 'a', 'view', 'title', 'desc', 'metadata', 'style',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'text', 'tspan', 'textPath',
  'linearGradient', 'radialGradient', 'stop', 'pattern', 'clipPath', 'mask', 'marker',
  'filter', 'feBlend', 'feColorMatrix', 'feComponentTransfer', 'feComposite', 'feConvolveMatrix', 'feDiffuseLighting',
  'feDisplacementMap', 'feDistantLight', 'feDropShadow', 'feFlood', 'feFuncA', 'feFuncB', 'feFuncG', 'feFuncR',
  'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode', 'feMorphology', 'feOffset', 'fePointLight',
  'feSpecularLighting', 'feSpotLight', 'feTile', 'feTurbulence',
  'animate', 'animateMotion', 'animateTransform', 'set', 'mpath',
]);
const ANIMATIONS = new Set(['animate', 'animateMotion', 'animateTransform', 'set']);

/** Attributes kept (case-sensitive, as SVG spells them), besides `data-*` and `aria-*`. No event handler is on it. */
const ATTRIBUTES = new Set([
  // core, geometry, structure
  'id', 'class', 'style', 'lang', 'tabindex', 'role', 'xml:space', 'xml:lang', 'href', 'xlink:href',
  'width', 'height', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'rx', 'ry', 'fx', 'fy', 'fr', 'd', 'points',
  'pathLength', 'transform', 'transform-origin', 'viewBox', 'preserveAspectRatio', 'version', 'baseProfile',
  'requiredFeatures', 'requiredExtensions', 'systemLanguage', 'type', 'media',
  // presentation
  'alignment-baseline', 'baseline-shift', 'clip', 'clip-path', 'clip-rule', 'color', 'color-interpolation',
  'color-interpolation-filters', 'color-rendering', 'cursor', 'direction', 'display', 'dominant-baseline',
  'enable-background', 'fill', 'fill-opacity', 'fill-rule', 'filter', 'flood-color', 'flood-opacity', 'font',
  'font-family', 'font-size', 'font-size-adjust', 'font-stretch', 'font-style', 'font-variant', 'font-weight',
  'glyph-orientation-horizontal', 'glyph-orientation-vertical', 'image-rendering', 'isolation', 'kerning',
  'letter-spacing', 'lighting-color', 'marker', 'marker-end', 'marker-mid', 'marker-start', 'mask', 'mask-type',
  'mix-blend-mode', 'opacity', 'overflow', 'paint-order', 'pointer-events', 'shape-rendering', 'stop-color',
  'stop-opacity', 'stroke', 'stroke-dasharray', 'stroke-dashoffset', 'stroke-linecap', 'stroke-linejoin',
  'stroke-miterlimit', 'stroke-opacity', 'stroke-width', 'text-anchor', 'text-decoration', 'text-rendering',
  'unicode-bidi', 'vector-effect', 'visibility', 'word-spacing', 'writing-mode',
  // gradients, patterns, clips, masks, markers
  'gradientUnits', 'gradientTransform', 'spreadMethod', 'offset', 'patternUnits', 'patternContentUnits',
  'patternTransform', 'clipPathUnits', 'maskUnits', 'maskContentUnits', 'markerUnits', 'markerWidth',
  'markerHeight', 'refX', 'refY', 'orient',
  // text
  'dx', 'dy', 'rotate', 'textLength', 'lengthAdjust', 'startOffset', 'method', 'spacing', 'side',
  // filters
  'filterUnits', 'primitiveUnits', 'in', 'in2', 'result', 'mode', 'values', 'operator', 'k1', 'k2', 'k3', 'k4',
  'stdDeviation', 'edgeMode', 'kernelMatrix', 'kernelUnitLength', 'order', 'divisor', 'bias', 'targetX', 'targetY',
  'preserveAlpha', 'surfaceScale', 'diffuseConstant', 'specularConstant', 'specularExponent', 'scale',
  'xChannelSelector', 'yChannelSelector', 'azimuth', 'elevation', 'pointsAtX', 'pointsAtY', 'pointsAtZ',
  'limitingConeAngle', 'z', 'radius', 'baseFrequency', 'numOctaves', 'seed', 'stitchTiles', 'tableValues',
  'slope', 'intercept', 'amplitude', 'exponent',
  // animation (SMIL)
  'attributeName', 'attributeType', 'begin', 'dur', 'end', 'min', 'max', 'restart', 'repeatCount', 'repeatDur',
  'calcMode', 'keyTimes', 'keySplines', 'keyPoints', 'from', 'to', 'by', 'additive', 'accumulate', 'path',
]);
/** Attributes an animation may not drive: links and styles would bring back what the rules below took out. */
const NOT_ANIMATED = new Set(['href', 'xlink:href', 'style']);

/** Allowed link targets: a fragment of this document, or an inline raster picture. */
function isSafeHref(value: string): boolean {
  const v = value.trim();
  return v.startsWith('#') || /^data:image\/(png|jpeg|gif|webp)[;,]/i.test(v);
}

/** CSS that can load or run something past url() checks: escapes (which can spell `url`), image-set() and friends. */
const UNSAFE_CSS = /\\|(?<![\w-])(?:-[a-z]+-)?(?:image-set|image|cross-fade|element|expression|attr|src)\s*\(/i;
/** A url() (closed or not: CSS closes it at the end) whose target is not a `#fragment` of this document. */
const EXTERNAL_URL = /url\s*\((?!\s*["']?\s*#)/i;
const CSS_URL = /url\s*\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*))\s*\)/gi;

/**
 * CSS with every reference outside the document removed: `@import` rules go, a url() that is not a
 * `#fragment` becomes `none`; CSS that could hide a reference from these rules becomes empty.
 */
export function sanitizeCss(css: string): string {
  let text = css.replace(/\/\*[\s\S]*?(\*\/|$)/g, '');
  if (UNSAFE_CSS.test(text)) return '';
  // Removing one rule can join the text around it into another, hence the loop.
  while (/@import/i.test(text)) text = text.replace(/@import[^;]*;?/gi, '');
  text = text.replace(CSS_URL, (whole, a?: string, b?: string, c?: string) => ((a ?? b ?? c ?? '').trim().startsWith('#') ? whole : 'none'));
  return EXTERNAL_URL.test(text) ? '' : text;
}

/** An attribute value that is safe to keep outside href and style: no url() leaving the document, nothing CSS could decode into one. */
function isSafeValue(value: string): boolean {
  return !UNSAFE_CSS.test(value) && !EXTERNAL_URL.test(value);
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/** The attributes kept on an element, in order, each once. */
function keptAttributes(attrs: readonly XmlAttr[]): XmlAttr[] {
  const out: XmlAttr[] = [];
  const seen = new Set<string>();
  for (const { name, value } of attrs) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (/^on/i.test(name) || !(ATTRIBUTES.has(name) || /^(data|aria)-[a-z0-9_.-]+$/.test(name))) continue;
    if (name === 'href' || name === 'xlink:href') {
      if (isSafeHref(value)) out.push({ name, value: value.trim() });
    } else if (name === 'style') {
      const css = sanitizeCss(value).trim();
      if (css) out.push({ name, value: css });
    } else if (isSafeValue(value)) out.push({ name, value });
  }
  return out;
}

/** An animation that would set a link, a style or an unknown attribute is dropped whole. */
function isSafeAnimation(attrs: readonly XmlAttr[]): boolean {
  const target = attrs.find((a) => a.name === 'attributeName')?.value.trim();
  return target === undefined || (ATTRIBUTES.has(target) && !NOT_ANIMATED.has(target));
}

const escapeText = (s: string) => stripInvalid(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;');
function stripInvalid(s: string): string {
  let out = '';
  for (const ch of s) if (isXmlChar(ch.codePointAt(0)!)) out += ch;
  return out;
}

export interface SanitizedSvg {
  svg: string;
  /** Pixels, from the root's width and height (absolute units converted) or its viewBox; null when neither says. */
  width: number | null;
  height: number | null;
}

interface Open {
  name: string;
  /** Dropped with everything inside it. */
  dropped: boolean;
  /** Emitted as `local` (the prefix is dropped: every kept element is SVG in the default namespace). */
  local: string;
  hasContent: boolean;
  /** A `<style>`'s text, sanitised as one piece when it closes (a rule split by a comment or CDATA cannot slip through). */
  css?: string[];
}

/**
 * Rebuilds an SVG document from an allowlist: scripts, foreignObject, event handlers, links outside
 * the document, external references in styles, the DOCTYPE (and so every entity: no XXE, no billion
 * laughs), processing instructions and comments are removed. Throws AssetRejected when the document
 * has no `<svg>` root.
 */
export function sanitizeSvgDocument(source: string): SanitizedSvg {
  const out: string[] = [];
  const stack: Open[] = [];
  let size: { width: number | null; height: number | null } | undefined;
  let closed = false;
  const finishStartTag = () => {
    const top = stack[stack.length - 1];
    if (top && !top.dropped && !top.hasContent) {
      out.push('>');
      top.hasContent = true;
    }
  };
  const close = (open: Open) => {
    if (open.dropped) return;
    const css = open.css ? sanitizeCss(open.css.join('')) : '';
    if (css.trim()) {
      out.push(`>${escapeText(css)}`);
      open.hasContent = true;
    }
    out.push(open.hasContent ? `</${open.local}>` : '/>');
  };
  for (const token of xmlTokens(source.replace(/^\uFEFF/, ''))) {
    if (closed) break;
    if (token.kind === 'open') {
      const local = localName(token.name);
      if (!size) {
        if (local !== 'svg') break;
        size = svgSize(token.attrs);
      }
      const parent = stack[stack.length - 1];
      const dropped = !!parent?.dropped || !!parent?.css || !ELEMENTS.has(local) || (ANIMATIONS.has(local) && !isSafeAnimation(token.attrs));
      if (!dropped) {
        finishStartTag();
        let attrs = keptAttributes(token.attrs).map((a) => ` ${a.name}="${escapeAttr(a.value)}"`).join('');
        if (stack.length === 0) attrs = ` xmlns="${SVG_NS}" xmlns:xlink="${XLINK_NS}"${attrs}`;
        out.push(`<${local}${attrs}`);
      }
      const open: Open = { name: token.name, dropped, local, hasContent: false, ...(local === 'style' && !dropped ? { css: [] } : {}) };
      if (token.selfClosing) close(open);
      else stack.push(open);
      if (stack.length === 0) closed = true;
    } else if (token.kind === 'close') {
      let i = stack.length - 1;
      while (i >= 0 && stack[i]!.name !== token.name) i--;
      if (i < 0) continue;
      while (stack.length > i) close(stack.pop()!);
      if (stack.length === 0) closed = true;
    } else if (token.kind === 'text') {
      const top = stack[stack.length - 1];
      if (!top || top.dropped || !token.text) continue;
      if (top.css) top.css.push(token.text);
      else {
        finishStartTag();
        out.push(escapeText(token.text));
      }
    }
  }
  if (!size) throw new AssetRejected('The file is not an SVG document: its root element is not <svg>');
  while (stack.length) close(stack.pop()!);
  return { svg: out.join(''), ...size };
}

/** The SVG document rebuilt from the allowlist of sanitizeSvgDocument. */
export function sanitizeSvg(svg: string): string {
  return sanitizeSvgDocument(svg).svg;
}

const UNIT_PX: Record<string, number> = { '': 1, px: 1, pt: 4 / 3, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 };

function length(value: string | undefined): number | null {
  const m = value?.trim().match(/^([+]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)(px|pt|pc|in|cm|mm)?$/i);
  if (!m) return null;
  const px = Number(m[1]) * UNIT_PX[(m[2] ?? '').toLowerCase()]!;
  return Number.isFinite(px) && px > 0 ? px : null;
}

/** The root's size in pixels: width and height, else the viewBox (the missing side keeps its aspect ratio). */
function svgSize(attrs: readonly XmlAttr[]): { width: number | null; height: number | null } {
  const get = (name: string) => attrs.find((a) => a.name === name)?.value;
  let width = length(get('width'));
  let height = length(get('height'));
  const box = get('viewBox')?.trim().split(/[\s,]+/).map(Number);
  if (box?.length === 4 && box.every(Number.isFinite) && box[2]! > 0 && box[3]! > 0) {
    const [, , w, h] = box as [number, number, number, number];
    if (width === null && height === null) [width, height] = [w, h];
    else if (width === null) width = (height! * w) / h;
    else if (height === null) height = (width * h) / w;
  }
  const round = (v: number | null) => (v === null ? null : Math.max(1, Math.round(v)));
  return { width: round(width), height: round(height) };
}

/** Whether the leading bytes are an XML document whose root element is `<svg>` (a BOM, declaration, comments and a DOCTYPE may come first). */
export function isSvgHead(head: Buffer): boolean {
  const text = head.toString('utf8').replace(/^\uFEFF/, '');
  if (!/^\s*</.test(text)) return false;
  for (const token of xmlTokens(text)) {
    if (token.kind === 'open') return localName(token.name) === 'svg';
    if (token.kind === 'close' || (token.kind === 'text' && token.text.trim())) return false;
  }
  return false;
}
