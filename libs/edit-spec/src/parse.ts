import { ApiError, type FieldErrors } from '#libs/core';
import { EDIT_FIELDS } from './keys.js';
import { applyMerge } from './merge.js';
import {
  ASPECT_RATIOS, CODECS, EFFECTS, FILTERS, FITS, FPS_VALUES, MAX_OUTPUT_SIDE, OUTPUT_FORMATS, PAGE_SIZES, QUALITIES, RESOLUTIONS,
  SOUNDTRACK_EFFECTS, TRANSITIONS,
  type AliasRef, type Asset, type Clip, type ClipLength, type ClipStart, type EditSpec, type Fit, type JsonValue,
  type MergeField, type Output, type PageSizeName, type PdfPage, type Timeline, type Track, type Transform,
} from './model.js';
import { ALIAS_NAME, aliasTarget, animatable, asset, fraction, pixels, position, seconds } from './parse-assets.js';
import { checkTimingReferences, clipCount } from './timing.js';
import { arr, bool, color, compact, describe, Issues, isPlainObject, mediaSrc, num, obj, oneOf, str, summarise, url, type ParseAccepts, type Reader } from './validate.js';

// --- clip ---------------------------------------------------------------------------------------

function aliasRef(value: string, path: string, issues: Issues): AliasRef | undefined {
  if (aliasTarget(value) !== undefined) return value as AliasRef;
  issues.add(path, `must be alias://NAME with a name of letters, digits, "_" or "-", got ${describe(value)}`);
  return undefined;
}

function notNumeric(value: unknown): boolean {
  return typeof value === 'string' ? value.trim() === '' || Number.isNaN(Number(value.trim())) : typeof value !== 'number';
}

const clipStart: Reader<ClipStart> = (value, path, issues) => {
  if (value === 'auto') return 'auto';
  if (typeof value === 'string' && value.startsWith('alias://')) return aliasRef(value, path, issues);
  if (notNumeric(value)) {
    return void issues.add(path, `must be a number of seconds, "auto" or "alias://NAME", got ${describe(value)}`);
  }
  return seconds(value, path, issues);
};

const clipLength: Reader<ClipLength> = (value, path, issues) => {
  if (value === 'auto' || value === 'end') return value;
  if (typeof value === 'string' && value.startsWith('alias://')) return aliasRef(value, path, issues);
  if (notNumeric(value)) {
    return void issues.add(path, `must be a number of seconds, "auto", "end" or "alias://NAME", got ${describe(value)}`);
  }
  return num({ above: 0 })(value, path, issues);
};

/** Assets that are scaled to fill by default; the others lay themselves out at their own size. */
function defaultFit(a: Asset): Fit {
  return a.type === 'image' || a.type === 'video' || a.type === 'luma' ? 'crop' : 'none';
}

const SPEED_NOTE = 'each optionally suffixed Slow or Fast';
const effect = oneOf(EFFECTS, { listed: `zoomIn, zoomOut, slideLeft, slideRight, slideUp, slideDown (${SPEED_NOTE})` });
const transitionName = oneOf(TRANSITIONS, {
  listed: `none, zoom, fade, reveal, wipeLeft, wipeRight, slideLeft, slideRight, slideUp, slideDown, carouselLeft, carouselRight, carouselUp, carouselDown, shuffleTopRight, shuffleRightTop, shuffleRightBottom, shuffleBottomRight, shuffleBottomLeft, shuffleLeftBottom, shuffleLeftTop, shuffleTopLeft (${SPEED_NOTE}, except none and zoom)`,
});

/** `"none"` is accepted for filter and effect (some Shotstack payloads send it) and means absent. */
function unlessNone<T>(read: Reader<T>): Reader<T> {
  return (value, path, issues) => (value === 'none' ? undefined : read(value, path, issues));
}

const rotation = animatable({ min: -360, max: 360 });
const skewAmount = animatable();

const transform = obj<Transform>(EDIT_FIELDS.transform, (f) =>
  compact({
    rotate: f.opt('rotate', obj(['angle'], (o) => ({ angle: o.def('angle', rotation, 0) }))),
    skew: f.opt('skew', obj(['x', 'y'], (o) => ({ x: o.def('x', skewAmount, 0), y: o.def('y', skewAmount, 0) }))),
    flip: f.opt('flip', obj(['horizontal', 'vertical'], (o) => ({ horizontal: o.def('horizontal', bool, false), vertical: o.def('vertical', bool, false) }))),
  }),
);

const offsetValue = animatable({ min: -10, max: 10 });

const aliasName: Reader<string> = (value, path, issues) => {
  const name = str({ min: 1 })(value, path, issues);
  if (name === undefined) return undefined;
  if (!ALIAS_NAME.test(name)) return void issues.add(path, `must use only letters, digits, "_" and "-", got ${describe(value)}`);
  return name;
};


const clip = obj<Clip>(EDIT_FIELDS.clip, (f) => {
  const a = f.req('asset', asset);
  const start = f.req('start', clipStart);
  const length = f.req('length', clipLength);
  const rest = {
    fit: f.opt('fit', oneOf(FITS)),
    scale: f.def('scale', animatable({ min: 0 }), 1),
    width: f.opt('width', pixels),
    height: f.opt('height', pixels),
    position: f.def('position', position, 'center'),
    offset: f.def('offset', obj(EDIT_FIELDS.offset, (o) => ({ x: o.def('x', offsetValue, 0), y: o.def('y', offsetValue, 0) })), { x: 0, y: 0 }),
    opacity: f.def('opacity', animatable({ min: 0, max: 1 }), 1),
    transform: f.opt('transform', transform),
    filter: f.opt('filter', unlessNone(oneOf(FILTERS))),
    effect: f.opt('effect', unlessNone(effect)),
    transition: f.opt('transition', obj(EDIT_FIELDS.transition, (o) => compact({ in: o.opt('in', transitionName), out: o.opt('out', transitionName) }))),
    alias: f.opt('alias', aliasName),
  };
  if (a === undefined || start === undefined || length === undefined) return undefined;
  return compact({ ...rest, asset: a, start, length, fit: rest.fit ?? defaultFit(a) });
});

// --- timeline -----------------------------------------------------------------------------------

const track = obj<Track>(EDIT_FIELDS.track, (f) => {
  const clips = f.req('clips', arr(clip));
  return clips === undefined ? undefined : { clips };
});

const timeline = obj<Timeline>(EDIT_FIELDS.timeline, (f) => {
  const tracks = f.req('tracks', arr(track));
  const rest = {
    background: f.def('background', color, '#000000'),
    fonts: f.def('fonts', arr(obj(EDIT_FIELDS.font, (o) => { const src = o.req('src', mediaSrc); return src === undefined ? undefined : { src }; })), []),
    soundtrack: f.opt(
      'soundtrack',
      obj(EDIT_FIELDS.soundtrack, (o) => {
        const src = o.req('src', mediaSrc);
        const s = { effect: o.opt('effect', oneOf(SOUNDTRACK_EFFECTS)), volume: o.def('volume', fraction, 1) };
        return src === undefined ? undefined : compact({ src, ...s });
      }),
    ),
    cache: f.opt('cache', bool),
  };
  return tracks === undefined ? undefined : compact({ ...rest, tracks });
});

// --- output -------------------------------------------------------------------------------------

const resolution = oneOf(RESOLUTIONS, { aliases: { '1080': 'fhd' } });
const dimension = num({ min: 1, max: MAX_OUTPUT_SIDE, integer: true });

/** Accepted for Shotstack compatibility and not used (destinations are a Shotstack hosting feature). */
const ignoredList: Reader<undefined> = (value, path, issues) => {
  if (!Array.isArray(value)) issues.add(path, `must be an array, got ${describe(value)}`);
  return undefined;
};

/** A PDF page in points: a side from 1 inch (72) to PDF's own limit (14,400, 200 inches). */
const pagePoints = num({ min: 72, max: 14_400 });
const pageName = oneOf(PAGE_SIZES, { aliases: Object.fromEntries(PAGE_SIZES.map((n) => [n.toLowerCase(), n])) as Record<string, PageSizeName> });

const pdfPage = obj<PdfPage>(['dpi', 'pageSize'], (f) => {
  const dpi = f.opt('dpi', num({ min: 36, max: 1200 }));
  const pageSize = f.opt<PdfPage['pageSize']>('pageSize', (value, path, issues) => typeof value === 'object' && value !== null
    ? obj(['width', 'height'], (o) => {
      const width = o.req('width', pagePoints);
      const height = o.req('height', pagePoints);
      return width === undefined || height === undefined ? undefined : { width, height };
    })(value, path, issues)
    : pageName(value, path, issues));
  if (f.has('dpi') && f.has('pageSize')) f.issues.add(f.at('pageSize'), 'give dpi or pageSize, not both (a fixed page sets the resolution itself)');
  return compact({ dpi, pageSize });
});

const output = obj<Output>(
  EDIT_FIELDS.output,
  (f) => {
    const format = f.req('format', oneOf(OUTPUT_FORMATS, { aliases: { jpg: 'jpeg' } }));
    f.opt('destinations', ignoredList);
    const rest = compact({
      resolution: f.opt('resolution', resolution),
      aspectRatio: f.opt('aspectRatio', oneOf(ASPECT_RATIOS)),
      size: f.opt('size', obj(EDIT_FIELDS.size, (o) => {
        const width = o.req('width', dimension);
        const height = o.req('height', dimension);
        return width === undefined || height === undefined ? undefined : { width, height };
      })),
      fps: f.opt('fps', oneOf(FPS_VALUES)),
      quality: f.opt('quality', oneOf(QUALITIES)),
      codec: f.opt('codec', oneOf(CODECS)),
      scaleTo: f.opt('scaleTo', resolution),
      range: f.opt('range', obj(['start', 'length'], (o) => compact({ start: o.def('start', seconds, 0), length: o.opt('length', num({ above: 0 })) }))),
      poster: f.opt('poster', obj(['capture'], (o) => { const capture = o.req('capture', seconds); return capture === undefined ? undefined : { capture }; })),
      thumbnail: f.opt('thumbnail', obj(['capture', 'scale'], (o) => {
        const capture = o.req('capture', seconds);
        const scale = o.def('scale', num({ above: 0, max: 1 }), 1);
        return capture === undefined ? undefined : { capture, scale };
      })),
      repeat: f.opt('repeat', bool),
      mute: f.opt('mute', bool),
      pdf: f.opt('pdf', pdfPage),
    });
    return format === undefined ? undefined : { format, ...rest };
  },
);

// --- edit ---------------------------------------------------------------------------------------


const editSpec = obj<EditSpec>(EDIT_FIELDS.edit, (f) => {
  const t = f.req('timeline', timeline);
  const o = f.req('output', output);
  const callback = f.opt('callback', url);
  // Shotstack render-infrastructure hints: accepted, not used.
  f.opt('disk', str());
  f.opt('instance', str());
  return t === undefined || o === undefined ? undefined : compact({ timeline: t, output: o, callback });
});

const mergeFields = arr(
  obj<MergeField>(EDIT_FIELDS.merge, (f) => {
    const find = f.req('find', str({ min: 1 }));
    if (!f.has('replace')) f.issues.add(f.at('replace'), 'is required');
    return find === undefined ? undefined : { find, replace: (f.raw.replace ?? null) as JsonValue };
  }),
);

export interface ParseOptions extends ParseAccepts {
  /** Prefix of every error path (default `edit`), e.g. `template.edit`. */
  root?: string;
}

export type ParseResult =
  | {
      ok: true;
      edit: EditSpec;
      /** Placeholders left without a value (rendered as written). */
      unresolved: string[];
    }
  | { ok: false; errors: FieldErrors };

/**
 * Validates and normalises an edit spec. The edit's own `merge` pairs are applied first (values the
 * caller merged before stay merged; the edit's pairs then act as defaults). Every failure is collected
 * under its full path (`edit.timeline.tracks[0].clips[2].length`) with a message naming the bad value;
 * alias references are checked too (unknown names, duplicates, cycles).
 */
export function parseEdit(input: unknown, opts: ParseOptions = {}): ParseResult {
  const root = opts.root ?? 'edit';
  const issues = new Issues({ assetIds: opts.assetIds });
  if (!isPlainObject(input)) {
    issues.add(root, `must be an object, got ${describe(input)}`);
    return { ok: false, errors: issues.errors };
  }
  const { merge, ...body } = input;
  const pairs = merge === undefined ? [] : mergeFields(merge, `${root}.merge`, issues);
  const { value: merged, unresolved } = applyMerge(body, pairs ?? []);
  const edit = editSpec(merged, root, issues);
  if (edit) checkTimingReferences(edit, issues, root);
  if (!edit || issues.count > 0) return { ok: false, errors: issues.errors };
  return { ok: true, edit, unresolved };
}

/**
 * parseEdit for request handlers: returns the edit, or throws 422 TEMPLATE_VALIDATION_FAILED with the
 * `errors` object, or 422 EMPTY_TIMELINE when the timeline holds no clip (so it has no duration).
 */
export function assertEdit(input: unknown, opts: ParseOptions = {}): EditSpec {
  const result = parseEdit(input, opts);
  if (!result.ok) {
    throw new ApiError('TEMPLATE_VALIDATION_FAILED', `The edit spec is not valid: ${summarise(result.errors)}`, { errors: result.errors });
  }
  if (clipCount(result.edit) === 0) throw new ApiError('EMPTY_TIMELINE', 'The timeline has no clips, so it has no duration');
  return result.edit;
}
