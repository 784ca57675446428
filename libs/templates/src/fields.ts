import { ASSET_ID, findPlaceholders, placeholderName, type JsonValue } from '#libs/edit-spec';
import { describe, isRecord, type Issues, unknownKeys } from './check.js';

/** Field types of a template's schema (contract §2 "Field definition"). */
export const FIELD_TYPES = ['text', 'image', 'video', 'audio', 'color', 'number', 'boolean', 'select'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const MEDIA_FIELD_TYPES: readonly FieldType[] = ['image', 'video', 'audio'];

/** Type-specific settings; each type accepts only its own keys (CONFIG_KEYS). */
export interface FieldConfig {
  /** text: longest value in characters (code points). */
  maxLength?: number;
  minLength?: number;
  /** text: a hint for editors (a text area instead of a line). */
  multiline?: boolean;
  /** image: the ratio the picture should have, `W:H`; checked by the renderer once the file is fetched. */
  aspectRatio?: string;
  /** number bounds. */
  min?: number;
  max?: number;
  step?: number;
  integer?: boolean;
  /** select: the allowed values. */
  options?: string[];
}

export interface FieldDefinition {
  /** Key used in render `values` and as the `{{KEY}}` placeholder in the edit. */
  key: string;
  label: string;
  type: FieldType;
  /** One of the template's fieldGroups. */
  group: string;
  required: boolean;
  defaultValue: JsonValue;
  placeholder?: string;
  config: FieldConfig;
}

export const CONFIG_KEYS: Readonly<Record<FieldType, readonly (keyof FieldConfig)[]>> = {
  text: ['maxLength', 'minLength', 'multiline'],
  image: ['aspectRatio'],
  video: [],
  audio: [],
  color: [],
  number: ['min', 'max', 'step', 'integer'],
  boolean: [],
  select: ['options'],
};

export const FIELD_LIMITS = { fields: 100, groups: 20, key: 64, label: 120, group: 60, placeholder: 200, options: 100, maxLength: 100_000 } as const;

/** Field keys are placeholder names: letters, digits, `_`, `-` and `.` (not first). */
export const FIELD_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const HEX_COLOR = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const RATIO = /^([1-9]\d{0,4}):([1-9]\d{0,4})$/;
const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const DEFAULT_GROUP = 'Content';
const MEDIA_GROUP = 'Media';

/** A value counts as absent when it is missing, null, or a string of only spaces. */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function httpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Checks one non-blank value against its field and returns it normalised (numbers from numeric
 * strings, booleans from "true"/"false", colours lower-cased, text from numbers), or records why not.
 */
export function checkValue(field: Pick<FieldDefinition, 'type' | 'config'>, value: unknown, path: string, issues: Issues): JsonValue | undefined {
  const c = field.config;
  switch (field.type) {
    case 'text': {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        return void issues.add(path, `must be text, got ${describe(value)}`);
      }
      const text = String(value);
      const length = [...text].length;
      if (c.maxLength !== undefined && length > c.maxLength) return void issues.add(path, `must be at most ${c.maxLength} characters, got ${length}`);
      if (c.minLength !== undefined && length < c.minLength) return void issues.add(path, `must be at least ${c.minLength} characters, got ${length}`);
      return text;
    }
    case 'image':
    case 'video':
    case 'audio': {
      // An asset of the media library by id (`ast_…`) is resolved by the renders module (libs/assets AssetRefs).
      if (typeof value !== 'string' || !(httpUrl(value.trim()) || ASSET_ID.test(value.trim()))) {
        return void issues.add(path, `must be an http(s) URL or an asset id (ast_…) of ${field.type === 'image' ? 'an image' : `a${field.type === 'audio' ? 'n' : ''} ${field.type}`} file, got ${describe(value)}`);
      }
      return value.trim();
    }
    case 'color': {
      if (typeof value === 'string' && (HEX_COLOR.test(value.trim()) || value.trim().toLowerCase() === 'transparent')) return value.trim().toLowerCase();
      return void issues.add(path, `must be a hex colour such as "#ff3366" (or "#80ff3366", alpha first) or "transparent", got ${describe(value)}`);
    }
    case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && NUMERIC.test(value.trim()) ? Number(value.trim()) : NaN;
      if (!Number.isFinite(n)) return void issues.add(path, `must be a number, got ${describe(value)}`);
      if (c.integer && !Number.isInteger(n)) return void issues.add(path, `must be a whole number, got ${n}`);
      if (c.min !== undefined && n < c.min) return void issues.add(path, `must be at least ${c.min}, got ${n}`);
      if (c.max !== undefined && n > c.max) return void issues.add(path, `must be at most ${c.max}, got ${n}`);
      return n;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      return void issues.add(path, `must be true or false, got ${describe(value)}`);
    }
    case 'select': {
      const options = c.options ?? [];
      if (typeof value === 'string' && options.includes(value)) return value;
      return void issues.add(path, `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}, got ${describe(value)}`);
    }
  }
}

/** `TITLE_TEXT` → `Title text`, `productName` → `Product name`. */
export function humanise(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const text = words.join(' ');
  return text ? text[0].toUpperCase() + text.slice(1) : key;
}

function int(value: unknown, path: string, issues: Issues, min: number, max: number): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  return void issues.add(path, `must be a whole number from ${min} to ${max}, got ${describe(value)}`);
}

function finite(value: unknown, path: string, issues: Issues): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return void issues.add(path, `must be a number, got ${describe(value)}`);
}

function boolean(value: unknown, path: string, issues: Issues): boolean | undefined {
  if (typeof value === 'boolean') return value;
  return void issues.add(path, `must be true or false, got ${describe(value)}`);
}

function readConfig(type: FieldType, raw: unknown, path: string, issues: Issues): FieldConfig {
  if (raw === undefined || raw === null) return type === 'select' ? (issues.add(`${path}.options`, 'is required for a select field'), {}) : {};
  if (!isRecord(raw)) return (issues.add(path, `must be an object, got ${describe(raw)}`), {});
  const known = CONFIG_KEYS[type];
  for (const key of Object.keys(raw)) {
    if (!(known as readonly string[]).includes(key)) {
      issues.add(`${path}.${key}`, known.length ? `is not a setting of a ${type} field (its settings: ${known.join(', ')})` : `is not a setting of a ${type} field (it has none)`);
    }
  }
  const out: FieldConfig = {};
  const at = (k: string) => `${path}.${k}`;
  if (raw.maxLength !== undefined) out.maxLength = int(raw.maxLength, at('maxLength'), issues, 1, FIELD_LIMITS.maxLength);
  if (raw.minLength !== undefined) out.minLength = int(raw.minLength, at('minLength'), issues, 0, FIELD_LIMITS.maxLength);
  if (out.minLength !== undefined && out.maxLength !== undefined && out.minLength > out.maxLength) issues.add(at('minLength'), 'must not be more than maxLength');
  if (raw.multiline !== undefined) out.multiline = boolean(raw.multiline, at('multiline'), issues);
  if (raw.aspectRatio !== undefined) {
    if (typeof raw.aspectRatio === 'string' && RATIO.test(raw.aspectRatio)) out.aspectRatio = raw.aspectRatio;
    else issues.add(at('aspectRatio'), `must be W:H with whole numbers, such as "16:9", got ${describe(raw.aspectRatio)}`);
  }
  if (raw.min !== undefined) out.min = finite(raw.min, at('min'), issues);
  if (raw.max !== undefined) out.max = finite(raw.max, at('max'), issues);
  if (out.min !== undefined && out.max !== undefined && out.min > out.max) issues.add(at('min'), 'must not be more than max');
  if (raw.step !== undefined) {
    out.step = finite(raw.step, at('step'), issues);
    if (out.step !== undefined && out.step <= 0) issues.add(at('step'), 'must be greater than 0');
  }
  if (raw.integer !== undefined) out.integer = boolean(raw.integer, at('integer'), issues);
  if (type === 'select') {
    const options = raw.options;
    if (!Array.isArray(options) || options.length === 0 || options.length > FIELD_LIMITS.options || !options.every((o) => typeof o === 'string')) {
      issues.add(at('options'), `must be a list of 1 to ${FIELD_LIMITS.options} strings`);
    } else if (new Set(options).size !== options.length) {
      issues.add(at('options'), 'must not repeat a value');
    } else {
      out.options = options as string[];
    }
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as FieldConfig;
}

function shortString(value: unknown, path: string, issues: Issues, max: number): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return void issues.add(path, `must be a non-empty string, got ${describe(value)}`);
  if (value.length > max) return void issues.add(path, `must be at most ${max} characters, got ${value.length}`);
  return value.trim();
}

const FIELD_KEYS = ['key', 'label', 'type', 'group', 'required', 'defaultValue', 'placeholder', 'config'] as const;

/**
 * Validates field definitions as a client sends them (import, dashboard create and update) and
 * fills their defaults: label from the key, type `text`, group `Media` for media and `Content`
 * otherwise, required false, defaultValue null, config {}. `fieldGroups`, when given, must name
 * every group used; when absent it lists the groups in order of first use. An optional field of a
 * type that has no empty value (every type but text) needs a defaultValue.
 */
export function readFieldDefinitions(
  rawFields: unknown,
  rawGroups: unknown,
  issues: Issues,
  paths: { fields: string; fieldGroups: string } = { fields: 'fields', fieldGroups: 'fieldGroups' },
): { fields: FieldDefinition[]; fieldGroups: string[] } {
  let groups: string[] | undefined;
  if (rawGroups !== undefined && rawGroups !== null) {
    if (!Array.isArray(rawGroups) || rawGroups.length > FIELD_LIMITS.groups) {
      issues.add(paths.fieldGroups, `must be a list of at most ${FIELD_LIMITS.groups} group names`);
    } else {
      groups = [];
      rawGroups.forEach((g, i) => {
        const name = shortString(g, `${paths.fieldGroups}[${i}]`, issues, FIELD_LIMITS.group);
        if (name === undefined) return;
        if (groups?.includes(name)) issues.add(`${paths.fieldGroups}[${i}]`, `repeats the group "${name}"`);
        else groups?.push(name);
      });
    }
  }
  if (!Array.isArray(rawFields)) {
    issues.add(paths.fields, `must be a list of field definitions, got ${describe(rawFields)}`);
    return { fields: [], fieldGroups: groups ?? [] };
  }
  if (rawFields.length > FIELD_LIMITS.fields) issues.add(paths.fields, `must hold at most ${FIELD_LIMITS.fields} fields, got ${rawFields.length}`);
  const out: FieldDefinition[] = [];
  const seen = new Set<string>();
  rawFields.forEach((raw, i) => {
    const path = `${paths.fields}[${i}]`;
    if (!isRecord(raw)) return void issues.add(path, `must be an object, got ${describe(raw)}`);
    unknownKeys(raw, FIELD_KEYS, path, issues);
    const key = typeof raw.key === 'string' && FIELD_KEY.test(raw.key) && raw.key.length <= FIELD_LIMITS.key ? raw.key : undefined;
    if (key === undefined) {
      issues.add(`${path}.key`, raw.key === undefined ? 'is required' : `must be 1 to ${FIELD_LIMITS.key} letters, digits, "_", "-" or "." (the {{KEY}} placeholder's name), got ${describe(raw.key)}`);
    } else if (seen.has(key)) {
      issues.add(`${path}.key`, `repeats the key "${key}"`);
    } else {
      seen.add(key);
    }
    let type: FieldType = 'text';
    if (raw.type !== undefined) {
      if (typeof raw.type === 'string' && (FIELD_TYPES as readonly string[]).includes(raw.type)) type = raw.type as FieldType;
      else issues.add(`${path}.type`, `must be one of ${FIELD_TYPES.join(', ')}, got ${describe(raw.type)}`);
    }
    const label = raw.label === undefined ? humanise(key ?? '') : shortString(raw.label, `${path}.label`, issues, FIELD_LIMITS.label);
    const media = MEDIA_FIELD_TYPES.includes(type);
    const group = raw.group === undefined ? (groups && groups.length === 1 ? groups[0] : media ? MEDIA_GROUP : DEFAULT_GROUP) : shortString(raw.group, `${path}.group`, issues, FIELD_LIMITS.group);
    if (group !== undefined && groups && !groups.includes(group)) {
      issues.add(`${path}.group`, `must be one of fieldGroups (${groups.map((g) => JSON.stringify(g)).join(', ')}), got ${JSON.stringify(group)}`);
    }
    const required = raw.required === undefined ? false : boolean(raw.required, `${path}.required`, issues);
    const placeholder = raw.placeholder === undefined ? undefined : shortString(raw.placeholder, `${path}.placeholder`, issues, FIELD_LIMITS.placeholder);
    const config = readConfig(type, raw.config, `${path}.config`, issues);
    let defaultValue: JsonValue = null;
    if (!isBlank(raw.defaultValue)) {
      defaultValue = checkValue({ type, config }, raw.defaultValue, `${path}.defaultValue`, issues) ?? null;
    } else if (type === 'text' && typeof raw.defaultValue === 'string') {
      defaultValue = '';
    }
    if (required === false && type !== 'text' && defaultValue === null && raw.defaultValue === undefined) {
      issues.add(`${path}.defaultValue`, `is needed by an optional ${type} field (what renders when no value is sent); give one, or make the field required`);
    }
    if (key === undefined || label === undefined || group === undefined || required === undefined) return;
    out.push({ key, label, type, group, required, defaultValue, ...(placeholder ? { placeholder } : {}), config });
  });
  const fieldGroups = groups ?? [...new Set(out.map((f) => f.group))];
  return { fields: out, fieldGroups };
}

/**
 * Field definitions derived from an edit's placeholders (decisions.md "Template import"): type
 * `image`/`video`/`audio` where a placeholder stands alone as a media `src`, else `text`. The
 * edit's own `merge` pairs (Shotstack's defaults) become default values; a media field without one
 * is required.
 */
export function deriveFields(edit: unknown): { fields: FieldDefinition[]; fieldGroups: string[] } {
  const defaults = new Map<string, JsonValue>();
  if (isRecord(edit) && Array.isArray(edit.merge)) {
    for (const pair of edit.merge) {
      if (isRecord(pair) && typeof pair.find === 'string') defaults.set(placeholderName(pair.find) ?? pair.find.trim(), (pair.replace ?? null) as JsonValue);
    }
  }
  // The edit's merge pairs are defaults, not uses (a `find` may be written with its braces).
  const body = isRecord(edit) ? { ...edit, merge: undefined } : edit;
  const fields = findPlaceholders(body).map((use): FieldDefinition => {
    const type: FieldType = use.srcOf ?? 'text';
    const media = type !== 'text';
    const given = defaults.get(use.name);
    const defaultValue: JsonValue = given === undefined || given === null ? null : media ? String(given) : typeof given === 'object' ? JSON.stringify(given) : String(given);
    return {
      key: use.name,
      label: humanise(use.name),
      type,
      group: media ? MEDIA_GROUP : DEFAULT_GROUP,
      required: media && defaultValue === null,
      defaultValue,
      config: {},
    };
  });
  return { fields, fieldGroups: [...new Set(fields.map((f) => f.group))] };
}
