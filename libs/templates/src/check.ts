import type { FieldErrors } from '#libs/core';

/** Collects failures by path (the contract's `errors` shape). */
export class Issues {
  readonly errors: FieldErrors = {};

  add(path: string, message: string): void {
    (this.errors[path] ??= []).push(message);
  }

  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  summary(): string {
    return summarise(this.errors);
  }
}

/** `path first message` of the first failures, for an error's human message. */
export function summarise(errors: FieldErrors, max = 3): string {
  const entries = Object.entries(errors);
  const shown = entries.slice(0, max).map(([path, messages]) => `${path} ${messages[0]}`).join('; ');
  return entries.length > max ? `${shown} (and ${entries.length - max} more)` : shown;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Short description of a bad value for messages: `"abc"`, `-1`, `an object`. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** Edit distance, an adjacent swap counting as one edit (`titel` → `title` is 1). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      let best = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (d[i - 2] as number[])[j - 2] + 1);
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length];
}

/** ` (did you mean "x"?)` for a near miss (same letters in another case, or up to two edits), else empty. */
export function suggest(given: string, options: readonly string[]): string {
  const lower = given.toLowerCase();
  const best = options
    .map((o) => ({ o, d: o.toLowerCase() === lower ? 0 : distance(lower, o.toLowerCase()) }))
    .sort((x, y) => x.d - y.d)[0];
  return best && best.d <= Math.max(1, Math.min(2, Math.floor(given.length / 3))) ? ` (did you mean "${best.o}"?)` : '';
}

/** Refuses keys outside `known` under `path`, with a hint for near misses. */
export function unknownKeys(value: Record<string, unknown>, known: readonly string[], path: string, issues: Issues): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) issues.add(path ? `${path}.${key}` : key, `unknown field "${key}"${suggest(key, known)}`);
  }
}
