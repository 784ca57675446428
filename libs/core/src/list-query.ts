import { ApiError, type FieldErrors } from './errors.js';
import type { Pagination } from './envelope.js';

export type SortOrder = 'asc' | 'desc';

/** An open set: values are free (ids) but must match a pattern. */
export interface OpenSet {
  pattern: RegExp;
  describe: string;
}

/** What one list endpoint accepts (contract §1.5). */
export interface ListSpec<S extends string = string> {
  sort: readonly S[];
  defaultSort: S;
  defaultOrder?: SortOrder;
  limit?: { default: number; max: number };
  /** Filters naming a set: comma-separated values, each checked against the set. */
  sets?: Record<string, readonly string[] | OpenSet>;
  /** Date pairs by base name: `created` accepts createdFrom / createdTo. */
  dates?: readonly string[];
  booleans?: readonly string[];
  search?: { maxLength: number };
  /** Cursor list (§1.6): `pageToken` instead of page, sort and order. */
  cursor?: boolean;
}

export interface ListQuery<S extends string = string> {
  page: number;
  limit: number;
  offset: number;
  sort: S;
  order: SortOrder;
  sets: Record<string, string[]>;
  dates: Record<string, { from?: Date; to?: Date }>;
  booleans: Record<string, boolean>;
  search?: string;
  pageToken?: string;
}

export const MAX_LIST_OFFSET = 100_000;
const PAGE_KEYS = ['page', 'limit', 'sort', 'order'];

function positiveInt(raw: string): number | null {
  return /^\d{1,9}$/.test(raw) && Number(raw) >= 1 ? Number(raw) : null;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** ISO date or date-time. A date-only upper bound covers that whole day (UTC). */
function parseDate(raw: string, upper: boolean): Date | null {
  if (DATE_ONLY.test(raw)) {
    const d = new Date(`${raw}T00:00:00.000Z`);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== raw) return null;
    return upper ? new Date(d.getTime() + 86_400_000 - 1) : d;
  }
  if (!DATE_TIME.test(raw)) return null;
  const d = new Date(raw);
  return Number.isNaN(d.getTime()) ? null : d;
}

function single(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/**
 * Parses and checks a list query. Every rule of §1.5 answers 422 INVALID_LIST_QUERY
 * with a message naming the allowed values and an `errors` object keyed `query.<name>`.
 */
export function parseListQuery<S extends string>(spec: ListSpec<S>, query: Record<string, unknown>): ListQuery<S> {
  const errors: FieldErrors = {};
  const fail = (key: string, message: string) => {
    (errors[`query.${key}`] ??= []).push(message);
  };
  const limitSpec = spec.limit ?? { default: 20, max: 100 };
  const sets = spec.sets ?? {};
  const dates = spec.dates ?? [];
  const booleans = spec.booleans ?? [];
  const allowedKeys = new Set<string>([
    ...(spec.cursor ? ['limit', 'pageToken'] : PAGE_KEYS),
    ...Object.keys(sets),
    ...dates.flatMap((d) => [`${d}From`, `${d}To`]),
    ...booleans,
    ...(spec.search ? ['search'] : []),
  ]);

  const out: ListQuery<S> = {
    page: 1,
    limit: limitSpec.default,
    offset: 0,
    sort: spec.defaultSort,
    order: spec.defaultOrder ?? 'desc',
    sets: {},
    dates: {},
    booleans: {},
  };

  for (const [key, rawValue] of Object.entries(query)) {
    if (rawValue === undefined) continue;
    if (!allowedKeys.has(key)) {
      fail(key, `Unknown query parameter "${key}". Allowed: ${[...allowedKeys].join(', ')}`);
      continue;
    }
    const raw = single(rawValue);
    if (raw === null) {
      fail(key, `"${key}" must be given once`);
      continue;
    }
    if (key === 'page') {
      const n = positiveInt(raw);
      if (n === null) fail(key, 'page must be an integer of 1 or more');
      else out.page = n;
    } else if (key === 'limit') {
      const n = positiveInt(raw);
      if (n === null || n > limitSpec.max) fail(key, `limit must be an integer from 1 to ${limitSpec.max}`);
      else out.limit = n;
    } else if (key === 'sort') {
      if ((spec.sort as readonly string[]).includes(raw)) out.sort = raw as S;
      else fail(key, `Unknown sort "${raw}". Allowed: ${spec.sort.join(', ')}`);
    } else if (key === 'order') {
      if (raw === 'asc' || raw === 'desc') out.order = raw;
      else fail(key, `Unknown order "${raw}". Allowed: asc, desc`);
    } else if (key === 'pageToken') {
      if (raw) out.pageToken = raw;
    } else if (key === 'search') {
      const max = spec.search?.maxLength ?? 128;
      if (raw.length > max) fail(key, `search may hold at most ${max} characters`);
      else if (raw.trim()) out.search = raw.trim();
    } else if (booleans.includes(key)) {
      if (raw === 'true' || raw === 'false') out.booleans[key] = raw === 'true';
      else fail(key, `${key} must be true or false`);
    } else if (key in sets) {
      const set = sets[key];
      const values = [...new Set(raw.split(',').map((v) => v.trim()).filter(Boolean))];
      if (values.length === 0) fail(key, `${key} names no value`);
      const bad = Array.isArray(set)
        ? values.filter((v) => !set.includes(v))
        : values.filter((v) => !(set as OpenSet).pattern.test(v));
      if (bad.length > 0) {
        const allowed = Array.isArray(set) ? set.join(', ') : (set as OpenSet).describe;
        fail(key, `Unknown ${key} value${bad.length > 1 ? 's' : ''} ${bad.map((b) => `"${b}"`).join(', ')}. Allowed: ${allowed}`);
      } else if (values.length > 0) {
        out.sets[key] = values;
      }
    } else {
      const base = key.replace(/(From|To)$/, '');
      const upper = key.endsWith('To');
      const date = parseDate(raw, upper);
      if (!date) fail(key, `${key} must be an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z)`);
      else (out.dates[base] ??= {})[upper ? 'to' : 'from'] = date;
    }
  }

  for (const [base, range] of Object.entries(out.dates)) {
    if (range.from && range.to && range.from > range.to) fail(`${base}From`, `${base}From must not be after ${base}To`);
  }
  out.offset = (out.page - 1) * out.limit;
  if (!errors['query.page'] && !errors['query.limit'] && out.offset > MAX_LIST_OFFSET) {
    fail('page', `Offset ${out.offset} is beyond ${MAX_LIST_OFFSET}; narrow the filters or the date range`);
  }
  if (Object.keys(errors).length > 0) {
    throw new ApiError('INVALID_LIST_QUERY', Object.values(errors).flat().join('; '), { errors });
  }
  return out;
}

export function pagination(query: Pick<ListQuery, 'page' | 'limit'>, total: number): Pagination {
  return { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) };
}

/** ORM order-by for a list query: the sort column, then id in the same direction (the tiebreak). */
export function orderBy(query: Pick<ListQuery, 'sort' | 'order'>, columns: Record<string, string> = {}): Record<string, SortOrder> {
  const column = columns[query.sort] ?? query.sort;
  return column === 'id' ? { id: query.order } : { [column]: query.order, id: query.order };
}

/**
 * A LIKE pattern for a substring, lower-cased (search columns hold lower-cased text). `%`, `_` and
 * `\\` become `_` (any one character): LIKE escapes differ between SQLite (none by default) and
 * PostgreSQL (backslash), so a search may match a little more, never less.
 */
export function likeTerm(search: string): string {
  return `%${search.toLowerCase().replace(/[\\%_]/g, '_')}%`;
}
