import { addressAllowed, parseIp } from '#libs/core';
import { isHeaderName, isReservedHeader } from './headers.js';
import { isKnownVariable, isValidHeaderValue, parseTemplateObject, placeholdersIn, replacePlaceholders } from './template.js';
import {
  BODY_FORMATS, HTTP_METHODS, PAYLOAD_MODES, WEBHOOK_EVENTS,
  type BodyFormat, type HeaderPair, type HttpMethod, type PayloadMode, type WebhookEvent,
} from './types.js';

/** An endpoint's settings as a caller may set them (§4.6, §4.7), defaults applied. */
export interface EndpointSettings {
  url: string;
  description: string;
  events: WebhookEvent[];
  method: HttpMethod;
  bodyFormat: BodyFormat;
  payloadMode: PayloadMode;
  /** Kept when payloadMode is `default`, so switching back to `custom` finds it again. */
  payloadTemplate: string | null;
  headers: HeaderPair[];
  isActive: boolean;
}

export type FieldErrors = Record<string, string[]>;
export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

export interface ValidateOptions {
  env: 'development' | 'production';
  /** An update: every field optional, no defaults, only the fields present are checked. */
  partial?: boolean;
  /** Used when `events` is absent (the key-authenticated route passes DEFAULT_EVENTS); else it is required. */
  defaultEvents?: readonly WebhookEvent[];
}

export const LIMITS = {
  urlLength: 2048,
  description: 200,
  headers: 20,
  headerName: 256,
  headerValue: 4096,
  payloadTemplate: 65_536,
} as const;

/** A placeholder stands in for each variable while a URL's shape is checked. */
const URL_PLACEHOLDER = 'placeholder';

const FIELDS = new Set(['url', 'description', 'events', 'method', 'bodyFormat', 'payloadMode', 'payloadTemplate', 'headers', 'isActive']);

class Collector {
  readonly errors: FieldErrors = {};
  add(path: string, message: string): void {
    (this.errors[path] ??= []).push(message);
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function oneOf<T extends string>(allowed: readonly T[], value: unknown, path: string, errors: Collector): T | undefined {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  errors.add(path, `must be one of ${allowed.join(', ')}`);
  return undefined;
}

function checkVariables(text: string, path: string, errors: Collector): void {
  for (const name of new Set(placeholdersIn(text))) {
    if (!isKnownVariable(name)) errors.add(path, `{{${name}}} is not a variable (see the list in the documentation: event.type, event.id, event.created, timestamp, data, data.<field>, org.id, endpoint.id)`);
  }
}

function checkUrl(value: unknown, env: ValidateOptions['env'], errors: Collector): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add('url', 'is required');
    return undefined;
  }
  const url = value.trim();
  if (url.length > LIMITS.urlLength) errors.add('url', `must be at most ${LIMITS.urlLength} characters`);
  checkVariables(url, 'url', errors);
  let parsed: URL;
  try {
    parsed = new URL(replacePlaceholders(url, URL_PLACEHOLDER));
  } catch {
    errors.add('url', 'must be an absolute URL');
    return url;
  }
  const httpAllowed = env === 'development';
  if (parsed.protocol !== 'https:' && !(httpAllowed && parsed.protocol === 'http:')) {
    errors.add('url', httpAllowed ? 'must use http or https' : 'must use https');
  }
  if (parsed.username || parsed.password) errors.add('url', 'must not contain credentials');
  // Only what can be told without DNS; every delivery checks the resolved address again.
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const literal = parseIp(host);
  if (env === 'production' && ((literal && !addressAllowed(literal, 'production')) || host === 'localhost' || host.endsWith('.localhost'))) {
    errors.add('url', 'must point to a public address');
  }
  return url;
}

function checkEvents(value: unknown, errors: Collector): WebhookEvent[] | undefined {
  if (!Array.isArray(value)) {
    errors.add('events', 'must be an array of event names');
    return undefined;
  }
  if (value.length === 0) errors.add('events', 'must name at least one event');
  const out: WebhookEvent[] = [];
  value.forEach((name: unknown, i) => {
    if (typeof name === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(name)) {
      if (!out.includes(name as WebhookEvent)) out.push(name as WebhookEvent);
    } else {
      errors.add(`events[${i}]`, `must be one of ${WEBHOOK_EVENTS.join(', ')}`);
    }
  });
  return out;
}

function checkHeaders(value: unknown, errors: Collector): HeaderPair[] | undefined {
  if (!Array.isArray(value)) {
    errors.add('headers', 'must be an array of {key, value}');
    return undefined;
  }
  if (value.length > LIMITS.headers) errors.add('headers', `must hold at most ${LIMITS.headers} headers`);
  const seen = new Set<string>();
  const out: HeaderPair[] = [];
  value.forEach((item: unknown, i) => {
    if (!isRecord(item)) {
      errors.add(`headers[${i}]`, 'must be an object {key, value}');
      return;
    }
    for (const extra of Object.keys(item).filter((k) => k !== 'key' && k !== 'value')) errors.add(`headers[${i}].${extra}`, 'is not a known field');
    const { key, value: headerValue } = item;
    let keyOk = false;
    if (typeof key !== 'string' || key === '') errors.add(`headers[${i}].key`, 'is required');
    else if (key.length > LIMITS.headerName) errors.add(`headers[${i}].key`, `must be at most ${LIMITS.headerName} characters`);
    else if (!isHeaderName(key)) errors.add(`headers[${i}].key`, 'must be a valid header name (letters, digits and !#$%&\'*+-.^_`|~)');
    else if (isReservedHeader(key)) errors.add(`headers[${i}].key`, `${key} is set by the delivery and cannot be configured`);
    else if (seen.has(key.toLowerCase())) errors.add(`headers[${i}].key`, `${key} is already configured`);
    else keyOk = true;
    if (typeof key === 'string') seen.add(key.toLowerCase());

    let valueOk = false;
    if (typeof headerValue !== 'string') errors.add(`headers[${i}].value`, 'must be a string');
    else if (headerValue.length > LIMITS.headerValue) errors.add(`headers[${i}].value`, `must be at most ${LIMITS.headerValue} characters`);
    else if (/[\r\n]/.test(headerValue)) errors.add(`headers[${i}].value`, 'must not contain line breaks (CR or LF)');
    else if (!isValidHeaderValue(headerValue)) errors.add(`headers[${i}].value`, 'must not contain control characters or characters beyond Latin-1');
    else {
      checkVariables(headerValue, `headers[${i}].value`, errors);
      valueOk = true;
    }
    if (keyOk && valueOk) out.push({ key: key as string, value: headerValue as string });
  });
  return out;
}

function checkPayloadTemplate(value: unknown, errors: Collector): string | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'string') {
    errors.add('payloadTemplate', 'must be a string holding a JSON object');
    return undefined;
  }
  if (value.length > LIMITS.payloadTemplate) errors.add('payloadTemplate', `must be at most ${LIMITS.payloadTemplate} characters`);
  else if (!parseTemplateObject(value)) {
    errors.add('payloadTemplate', 'must be a JSON object (placeholders go inside strings, e.g. {"render": "{{data}}"})');
  } else checkVariables(value, 'payloadTemplate', errors);
  return value;
}

/**
 * Checks a create (or, with `partial`, an update) body of the webhook endpoint routes (§4.6, §4.7)
 * and applies the defaults. Errors are keyed by path (`headers[3].key`), as the 422 `errors` object.
 */
export function validateEndpointInput(input: unknown, opts: ValidateOptions & { partial: true }): Validated<Partial<EndpointSettings>>;
export function validateEndpointInput(input: unknown, opts: ValidateOptions & { partial?: false }): Validated<EndpointSettings>;
export function validateEndpointInput(input: unknown, opts: ValidateOptions): Validated<Partial<EndpointSettings>> | Validated<EndpointSettings>;
export function validateEndpointInput(input: unknown, opts: ValidateOptions): Validated<Partial<EndpointSettings>> {
  const errors = new Collector();
  if (!isRecord(input)) {
    errors.add('body', 'must be a JSON object');
    return { ok: false, errors: errors.errors };
  }
  const partial = opts.partial === true;
  const has = (key: string) => input[key] !== undefined;
  for (const key of Object.keys(input).filter((k) => !FIELDS.has(k))) errors.add(key, 'is not a known field');

  const out: Partial<EndpointSettings> = {};
  if (has('url') || !partial) out.url = checkUrl(input.url, opts.env, errors);
  if (has('description')) {
    if (input.description === null) out.description = '';
    else if (typeof input.description !== 'string') errors.add('description', 'must be a string');
    else if (input.description.length > LIMITS.description) errors.add('description', `must be at most ${LIMITS.description} characters`);
    else out.description = input.description;
  } else if (!partial) out.description = '';
  if (has('events')) out.events = checkEvents(input.events, errors);
  else if (!partial) {
    if (opts.defaultEvents) out.events = [...opts.defaultEvents];
    else errors.add('events', 'is required');
  }
  if (has('method')) out.method = oneOf(HTTP_METHODS, input.method, 'method', errors);
  else if (!partial) out.method = 'POST';
  if (has('bodyFormat')) out.bodyFormat = oneOf(BODY_FORMATS, input.bodyFormat, 'bodyFormat', errors);
  else if (!partial) out.bodyFormat = 'json';
  if (out.method === 'GET') out.bodyFormat = 'none'; // §4.7: GET carries no body, whatever was asked
  if (has('payloadMode')) out.payloadMode = oneOf(PAYLOAD_MODES, input.payloadMode, 'payloadMode', errors);
  else if (!partial) out.payloadMode = 'default';
  if (has('payloadTemplate')) out.payloadTemplate = checkPayloadTemplate(input.payloadTemplate, errors);
  else if (!partial) out.payloadTemplate = null;
  if (!partial && out.payloadMode === 'custom' && !out.payloadTemplate && !errors.errors.payloadTemplate) {
    errors.add('payloadTemplate', 'is required when payloadMode is custom');
  }
  if (has('headers')) out.headers = checkHeaders(input.headers, errors);
  else if (!partial) out.headers = [];
  if (has('isActive')) {
    if (typeof input.isActive === 'boolean') out.isActive = input.isActive;
    else errors.add('isActive', 'must be a boolean');
  } else if (!partial) out.isActive = true;

  return errors.empty ? { ok: true, value: out } : { ok: false, errors: errors.errors };
}

/**
 * An update applied to stored settings: the patch is checked field by field, merged, and the result
 * checked as a whole (so `payloadMode: custom` still needs a template, stored or sent). Leaving GET
 * without naming a bodyFormat goes back to json: the stored `none` was forced, not chosen.
 */
export function mergeEndpointUpdate(current: EndpointSettings, patch: unknown, opts: Omit<ValidateOptions, 'partial' | 'defaultEvents'>): Validated<EndpointSettings> {
  const checked = validateEndpointInput(patch, { ...opts, partial: true });
  if (!checked.ok) return checked;
  const merged: EndpointSettings = { ...current, ...checked.value };
  if (current.method === 'GET' && merged.method !== 'GET' && checked.value.bodyFormat === undefined) merged.bodyFormat = 'json';
  return validateEndpointInput(merged, { env: opts.env });
}

/** A render's or the workspace's callback URL (decisions.md "Webhooks"): the rules of an endpoint's url. */
export function validateCallbackUrl(value: unknown, env: ValidateOptions['env'], path: string): { ok: true; url: string } | { ok: false; errors: FieldErrors } {
  const errors = new Collector();
  const url = checkUrl(value, env, errors);
  if (errors.empty && url !== undefined) return { ok: true, url };
  return { ok: false, errors: { [path]: Object.values(errors.errors).flat() } };
}
