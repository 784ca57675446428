import type { FieldErrors } from '#libs/core';
import { hasPlaceholder } from './merge.js';
import { ASSET_ID } from './model.js';

/**
 * A small validation toolkit: readers take a raw value and its path, record every failure in
 * `Issues` (path → messages, the contract's `errors` shape) and return the normalised value, or
 * undefined when it is unusable.
 */
export class Issues {
  readonly errors: FieldErrors = {};
  private total = 0;

  /** What the parse these issues belong to accepts beyond Shotstack (readers that depend on it read it here). */
  constructor(readonly accepts: ParseAccepts = {}) {}

  add(path: string, message: string): void {
    (this.errors[path] ??= []).push(message);
    this.total += 1;
  }

  get count(): number {
    return this.total;
  }
}

/** What a parse accepts beyond Shotstack's edit (ParseOptions). */
export interface ParseAccepts {
  /**
   * Media sources may name assets of the media library by id (`ast_…`): template edits. A render's
   * edit never does: the renders module swaps ids for their files' URLs before it parses the edit.
   */
  assetIds?: boolean;
}

export type Reader<T> = (value: unknown, path: string, issues: Issues) => T | undefined;

/** Short description of a bad value for messages: `"abc"`, `-1`, `an object`. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    const note = hasPlaceholder(value) ? ' (a merge placeholder with no value)' : '';
    return `${JSON.stringify(shown)}${note}`;
  }
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drops undefined properties so optional fields are absent rather than present-and-undefined. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** `edit.a.b must be …` for the first error, plus how many more there are. */
export function summarise(errors: FieldErrors): string {
  const entries = Object.entries(errors);
  const [path, messages] = entries[0] ?? ['edit', ['is not valid']];
  const more = entries.reduce((n, [, m]) => n + m.length, 0) - 1;
  return `${path} ${messages[0] ?? 'is not valid'}${more > 0 ? ` (and ${more} more error${more === 1 ? '' : 's'})` : ''}`;
}

// --- scalars ------------------------------------------------------------------------------------

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export interface NumberRule {
  min?: number;
  max?: number;
  /** Strictly greater than this. */
  above?: number;
  integer?: boolean;
}

/** A number; numeric strings (`"5"`, `" 2.5 "`) are coerced, as real Shotstack payloads send them. */
export function num(rule: NumberRule = {}): Reader<number> {
  return (value, path, issues) => {
    const n = typeof value === 'number' ? value : typeof value === 'string' && NUMERIC.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isFinite(n)) return void issues.add(path, `must be a number, got ${describe(value)}`);
    if (rule.integer && !Number.isInteger(n)) return void issues.add(path, `must be a whole number, got ${n}`);
    if (rule.above !== undefined && n <= rule.above) return void issues.add(path, `must be greater than ${rule.above}, got ${n}`);
    if (rule.min !== undefined && n < rule.min) return void issues.add(path, `must be at least ${rule.min}, got ${n}`);
    if (rule.max !== undefined && n > rule.max) return void issues.add(path, `must be at most ${rule.max}, got ${n}`);
    return n;
  };
}

/** A boolean; the strings "true" and "false" are coerced. */
export const bool: Reader<boolean> = (value, path, issues) => {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  issues.add(path, `must be true or false, got ${describe(value)}`);
  return undefined;
};

export interface StringRule {
  /** Minimum length after trimming (default 0: empty allowed). */
  min?: number;
  max?: number;
}

export function str(rule: StringRule = {}): Reader<string> {
  return (value, path, issues) => {
    if (typeof value !== 'string') return void issues.add(path, `must be a string, got ${describe(value)}`);
    if (rule.min !== undefined && value.trim().length < rule.min) {
      return void issues.add(path, rule.min === 1 ? 'must not be empty' : `must be at least ${rule.min} characters`);
    }
    if (rule.max !== undefined && value.length > rule.max) return void issues.add(path, `must be at most ${rule.max} characters, got ${value.length}`);
    return value;
  };
}

/**
 * One of a fixed list. Numbers sent as strings match numeric entries (`"25"` → 25). `aliases` maps
 * accepted spellings to their normalised value (`jpg` → `jpeg`, `1080` → `fhd`).
 */
export interface OneOfRule<T> {
  aliases?: Readonly<Record<string, T>>;
  /** Wording of the allowed values in messages, when the plain list would be too long. */
  listed?: string;
}

export function oneOf<const T extends string | number>(allowed: readonly T[], rule: OneOfRule<T> = {}): Reader<T> {
  const aliases = rule.aliases ?? {};
  return (value, path, issues) => {
    const key = typeof value === 'number' || typeof value === 'string' ? String(value).trim() : undefined;
    if (key !== undefined) {
      if (Object.hasOwn(aliases, key)) return aliases[key];
      const hit = allowed.find((a) => String(a) === key || (typeof a === 'number' && NUMERIC.test(key) && Number(key) === a));
      if (hit !== undefined) return hit;
    }
    const listed = rule.listed ?? allowed.join(', ');
    issues.add(path, `must be one of ${listed}; got ${describe(value)}${suggest(key, allowed.map(String))}`);
    return undefined;
  };
}

function httpUrl(value: unknown, path: string, issues: Issues, expected: string): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return void issues.add(path, `must be ${expected}, got ${describe(value)}`);
  let parsed: URL;
  try {
    parsed = new URL(value.trim());
  } catch {
    return void issues.add(path, `must be ${expected}, got ${describe(value)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return void issues.add(path, `must be ${expected}, got ${describe(value)}`);
  }
  return value.trim();
}

/** An absolute http(s) URL. */
export const url: Reader<string> = (value, path, issues) => httpUrl(value, path, issues, 'an http(s) URL');

/** Whether `value` is an asset id the parse accepts as a media source (ParseAccepts.assetIds). */
export function acceptedAssetId(value: unknown, issues: Issues): value is string {
  return issues.accepts.assetIds === true && typeof value === 'string' && ASSET_ID.test(value.trim());
}

/** A media file: an absolute http(s) URL, or an asset id where the parse accepts them. */
export const mediaSrc: Reader<string> = (value, path, issues) => {
  if (acceptedAssetId(value, issues)) return value.trim();
  return httpUrl(value, path, issues, issues.accepts.assetIds ? 'an http(s) URL or an asset id (ast_…)' : 'an http(s) URL');
};

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

/** `#rgb`, `#rrggbb`, `#aarrggbb` (Shotstack: alpha first) or `transparent`; normalised to lower case. */
export const color: Reader<string> = (value, path, issues) => {
  if (typeof value === 'string' && (HEX.test(value.trim()) || value.trim().toLowerCase() === 'transparent')) return value.trim().toLowerCase();
  issues.add(path, `must be a hex colour such as "#ffffff" or "#80ffffff" (alpha first), got ${describe(value)}`);
  return undefined;
};

// --- containers ---------------------------------------------------------------------------------

export function arr<T>(item: Reader<T>, rule: { min?: number; max?: number } = {}): Reader<T[]> {
  return (value, path, issues) => {
    if (!Array.isArray(value)) return void issues.add(path, `must be an array, got ${describe(value)}`);
    if (rule.min !== undefined && value.length < rule.min) return void issues.add(path, `must hold at least ${rule.min} item${rule.min === 1 ? '' : 's'}`);
    if (rule.max !== undefined && value.length > rule.max) return void issues.add(path, `must hold at most ${rule.max} items, got ${value.length}`);
    const before = issues.count;
    const items = value.map((v, i) => item(v, `${path}[${i}]`, issues));
    return issues.count === before ? (items as T[]) : undefined;
  };
}

/**
 * The fields of one JSON object. Keys outside `known` are refused (with a "did you mean" hint);
 * `ok()` tells whether nothing under this object failed.
 */
export class Fields {
  constructor(
    readonly raw: Record<string, unknown>,
    readonly path: string,
    readonly issues: Issues,
    private readonly before = issues.count,
  ) {}

  at(key: string): string {
    return `${this.path}.${key}`;
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined;
  }

  /** A required field: reports `is required` when absent. */
  req<T>(key: string, read: Reader<T>): T | undefined {
    if (this.raw[key] === undefined) return void this.issues.add(this.at(key), 'is required');
    return read(this.raw[key], this.at(key), this.issues);
  }

  opt<T>(key: string, read: Reader<T>): T | undefined {
    return this.raw[key] === undefined ? undefined : read(this.raw[key], this.at(key), this.issues);
  }

  /** An optional field with a default used when absent (or when its value failed). */
  def<T>(key: string, read: Reader<T>, fallback: T): T {
    return this.opt(key, read) ?? fallback;
  }

  ok(): boolean {
    return this.issues.count === this.before;
  }
}

/** Opens an object, refusing keys outside `known`. */
export function fields(value: unknown, path: string, issues: Issues, known: readonly string[]): Fields | undefined {
  if (!isPlainObject(value)) return void issues.add(path, `must be an object, got ${describe(value)}`);
  const before = issues.count;
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) issues.add(`${path}.${key}`, `unknown field "${key}"${suggest(key, known)}`);
  }
  return new Fields(value, path, issues, before);
}

/** Reader for an object whose fields are read by `build` (undefined when anything inside failed). */
export function obj<T>(known: readonly string[], build: (f: Fields) => T | undefined): Reader<T> {
  return (value, path, issues) => {
    const f = fields(value, path, issues, known);
    if (!f) return undefined;
    const built = build(f);
    return f.ok() ? built : undefined;
  };
}

// --- hints --------------------------------------------------------------------------------------

/** Edit distance counting an adjacent swap as one edit (`fsp` → `fps` is 1). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number) => d[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] ?? [])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** ` (did you mean "x"?)` for a near miss (case or up to two edits), else empty. */
export function suggest(given: string | undefined, options: readonly string[]): string {
  if (!given) return '';
  const lower = given.toLowerCase();
  const best = options
    .filter((o) => o !== '')
    .map((o) => ({ o, d: o.toLowerCase() === lower ? 0 : distance(lower, o.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  return best && best.d <= Math.min(2, Math.floor(given.length / 3)) ? ` (did you mean "${best.o}"?)` : '';
}
