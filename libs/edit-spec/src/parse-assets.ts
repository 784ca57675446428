import { ASSET_FIELDS, EDIT_FIELDS } from './keys.js';
import {
  ASSET_TYPES, EASINGS, INTERPOLATIONS, POSITIONS, TITLE_SIZES, TITLE_STYLES, VOLUME_EFFECTS,
  type Animatable, type Asset, type AssetType, type AudioAsset, type CaptionAsset, type Crop, type HtmlAsset,
  type ImageAsset, type LumaAsset, type RichTextAsset, type RichTextStroke, type ShapeAsset,
  type ShapeGeometry, type Stroke, type SvgAsset, type TextAsset, type TitleAsset, type Tween, type VideoAsset,
} from './model.js';
import {
  acceptedAssetId, arr, bool, color, compact, describe, isPlainObject, mediaSrc, num, obj, oneOf, str, url,
  type Fields, type NumberRule, type Reader,
} from './validate.js';

// --- shared readers -----------------------------------------------------------------------------

export const seconds = num({ min: 0 });
export const fraction = num({ min: 0, max: 1 });
export const pixels = num({ min: 1, integer: true });
const playbackSpeed = num({ min: 0, max: 10 });

/** One keyframe segment; `from`/`to` obey the animated property's bounds. */
export function tween(bounds: NumberRule): Reader<Tween> {
  const value = num(bounds);
  return obj(['from', 'to', 'start', 'length', 'interpolation', 'easing'], (f) => {
    const t = {
      from: f.req('from', value),
      to: f.req('to', value),
      start: f.req('start', seconds),
      length: f.req('length', seconds),
      interpolation: f.opt('interpolation', oneOf(INTERPOLATIONS)),
      easing: f.opt('easing', oneOf(EASINGS)),
    };
    if (t.from === undefined || t.to === undefined || t.start === undefined || t.length === undefined) return undefined;
    return compact({ from: t.from, to: t.to, start: t.start, length: t.length, interpolation: t.interpolation, easing: t.easing });
  });
}

/** A number, or an array of tweens (Shotstack keyframes), both within `bounds`. */
export function animatable(bounds: NumberRule = {}): Reader<Animatable> {
  const constant = num(bounds);
  const tweens = arr(tween(bounds), { min: 1 });
  return (value, path, issues) => (Array.isArray(value) ? tweens(value, path, issues) : constant(value, path, issues));
}

/** Positions; the legacy title/html spellings `top-right`, … are accepted and normalised. */
export const position = oneOf(POSITIONS, {
  aliases: { 'top-right': 'topRight', 'bottom-right': 'bottomRight', 'bottom-left': 'bottomLeft', 'top-left': 'topLeft' },
});

const crop = obj<Crop>(['top', 'bottom', 'left', 'right'], (f) => ({
  top: f.def('top', fraction, 0),
  bottom: f.def('bottom', fraction, 0),
  left: f.def('left', fraction, 0),
  right: f.def('right', fraction, 0),
}));

const volume = animatable({ min: 0, max: 1 });

/** `alias://NAME` (names: letters, digits, `_`, `-`). */
export const ALIAS_NAME = /^[A-Za-z0-9_-]+$/;
const ALIAS_REF = /^alias:\/\/([A-Za-z0-9_-]+)$/;

export function aliasTarget(value: string): string | undefined {
  return ALIAS_REF.exec(value)?.[1];
}

// --- media assets -------------------------------------------------------------------------------

const image = obj<ImageAsset>(ASSET_FIELDS.image, (f) => {
  const src = f.req('src', mediaSrc);
  const c = f.opt('crop', crop);
  return src === undefined ? undefined : compact<ImageAsset>({ type: 'image', src, crop: c });
});

const video = obj<VideoAsset>(
  ASSET_FIELDS.video,
  (f) => {
    const src = f.req('src', mediaSrc);
    const asset = compact<VideoAsset>({
      type: 'video',
      src: src ?? '',
      trim: f.def('trim', seconds, 0),
      volume: f.def('volume', volume, 1),
      volumeEffect: f.def('volumeEffect', oneOf(VOLUME_EFFECTS), 'none'),
      speed: f.def('speed', playbackSpeed, 1),
      crop: f.opt('crop', crop),
      chromaKey: f.opt(
        'chromaKey',
        obj(['color', 'threshold', 'halo'], (k) => {
          const c = k.req('color', color);
          return c === undefined ? undefined : compact({ color: c, threshold: k.opt('threshold', num({ min: 0 })), halo: k.opt('halo', num({ min: 0 })) });
        }),
      ),
      transcode: f.opt('transcode', bool),
    });
    return src === undefined ? undefined : asset;
  },
);

const audio = obj<AudioAsset>(ASSET_FIELDS.audio, (f) => {
  const src = f.req('src', mediaSrc);
  const asset: AudioAsset = {
    type: 'audio',
    src: src ?? '',
    trim: f.def('trim', seconds, 0),
    volume: f.def('volume', volume, 1),
    speed: f.def('speed', playbackSpeed, 1),
    effect: f.def('effect', oneOf(VOLUME_EFFECTS), 'none'),
  };
  return src === undefined ? undefined : asset;
});

const luma = obj<LumaAsset>(ASSET_FIELDS.luma, (f) => {
  const src = f.req('src', mediaSrc);
  const trim = f.def('trim', seconds, 0);
  return src === undefined ? undefined : { type: 'luma', src, trim };
});

// --- text assets --------------------------------------------------------------------------------

const stroke = obj<Stroke>(['width', 'color'], (f) => ({ width: f.def('width', num({ min: 0, max: 10 }), 0), color: f.def('color', color, '#000000') }));

const text = obj<TextAsset>(
  ASSET_FIELDS.text,
  (f) => {
    const content = f.req('text', str());
    const font: TextAsset['font'] = f.opt(
      'font',
      obj(EDIT_FIELDS.textFont, (o) =>
        compact({
          family: o.opt('family', str({ min: 1 })),
          color: o.opt('color', color),
          opacity: o.opt('opacity', fraction),
          size: o.opt('size', pixels),
          weight: o.opt('weight', num({ min: 100, max: 900, integer: true })),
          lineHeight: o.opt('lineHeight', num({ above: 0 })),
        }),
      ),
    ) ?? {};
    const asset = compact<TextAsset>({
      type: 'text',
      text: content ?? '',
      width: f.opt('width', pixels),
      height: f.opt('height', pixels),
      font,
      background: f.opt(
        'background',
        obj(['color', 'opacity', 'padding', 'borderRadius'], (o) =>
          compact({
            color: o.opt('color', color),
            opacity: o.opt('opacity', fraction),
            padding: o.opt('padding', num({ min: 0, max: 100 })),
            borderRadius: o.opt('borderRadius', num({ min: 0 })),
          }),
        ),
      ),
      alignment: f.def(
        'alignment',
        obj(['horizontal', 'vertical'], (o) => ({
          horizontal: o.def('horizontal', oneOf(['left', 'center', 'right']), 'center'),
          vertical: o.def('vertical', oneOf(['top', 'center', 'bottom']), 'center'),
        })),
        { horizontal: 'center', vertical: 'center' },
      ),
      stroke: f.opt('stroke', stroke),
      animation: f.opt(
        'animation',
        obj(['preset', 'duration'], (o) => {
          const preset = o.req('preset', oneOf(['typewriter']));
          return preset === undefined ? undefined : compact({ preset, duration: o.opt('duration', num({ min: 0.1, max: 30 })) });
        }),
      ),
      ellipsis: f.opt('ellipsis', str()),
    });
    return content === undefined ? undefined : asset;
  },
);

const title = obj<TitleAsset>(ASSET_FIELDS.title, (f) => {
  const content = f.req('text', str());
  const offsetValue = num({ min: -10, max: 10 });
  const asset = compact<TitleAsset>({
    type: 'title',
    text: content ?? '',
    style: f.opt('style', oneOf(TITLE_STYLES)),
    color: f.opt('color', color),
    size: f.def('size', oneOf(TITLE_SIZES), 'medium'),
    background: f.opt('background', color),
    position: f.def('position', position, 'center'),
    offset: f.def('offset', obj(['x', 'y'], (o) => ({ x: o.def('x', offsetValue, 0), y: o.def('y', offsetValue, 0) })), { x: 0, y: 0 }),
  });
  return content === undefined ? undefined : asset;
});

const html = obj<HtmlAsset>(ASSET_FIELDS.html, (f) => {
  const markup = f.req('html', str());
  const asset = compact<HtmlAsset>({
    type: 'html',
    html: markup ?? '',
    css: f.def('css', str(), ''),
    width: f.opt('width', pixels),
    height: f.opt('height', pixels),
    background: f.opt('background', color),
    position: f.def('position', position, 'center'),
  });
  return markup === undefined ? undefined : asset;
});

const richStroke = obj<RichTextStroke>(['width', 'color', 'opacity'], (f) => ({
  width: f.def('width', num({ min: 0 }), 0),
  color: f.def('color', color, '#000000'),
  opacity: f.def('opacity', fraction, 1),
}));

const WEIGHT_WORDS: Readonly<Record<string, number>> = { normal: 400, bold: 700, lighter: 300, bolder: 800 };

/** 100..900 as a number or string, or `normal`/`bold`/`lighter`/`bolder`; normalised to a number. */
const fontWeight: Reader<number> = (value, path, issues) => {
  if (typeof value === 'string' && Object.hasOwn(WEIGHT_WORDS, value.trim().toLowerCase())) return WEIGHT_WORDS[value.trim().toLowerCase()];
  return num({ min: 1, max: 1000 })(value, path, issues);
};

const richAlign = obj<RichTextAsset['align']>(['horizontal', 'vertical'], (f) => ({
  horizontal: f.def('horizontal', oneOf(['left', 'center', 'right']), 'center'),
  vertical: f.def('vertical', oneOf(['top', 'middle', 'bottom']), 'middle'),
}));

const sidePadding = num({ min: 0 });
const padding: Reader<NonNullable<RichTextAsset['padding']>> = (value, path, issues) => {
  if (!isPlainObject(value)) {
    const all = sidePadding(value, path, issues);
    return all === undefined ? undefined : { top: all, right: all, bottom: all, left: all };
  }
  return obj(['top', 'right', 'bottom', 'left'], (f) => ({
    top: f.def('top', sidePadding, 0),
    right: f.def('right', sidePadding, 0),
    bottom: f.def('bottom', sidePadding, 0),
    left: f.def('left', sidePadding, 0),
  }))(value, path, issues);
};

function richFont(f: Fields): RichTextAsset['font'] {
  const defaults: RichTextAsset['font'] = { family: 'Open Sans', size: 24, weight: 400, color: '#ffffff', opacity: 1 };
  return (
    f.opt(
      'font',
      obj(['family', 'size', 'weight', 'color', 'opacity', 'background', 'stroke'], (o) =>
        compact({
          family: o.def('family', str({ min: 1 }), defaults.family),
          size: o.def('size', num({ min: 1, max: 500 }), defaults.size),
          weight: o.def('weight', fontWeight, defaults.weight),
          color: o.def('color', color, defaults.color),
          opacity: o.def('opacity', fraction, defaults.opacity),
          background: o.opt('background', color),
          stroke: o.opt('stroke', richStroke),
        }),
      ),
    ) ?? defaults
  );
}

const richStyle = obj<NonNullable<RichTextAsset['style']>>(
  ['letterSpacing', 'wordSpacing', 'lineHeight', 'textTransform', 'textDecoration', 'gradient'],
  (f) =>
    compact({
      letterSpacing: f.opt('letterSpacing', num()),
      wordSpacing: f.opt('wordSpacing', num({ min: 0 })),
      lineHeight: f.opt('lineHeight', num({ min: 0, max: 10 })),
      textTransform: f.opt('textTransform', oneOf(['none', 'uppercase', 'lowercase', 'capitalize'])),
      textDecoration: f.opt('textDecoration', oneOf(['none', 'underline', 'line-through'])),
      gradient: f.opt(
        'gradient',
        obj(['type', 'angle', 'stops'], (g) => {
          const stops = g.req('stops', arr(obj(['offset', 'color'], (s) => {
            const offset = s.req('offset', fraction);
            const c = s.req('color', color);
            return offset === undefined || c === undefined ? undefined : { offset, color: c };
          }), { min: 2 }));
          const gradient = {
            type: g.def('type', oneOf(['linear', 'radial']), 'linear'),
            angle: g.def('angle', num({ min: 0, max: 360 }), 0),
          };
          return stops === undefined ? undefined : { ...gradient, stops };
        }),
      ),
    }),
);

const richText = obj<RichTextAsset>(
  ASSET_FIELDS['rich-text'],
  (f) => {
    const content = f.req('text', str({ max: 5000 }));
    const align = f.opt('align', richAlign);
    const alignment = f.opt('alignment', richAlign);
    const asset = compact<RichTextAsset>({
      type: 'rich-text',
      text: content ?? '',
      font: richFont(f),
      style: f.opt('style', richStyle),
      stroke: f.opt('stroke', richStroke),
      shadow: f.opt(
        'shadow',
        obj(['offsetX', 'offsetY', 'blur', 'color', 'opacity'], (o) => ({
          offsetX: o.def('offsetX', num(), 0),
          offsetY: o.def('offsetY', num(), 0),
          blur: o.def('blur', num({ min: 0 }), 0),
          color: o.def('color', color, '#000000'),
          opacity: o.def('opacity', fraction, 0.5),
        })),
      ),
      background: f.opt(
        'background',
        obj(['color', 'opacity', 'borderRadius'], (o) =>
          compact({ color: o.opt('color', color), opacity: o.def('opacity', fraction, 1), borderRadius: o.def('borderRadius', num({ min: 0 }), 0) }),
        ),
      ),
      border: f.opt(
        'border',
        obj(['width', 'color', 'opacity', 'radius'], (o) => ({
          width: o.def('width', num({ min: 0 }), 0),
          color: o.def('color', color, '#000000'),
          opacity: o.def('opacity', fraction, 1),
          radius: o.def('radius', num({ min: 0 }), 0),
        })),
      ),
      padding: f.opt('padding', padding),
      // Shotstack: `alignment` is an alias of `align`; `align` wins when both are given.
      align: align ?? alignment ?? { horizontal: 'center', vertical: 'middle' },
      animation: f.opt(
        'animation',
        obj(['preset', 'duration', 'style', 'direction'], (o) => {
          const preset = o.req('preset', oneOf(['fadeIn', 'slideIn', 'typewriter', 'ascend', 'shift', 'movingLetters']));
          const rest = {
            duration: o.opt('duration', num({ min: 0.1, max: 30 })),
            style: o.opt('style', oneOf(['character', 'word'])),
            direction: o.opt('direction', oneOf(['left', 'right', 'up', 'down'])),
          };
          return preset === undefined ? undefined : compact({ preset, ...rest });
        }),
      ),
    });
    return content === undefined ? undefined : asset;
  },
);

// --- shapes, svg, captions ----------------------------------------------------------------------

const shape = obj<ShapeAsset>(ASSET_FIELDS.shape, (f) => {
  const kind = f.req('shape', oneOf(['rectangle', 'circle', 'line']));
  const common = compact({
    type: 'shape' as const,
    width: f.opt('width', pixels),
    height: f.opt('height', pixels),
    fill: f.opt('fill', obj(['color', 'opacity'], (o) => compact({ color: o.opt('color', color), opacity: o.opt('opacity', fraction) }))),
    stroke: f.opt('stroke', obj(['color', 'width'], (o) => compact({ color: o.opt('color', color), width: o.opt('width', num({ min: 0 })) }))),
  });
  const size = num({ min: 0 });
  let geometry: ShapeGeometry | undefined;
  if (kind === 'rectangle') {
    const r = f.req('rectangle', obj(['width', 'height', 'cornerRadius'], (o) => {
      const width = o.req('width', size);
      const height = o.req('height', size);
      const cornerRadius = o.def('cornerRadius', size, 0);
      return width === undefined || height === undefined ? undefined : { width, height, cornerRadius };
    }));
    geometry = r && { shape: 'rectangle', rectangle: r };
  } else if (kind === 'circle') {
    const c = f.req('circle', obj(['radius'], (o) => {
      const radius = o.req('radius', size);
      return radius === undefined ? undefined : { radius };
    }));
    geometry = c && { shape: 'circle', circle: c };
  } else if (kind === 'line') {
    const l = f.req('line', obj(['length', 'thickness'], (o) => {
      const length = o.req('length', size);
      const thickness = o.req('thickness', size);
      return length === undefined || thickness === undefined ? undefined : { length, thickness };
    }));
    geometry = l && { shape: 'line', line: l };
  }
  return geometry && { ...common, ...geometry };
});

/** Raw `<svg …>` markup (Shotstack), an http(s) URL of an .svg file, or an asset id where the parse accepts them. */
const svgSource: Reader<string> = (value, path, issues) => {
  if (typeof value === 'string' && /^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/i.test(value)) {
    if (value.length > 500_000) return void issues.add(path, `must be at most 500000 characters, got ${value.length}`);
    return value.trim();
  }
  if (typeof value === 'string' && /^https?:\/\//i.test(value.trim())) return url(value, path, issues);
  if (acceptedAssetId(value, issues)) return value.trim();
  issues.add(path, `must be SVG markup starting with "<svg"${issues.accepts.assetIds ? ', an http(s) URL or an asset id (ast_…)' : ' or an http(s) URL'}, got ${describe(value)}`);
  return undefined;
};

const svg = obj<SvgAsset>(ASSET_FIELDS.svg, (f) => {
  const src = f.req('src', svgSource);
  return src === undefined ? undefined : { type: 'svg', src };
});

/** An SRT/VTT URL, or `alias://NAME` of an audio/video clip to transcribe (checked with timing). */
const captionSource: Reader<string> = (value, path, issues) => {
  if (typeof value === 'string' && value.startsWith('alias://')) {
    if (aliasTarget(value) === undefined) return void issues.add(path, `must be alias://NAME with a name of letters, digits, "_" or "-", got ${describe(value)}`);
    return value;
  }
  return url(value, path, issues);
};

const caption = obj<CaptionAsset>(ASSET_FIELDS.caption, (f) => {
  const src = f.req('src', captionSource);
  const asset = compact<CaptionAsset>({
    type: 'caption',
    src: src ?? '',
    font: f.opt(
      'font',
      obj(['family', 'name', 'fontFamily', 'color', 'opacity', 'size', 'fontSize', 'lineHeight', 'stroke', 'strokeWidth'], (o) => {
        // Shotstack aliases: `name`/`fontFamily` for family, `fontSize` for size; the canonical name wins.
        const family = o.opt('family', str({ min: 1 }));
        const name = o.opt('name', str({ min: 1 }));
        const fontFamily = o.opt('fontFamily', str({ min: 1 }));
        const size = o.opt('size', pixels);
        const fontSize = o.opt('fontSize', pixels);
        return compact({
          family: family ?? name ?? fontFamily,
          color: o.opt('color', color),
          opacity: o.opt('opacity', fraction),
          size: size ?? fontSize,
          lineHeight: o.opt('lineHeight', num({ above: 0 })),
          stroke: o.opt('stroke', color),
          strokeWidth: o.opt('strokeWidth', num({ min: 0 })),
        });
      }),
    ),
    background: f.opt(
      'background',
      obj(['color', 'opacity', 'padding', 'borderRadius'], (o) =>
        compact({
          color: o.opt('color', color),
          opacity: o.opt('opacity', fraction),
          padding: o.opt('padding', num({ min: 0 })),
          borderRadius: o.opt('borderRadius', num({ min: 0 })),
        }),
      ),
    ),
    margin: f.opt(
      'margin',
      obj(['top', 'left', 'right'], (o) => compact({ top: o.opt('top', fraction), left: o.opt('left', fraction), right: o.opt('right', fraction) })),
    ),
    trim: f.def('trim', seconds, 0),
    speed: f.def('speed', playbackSpeed, 1),
  });
  return src === undefined ? undefined : asset;
});

// --- dispatch -----------------------------------------------------------------------------------

const READERS: { [K in AssetType]: Reader<Extract<Asset, { type: K }>> } = {
  image, video, audio, luma, text, title, html, 'rich-text': richText, shape, svg, caption,
};

/** Shotstack asset types this service does not render. */
const UNSUPPORTED = ['html5', 'rich-caption', 'text-to-image', 'image-to-video', 'text-to-speech'];

export const asset: Reader<Asset> = (value, path, issues) => {
  if (!isPlainObject(value)) return void issues.add(path, `must be an object, got ${describe(value)}`);
  if (typeof value.type === 'string' && UNSUPPORTED.includes(value.type)) {
    return void issues.add(`${path}.type`, `"${value.type}" assets are not supported; use one of ${ASSET_TYPES.join(', ')}`);
  }
  if (value.type === undefined) return void issues.add(`${path}.type`, 'is required');
  const type = oneOf(ASSET_TYPES)(value.type, `${path}.type`, issues);
  return type === undefined ? undefined : READERS[type](value, path, issues);
};

