// The template editor's understanding of the edit JSON as it is typed (issue 29): where the cursor is
// (the path of the object around it, a key or a value being typed), what may be typed there (the
// fields and values the API's parser accepts: libs/edit-spec keys.ts and model.ts, the same lists),
// and on which line a 422's path lies. Tolerant: the text is half-typed most of the time.
import { ASSET_FIELDS, EDIT_FIELDS } from '../../../libs/edit-spec/src/keys.js';
import { ASSET_TYPES, EFFECTS, FILTERS, FITS, FPS_VALUES, OUTPUT_FORMATS, POSITIONS, QUALITIES, RESOLUTIONS, TRANSITIONS } from '../../../libs/edit-spec/src/model.js';

export type Path = (string | number)[];

export interface Cursor {
  /** The path of the object or array the cursor is in (`[]`: the edit itself). */
  path: Path;
  /** A key of that object is being typed, or the value of `key`. */
  expecting: 'key' | 'value';
  key?: string;
  /** What is typed of the word so far (inside its quotes), and where it starts. */
  prefix: string;
  from: number;
  /** The cursor is inside an open string (its quote typed). */
  inString: boolean;
  /** The fields of the object around the cursor written so far, and those of them whose value is a string (its `type`, above all). */
  present: string[];
  siblings: Record<string, string>;
}

interface Frame {
  kind: 'object' | 'array';
  /** Where it hangs in its parent. */
  at: string | number;
  state: 'key' | 'colon' | 'value' | 'after';
  key?: string;
  index: number;
  keys: string[];
  strings: Record<string, string>;
}

/** Reads a JSON string starting at `i` (a quote); its content and the index after it (or the text's end). */
function readString(text: string, i: number, end: number): { value: string; next: number; closed: boolean } {
  let value = '';
  let j = i + 1;
  while (j < end) {
    const c = text[j]!;
    if (c === '"') return { value, next: j + 1, closed: true };
    if (c === '\\') {
      value += text[j + 1] ?? '';
      j += 2;
      continue;
    }
    value += c;
    j++;
  }
  return { value, next: end, closed: false };
}

/** Where `offset` lies in `text`. */
export function cursorAt(text: string, offset: number): Cursor {
  const stack: Frame[] = [];
  const top = () => stack[stack.length - 1];
  let i = 0;
  let open: { value: string; from: number } | undefined;
  const valueDone = () => {
    const f = top();
    if (f) f.state = 'after';
  };
  while (i < offset) {
    const c = text[i]!;
    if (c === '"') {
      const s = readString(text, i, offset);
      if (!s.closed) {
        open = { value: s.value, from: i + 1 };
        break;
      }
      const f = top();
      if (f?.kind === 'object' && f.state === 'key') {
        f.key = s.value;
        f.keys.push(s.value);
        f.state = 'colon';
      } else {
        if (f?.kind === 'object' && f.key !== undefined) f.strings[f.key] = s.value;
        valueDone();
      }
      i = s.next;
      continue;
    }
    if (c === '{' || c === '[') {
      const parent = top();
      const at = parent ? (parent.kind === 'object' ? (parent.key ?? '') : parent.index) : '';
      stack.push({ kind: c === '{' ? 'object' : 'array', at, state: c === '{' ? 'key' : 'value', index: 0, keys: [], strings: {} });
    } else if (c === '}' || c === ']') {
      stack.pop();
      valueDone();
    } else if (c === ':') {
      const f = top();
      if (f?.kind === 'object') f.state = 'value';
    } else if (c === ',') {
      const f = top();
      if (f?.kind === 'object') {
        f.state = 'key';
        f.key = undefined;
      } else if (f) {
        f.index++;
        f.state = 'value';
      }
    } else if (!/\s/.test(c)) {
      // a number, true, false or null: read to its end
      while (i + 1 < offset && !/[\s,}\]]/.test(text[i + 1]!)) i++;
      valueDone();
    }
    i++;
  }
  const f = top();
  const path = stack.slice(1).map((s) => s.at);
  const expecting = f?.kind === 'object' && (f.state === 'key' || (open === undefined && f.state === 'after')) ? 'key' : 'value';
  return {
    path,
    expecting,
    ...(f?.kind === 'object' && expecting === 'value' && f.key !== undefined ? { key: f.key } : {}),
    prefix: open?.value ?? '',
    from: open?.from ?? offset,
    inString: open !== undefined,
    present: f?.keys ?? [],
    siblings: f?.strings ?? {},
  };
}

/** What an object at `path` is, by where it lies in an edit. */
type Shape = keyof typeof EDIT_FIELDS | 'asset';

function shapeOf(path: Path): Shape | undefined {
  const p = path.map((s) => (typeof s === 'number' ? '#' : s)).join('.');
  const shapes: Record<string, Shape> = {
    '': 'edit',
    timeline: 'timeline',
    'timeline.soundtrack': 'soundtrack',
    'timeline.fonts.#': 'font',
    'timeline.tracks.#': 'track',
    'timeline.tracks.#.clips.#': 'clip',
    'timeline.tracks.#.clips.#.asset': 'asset',
    'timeline.tracks.#.clips.#.offset': 'offset',
    'timeline.tracks.#.clips.#.transition': 'transition',
    'timeline.tracks.#.clips.#.transform': 'transform',
    'timeline.tracks.#.clips.#.asset.font': 'textFont',
    output: 'output',
    'output.size': 'size',
    'merge.#': 'merge',
  };
  return shapes[p];
}

/** Values a field takes from a fixed list. */
const VALUES: Partial<Record<Shape, Record<string, readonly (string | number)[]>>> = {
  asset: { type: ASSET_TYPES },
  clip: { fit: FITS, position: POSITIONS, filter: FILTERS, effect: EFFECTS },
  transition: { in: TRANSITIONS, out: TRANSITIONS },
  output: { format: OUTPUT_FORMATS, resolution: RESOLUTIONS, quality: QUALITIES, fps: FPS_VALUES },
};

/** What may be typed at the cursor: the fields not yet in its object, or a field's values; those that start with what is typed. */
export function suggestions(c: Cursor): string[] {
  const shape = shapeOf(c.path);
  if (!shape) return [];
  let options: readonly (string | number)[] = [];
  if (c.expecting === 'key') {
    if (shape === 'asset') {
      const type = c.siblings.type as keyof typeof ASSET_FIELDS | undefined;
      options = type && ASSET_FIELDS[type] ? ASSET_FIELDS[type] : ['type'];
    } else options = EDIT_FIELDS[shape];
    options = options.filter((o) => !c.present.includes(String(o)));
  } else if (c.key) {
    options = VALUES[shape]?.[c.key] ?? [];
  }
  const typed = c.prefix.toLowerCase();
  return options.map(String).filter((o) => o.toLowerCase().startsWith(typed));
}

/** Splits `edit.timeline.tracks[0].clips[2].asset.src` into its steps (a leading `edit` or `template.edit` dropped). */
export function stepsOf(path: string): Path {
  const steps: Path = [];
  for (const m of path.replace(/^(template\.)?edit\.?/, '').matchAll(/([^.[\]]+)|\[(\d+)\]/g)) steps.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return steps;
}

/**
 * The 1-based line of `text` where the value at `path` starts: the deepest step of the path that
 * the text holds (a missing field points at its object). Undefined when the text is not an object.
 */
export function lineOfPath(text: string, path: string): number | undefined {
  const want = stepsOf(path);
  const stack: { at: string | number; key?: string; index: number; kind: 'object' | 'array'; expectKey: boolean }[] = [];
  let best: { depth: number; offset: number } | undefined;
  const here = (): Path => stack.slice(1).map((s) => s.at);
  const matches = (p: Path) => p.length <= want.length && p.every((s, k) => s === want[k]);
  const note = (p: Path, offset: number) => {
    if (matches(p) && (!best || p.length > best.depth)) best = { depth: p.length, offset };
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const f = stack[stack.length - 1];
    if (c === '"') {
      const s = readString(text, i, text.length);
      if (f?.kind === 'object' && f.expectKey) {
        f.key = s.value;
        f.expectKey = false;
        note([...here(), s.value], i);
      } else if (f?.kind === 'array') note([...here(), f.index], i);
      i = s.next - 1;
      continue;
    }
    if (c === '{' || c === '[') {
      const at = f ? (f.kind === 'object' ? (f.key ?? '') : f.index) : '';
      if (f?.kind === 'array') note([...here(), f.index], i);
      stack.push({ at, index: 0, kind: c === '{' ? 'object' : 'array', expectKey: c === '{' });
      if (stack.length === 1) note([], i);
    } else if (c === '}' || c === ']') stack.pop();
    else if (c === ',' && f) {
      if (f.kind === 'object') f.expectKey = true;
      else f.index++;
    } else if (f?.kind === 'array' && !/[\s:]/.test(c)) note([...here(), f.index], i);
  }
  if (!best) return undefined;
  return text.slice(0, best.offset).split('\n').length;
}
