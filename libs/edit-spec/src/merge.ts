import type { JsonValue, MergeField } from './model.js';

/**
 * Merge placeholders (Shotstack "merge fields"): `{{ NAME }}` anywhere in a string value.
 * Whitespace inside the braces is ignored; names are case-sensitive (as in Shotstack) and made of
 * letters, digits, `_`, `-` and `.`.
 */
const NAME = '[A-Za-z0-9_][A-Za-z0-9_.-]*';
const PLACEHOLDER = new RegExp(`\\{\\{\\s*(${NAME})\\s*\\}\\}`, 'g');
const EXACT = new RegExp(`^\\{\\{\\s*(${NAME})\\s*\\}\\}$`);

/** Values to merge: render `values`/`fields` (an object) or Shotstack `merge` find/replace pairs. */
export type MergeValues = Readonly<Record<string, unknown>> | readonly MergeField[];

export interface MergeResult {
  value: JsonValue;
  /** Placeholder names found that had no value: left untouched, in order of first appearance. */
  unresolved: string[];
  /** Names that were replaced at least once. */
  used: string[];
}

function toMap(values: MergeValues): Map<string, JsonValue> {
  const map = new Map<string, JsonValue>();
  if (Array.isArray(values)) {
    // A `find` written with its braces ("{{NAME}}") is tolerated.
    for (const { find, replace } of values as readonly MergeField[]) map.set(placeholderName(find) ?? find.trim(), replace);
  } else {
    for (const [key, value] of Object.entries(values)) map.set(key, toJson(value));
  }
  return map;
}

/** Coerces an arbitrary value to JSON (undefined → null; Dates and the like through JSON). */
function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

/** The name of a string that is exactly one placeholder (`"{{ NAME }}"` → `NAME`), else null. */
export function placeholderName(text: string): string | null {
  return EXACT.exec(text)?.[1] ?? null;
}

/** Text of a replacement spliced into a longer string. */
function spliced(value: JsonValue): string {
  if (value === null) return '';
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * Replaces placeholders throughout a JSON value (object keys are left alone).
 * A string that is exactly one placeholder takes the replacement's JSON type (`"{{ LEN }}"` → `5`);
 * a placeholder inside a longer string is substituted as text. Unknown placeholders stay as written
 * and are listed in `unresolved`. The input is not modified.
 */
export function applyMerge(input: unknown, values: MergeValues): MergeResult {
  const map = toMap(values);
  const unresolved = new Set<string>();
  const used = new Set<string>();

  const mergeString = (text: string): JsonValue => {
    const exact = placeholderName(text);
    if (exact !== null) {
      if (!map.has(exact)) {
        unresolved.add(exact);
        return text;
      }
      used.add(exact);
      return map.get(exact) ?? null;
    }
    return text.replace(PLACEHOLDER, (whole, name: string) => {
      if (!map.has(name)) {
        unresolved.add(name);
        return whole;
      }
      used.add(name);
      return spliced(map.get(name) ?? null);
    });
  };

  const walk = (value: JsonValue): JsonValue => {
    if (typeof value === 'string') return mergeString(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, walk(inner)]));
    }
    return value;
  };

  return { value: walk(toJson(input)), unresolved: [...unresolved], used: [...used] };
}

export type MediaSrcKind = 'image' | 'video' | 'audio';

export interface PlaceholderUse {
  name: string;
  /** Set when the placeholder is, on its own, the `src` of an image, video or audio asset (or the soundtrack). */
  srcOf?: MediaSrcKind;
  /** Every place it occurs, as `edit.timeline.tracks[0].clips[1].asset.src`. */
  paths: string[];
}

const CLIP_SRC = /^\.timeline\.tracks\[\d+\]\.clips\[\d+\]\.asset\.src$/;

function srcKind(relativePath: string, parent: Readonly<Record<string, JsonValue>> | null): MediaSrcKind | undefined {
  if (relativePath === '.timeline.soundtrack.src') return 'audio';
  if (!CLIP_SRC.test(relativePath) || parent === null) return undefined;
  const type = parent.type;
  return type === 'image' || type === 'video' || type === 'audio' ? type : undefined;
}

/**
 * Lists the placeholders of an edit in order of first appearance, with where they occur and whether
 * one stands alone as a media `src` (used to derive template fields: image/video/audio, else text).
 * A name seen both as a media src and elsewhere keeps the media kind it was first seen with.
 */
export function findPlaceholders(edit: unknown, root = 'edit'): PlaceholderUse[] {
  const uses = new Map<string, PlaceholderUse>();

  const record = (name: string, path: string, kind: MediaSrcKind | undefined) => {
    const use = uses.get(name) ?? { name, paths: [] };
    use.paths.push(`${root}${path}`);
    if (kind && !use.srcOf) use.srcOf = kind;
    uses.set(name, use);
  };

  const walk = (value: JsonValue, path: string, parent: Readonly<Record<string, JsonValue>> | null) => {
    if (typeof value === 'string') {
      const exact = placeholderName(value);
      if (exact !== null) return record(exact, path, srcKind(path, parent));
      for (const match of value.matchAll(PLACEHOLDER)) record(match[1] ?? '', path, undefined);
      return;
    }
    if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${path}[${i}]`, null));
    if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) walk(inner, `${path}.${key}`, value);
    }
  };

  walk(toJson(edit), '', null);
  return [...uses.values()];
}

/** True when a string still holds a `{{ placeholder }}`. */
export function hasPlaceholder(text: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(text);
}
