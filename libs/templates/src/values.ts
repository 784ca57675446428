import { ApiError, validationFailed, type FieldErrors } from '#libs/core';
import { aspectMismatch, placeholderName, type JsonValue } from '#libs/edit-spec';
import { Issues, suggest, summarise } from './check.js';
import { checkValue, isBlank, type FieldDefinition } from './fields.js';

/** A Shotstack merge pair: `find` names a field (its braces tolerated), `replace` is its value. */
export interface MergePair {
  find: string;
  replace: unknown;
}

/**
 * The value forms a render body may carry (contract §4.1 `values`, also `fields` or `merge` pairs),
 * their shapes checked by the API's DTO.
 */
export interface ValueForms {
  values?: Readonly<Record<string, unknown>> | null;
  fields?: Readonly<Record<string, unknown>> | null;
  merge?: readonly MergePair[] | null;
}

export type ValuesCheck = { ok: true; values: Record<string, JsonValue> } | { ok: false; errors: FieldErrors };

/**
 * Turns `values` (an object), its alias `fields`, or Shotstack `merge` [{find, replace}] pairs into
 * one object keyed by field key. A `find` written with its braces (`"{{NAME}}"`) is tolerated.
 * Several forms in one body, or a field named twice in `merge`, answer 422 VALIDATION_FAILED with paths.
 */
export function normaliseValues(body: ValueForms): Record<string, unknown> {
  const issues = new Issues();
  const given = (['values', 'fields', 'merge'] as const).filter((k) => body[k] !== undefined && body[k] !== null);
  for (const k of given.slice(1)) issues.add(k, `send field values once: as values, fields or merge (this body also has ${given[0]})`);
  if (!issues.empty) throw validationFailed(issues.errors, 'Invalid field values');
  if (body.merge === undefined || body.merge === null) return { ...(body.values ?? body.fields) };
  const out: Record<string, unknown> = {};
  body.merge.forEach((pair, i) => {
    const key = placeholderName(pair.find) ?? pair.find.trim();
    if (Object.hasOwn(out, key)) issues.add(`merge[${i}].find`, `repeats "${key}"`);
    else out[key] = pair.replace;
  });
  if (!issues.empty) throw validationFailed(issues.errors, 'Invalid field values');
  return out;
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
