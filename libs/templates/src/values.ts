import { ApiError, type FieldErrors } from '#libs/core';
import { aspectMismatch, placeholderName, type JsonValue } from '#libs/edit-spec';
import { describe, isRecord, Issues, suggest, summarise } from './check.js';
import { checkValue, isBlank, type FieldDefinition } from './fields.js';

/** The value forms a render body may carry (contract §4.1 `values`, also `fields` or `merge` pairs). */
export interface ValueForms {
  values?: unknown;
  fields?: unknown;
  merge?: unknown;
}

export type ValuesCheck = { ok: true; values: Record<string, JsonValue> } | { ok: false; errors: FieldErrors };

/**
 * Turns `values` (an object), its alias `fields`, or Shotstack `merge` [{find, replace}] pairs into
 * one object keyed by field key. A `find` written with its braces (`"{{NAME}}"`) is tolerated.
 * Several forms in one body, or a malformed one, answer 400 INVALID_REQUEST with paths.
 */
export function normaliseValues(body: ValueForms): Record<string, unknown> {
  const issues = new Issues();
  const given = (['values', 'fields', 'merge'] as const).filter((k) => body[k] !== undefined && body[k] !== null);
  if (given.length > 1) {
    for (const k of given.slice(1)) issues.add(k, `send field values once: as values, fields or merge (this body also has ${given[0]})`);
    throw invalid(issues);
  }
  const form = given[0];
  if (form === undefined) return {};
  const raw = body[form];
  if (form !== 'merge') {
    if (!isRecord(raw)) {
      issues.add(form, `must be an object keyed by field key, got ${describe(raw)}`);
      throw invalid(issues);
    }
    return { ...raw };
  }
  if (!Array.isArray(raw)) {
    issues.add('merge', `must be a list of {find, replace} pairs, got ${describe(raw)}`);
    throw invalid(issues);
  }
  const out: Record<string, unknown> = {};
  raw.forEach((pair, i) => {
    const path = `merge[${i}]`;
    if (!isRecord(pair)) return void issues.add(path, `must be a {find, replace} pair, got ${describe(pair)}`);
    for (const key of Object.keys(pair)) if (key !== 'find' && key !== 'replace') issues.add(`${path}.${key}`, `unknown field "${key}"${suggest(key, ['find', 'replace'])}`);
    if (typeof pair.find !== 'string' || pair.find.trim() === '') return void issues.add(`${path}.find`, `must be the field key, got ${describe(pair.find)}`);
    if (!('replace' in pair)) return void issues.add(`${path}.replace`, 'is required');
    const key = placeholderName(pair.find) ?? pair.find.trim();
    if (Object.hasOwn(out, key)) return void issues.add(`${path}.find`, `repeats "${key}"`);
    out[key] = pair.replace;
  });
  if (!issues.empty) throw invalid(issues);
  return out;
}

function invalid(issues: Issues): ApiError {
  return new ApiError('INVALID_REQUEST', `Invalid field values: ${issues.summary()}`, { errors: issues.errors });
}

/**
 * Checks render values against a template's fields and returns every field's value: the one sent
 * (normalised), else the field's default, else an empty text. Failures are keyed `values.<key>`:
 * a required field without a value, a value of the wrong type, text longer than `maxLength`, a media
 * value that is not an http(s) URL, a select value outside its options, a number outside its bounds,
 * and keys that are not fields (with a did-you-mean hint).
 *
 * An image field's `config.aspectRatio` can only be checked once the file is fetched: see
 * `aspectRules` and `checkAspect`, which the renderer applies after downloading.
 */
export function checkValues(template: { fields: readonly FieldDefinition[] }, values: Readonly<Record<string, unknown>>, opts: { root?: string } = {}): ValuesCheck {
  const root = opts.root ?? 'values';
  const issues = new Issues();
  const keys = template.fields.map((f) => f.key);
  for (const key of Object.keys(values)) {
    if (!keys.includes(key)) {
      issues.add(`${root}.${key}`, `"${key}" is not a field of this template${suggest(key, keys)}${keys.length ? `; fields: ${keys.join(', ')}` : '; it has no fields'}`);
    }
  }
  const out: Record<string, JsonValue> = {};
  for (const field of template.fields) {
    const path = `${root}.${field.key}`;
    const sent = Object.hasOwn(values, field.key) ? values[field.key] : undefined;
    if (isBlank(sent)) {
      if (!isBlank(field.defaultValue)) out[field.key] = field.defaultValue;
      else if (field.required) issues.add(path, `is required (${field.label})`);
      else out[field.key] = field.type === 'text' ? '' : field.defaultValue;
      continue;
    }
    const value = checkValue(field, sent, path, issues);
    if (value !== undefined) out[field.key] = value;
  }
  return issues.empty ? { ok: true, values: out } : { ok: false, errors: issues.errors };
}

/** checkValues for request handlers: the merged values, or 422 TEMPLATE_VALIDATION_FAILED with `errors`. */
export function validateValues(template: { fields: readonly FieldDefinition[] }, values: Readonly<Record<string, unknown>>, opts: { root?: string } = {}): Record<string, JsonValue> {
  const result = checkValues(template, values, opts);
  if (result.ok) return result.values;
  throw new ApiError('TEMPLATE_VALIDATION_FAILED', `Field values failed validation: ${summarise(result.errors)}`, { errors: result.errors });
}

/** An image field whose picture must have a given ratio; checked by the renderer after fetching. */
export interface AspectRule {
  key: string;
  /** Error path, `values.<key>`. */
  path: string;
  url: string;
  aspectRatio: string;
}

/** The aspect-ratio rules that apply to merged values (fields with `config.aspectRatio` and a URL). */
export function aspectRules(template: { fields: readonly FieldDefinition[] }, merged: Readonly<Record<string, JsonValue>>, root = 'values'): AspectRule[] {
  return template.fields.flatMap((f) => {
    const url = merged[f.key];
    return f.type === 'image' && f.config.aspectRatio && typeof url === 'string' && url
      ? [{ key: f.key, path: `${root}.${f.key}`, url, aspectRatio: f.config.aspectRatio }]
      : [];
  });
}

/** Why a fetched picture breaks its rule (a message for `errors[rule.path]`), or null when it fits. */
export function checkAspect(rule: Pick<AspectRule, 'aspectRatio'>, size: { width: number; height: number }): string | null {
  return aspectMismatch(rule.aspectRatio, size);
}
