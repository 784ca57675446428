import { parseIp, validationFailed, type KeyMode } from '#libs/core';
import { addressAllowed } from '#libs/outbound';
import { isReservedHeader } from './headers.js';
import { isMaskedValue } from './header-values.js';
import { isKnownVariable, parseTemplateObject, placeholdersIn, replacePlaceholders } from './template.js';
import { EVENT_MODES, type BodyFormat, type HeaderPair, type HttpMethod, type PayloadMode, type WebhookEvent } from './types.js';

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
  /** The modes of the events it receives (issue 28). */
  modes: KeyMode[];
}

/**
 * A create or update body of the webhook endpoint routes once the API's DTO has checked its shape:
 * the known fields only, their types, lengths and sets (`LIMITS`, `WEBHOOK_EVENTS`, `HTTP_METHODS`,
 * …), at most 20 headers of header-name keys and sendable values (`isHeaderName`, `isValidHeaderValue`).
 */
export interface EndpointInput {
  url?: string;
  description?: string | null;
  events?: readonly WebhookEvent[];
  method?: HttpMethod;
  bodyFormat?: BodyFormat;
  payloadMode?: PayloadMode;
  payloadTemplate?: string | null;
  headers?: readonly HeaderPair[];
  isActive?: boolean;
  /** A non-empty subset of live, test. */
  modes?: readonly KeyMode[];
}

export type FieldErrors = Record<string, string[]>;
export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

export interface ValidateOptions {
  env: 'development' | 'production';
  /** An update: only the fields present are checked, and no defaults are applied. */
  partial?: boolean;
  /** Used when `events` is absent (the key-authenticated route passes DEFAULT_EVENTS); else it is required. */
  defaultEvents?: readonly WebhookEvent[];
  /**
   * The caller's mode (issue 28): a test caller's endpoint takes test events only (`modes` defaults
   * to ["test"] and may not name live: a leaked test key must not be able to receive live events);
   * a live caller's defaults to both. Absent: the settings are checked as stored (no caller).
   */
  callerMode?: KeyMode;
}

/** Sizes of an endpoint's settings (§8 "Webhook endpoint"), checked by the API's DTO. */
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

class Collector {
  readonly errors: FieldErrors = {};
  add(path: string, message: string): void {
    (this.errors[path] ??= []).push(message);
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
}

function checkVariables(text: string, path: string, errors: Collector): void {
  for (const name of new Set(placeholdersIn(text))) {
    if (!isKnownVariable(name)) errors.add(path, `{{${name}}} is not a variable (see the list in the documentation: event.type, event.id, event.created, event.livemode, timestamp, data, data.<field>, org.id, endpoint.id)`);
  }
}

/** The outbound URL policy of `env` (§6 "A plain HTTP endpoint is refused outside development"). */
function checkUrl(value: string, env: ValidateOptions['env'], errors: Collector, path = 'url'): string {
  const url = value.trim();
  checkVariables(url, path, errors);
  let parsed: URL;
  try {
    parsed = new URL(replacePlaceholders(url, URL_PLACEHOLDER));
  } catch {
    errors.add(path, 'must be an absolute URL');
    return url;
  }
  const httpAllowed = env === 'development';
  if (parsed.protocol !== 'https:' && !(httpAllowed && parsed.protocol === 'http:')) {
    errors.add(path, httpAllowed ? 'must use http or https' : 'must use https');
  }
  if (parsed.username || parsed.password) errors.add(path, 'must not contain credentials');
  // Only what can be told without DNS; every delivery checks the resolved address again.
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const literal = parseIp(host);
  if ((literal && !addressAllowed(literal, env)) || (env === 'production' && (host === 'localhost' || host.endsWith('.localhost')))) {
    errors.add(path, 'must point to a public address');
  }
  return url;
}

/** Names the delivery sets itself, each name once, and variables that exist in each value. */
function checkHeaders(headers: readonly HeaderPair[], errors: Collector): HeaderPair[] {
  const seen = new Set<string>();
  headers.forEach(({ key, value }, i) => {
    if (isReservedHeader(key)) errors.add(`headers[${i}].key`, `${key} is set by the delivery and cannot be configured`);
    else if (seen.has(key.toLowerCase())) errors.add(`headers[${i}].key`, `${key} is already configured`);
    seen.add(key.toLowerCase());
    // A masked value (an update sending back the list as shown) stands for the stored value.
    if (!isMaskedValue(value)) checkVariables(value, `headers[${i}].value`, errors);
  });
  return headers.map(({ key, value }) => ({ key, value }));
}

function checkPayloadTemplate(value: string | null, errors: Collector): string | null {
  if (value === null) return null;
  if (!parseTemplateObject(value)) {
    errors.add('payloadTemplate', 'must be a JSON object (placeholders go inside strings, e.g. {"render": "{{data}}"})');
  } else checkVariables(value, 'payloadTemplate', errors);
  return value;
}

/**
 * The rules of a create (or, with `partial`, an update) body of the webhook endpoint routes (§4.6,
 * §4.7) that its shape cannot tell: the URL policy of the deployment, `{{variables}}` that exist, a
 * payload template that is a JSON object (and present in custom mode), headers the delivery owns or
 * names repeated; then the defaults. `input` is an `EndpointInput` (its shape checked by the API).
 * Errors are keyed by path (`headers[3].key`), as the 422 `errors` object.
 */
export function validateEndpointInput(input: unknown, opts: ValidateOptions & { partial: true }): Validated<Partial<EndpointSettings>>;
export function validateEndpointInput(input: unknown, opts: ValidateOptions & { partial?: false }): Validated<EndpointSettings>;
export function validateEndpointInput(input: unknown, opts: ValidateOptions): Validated<Partial<EndpointSettings>> | Validated<EndpointSettings>;
export function validateEndpointInput(input: unknown, opts: ValidateOptions): Validated<Partial<EndpointSettings>> {
  const errors = new Collector();
  const body = (input ?? {}) as EndpointInput;
  const partial = opts.partial === true;
  const out: Partial<EndpointSettings> = {};
  if (body.url !== undefined || !partial) out.url = checkUrl(body.url ?? '', opts.env, errors);
  if (body.description !== undefined) out.description = body.description ?? '';
  else if (!partial) out.description = '';
  if (body.events !== undefined) out.events = [...new Set(body.events)];
  else if (!partial) {
    if (opts.defaultEvents) out.events = [...opts.defaultEvents];
    else errors.add('events', 'is required');
  }
  if (body.method !== undefined) out.method = body.method;
  else if (!partial) out.method = 'POST';
  if (body.bodyFormat !== undefined) out.bodyFormat = body.bodyFormat;
  else if (!partial) out.bodyFormat = 'json';
  if (out.method === 'GET') out.bodyFormat = 'none'; // §4.7: GET carries no body, whatever was asked
  if (body.payloadMode !== undefined) out.payloadMode = body.payloadMode;
  else if (!partial) out.payloadMode = 'default';
  if (body.payloadTemplate !== undefined) out.payloadTemplate = checkPayloadTemplate(body.payloadTemplate, errors);
  else if (!partial) out.payloadTemplate = null;
  if (!partial && out.payloadMode === 'custom' && !out.payloadTemplate && !errors.errors.payloadTemplate) {
    errors.add('payloadTemplate', 'is required when payloadMode is custom');
  }
  if (body.headers !== undefined) out.headers = checkHeaders(body.headers, errors);
  else if (!partial) out.headers = [];
  if (body.isActive !== undefined) out.isActive = body.isActive;
  else if (!partial) out.isActive = true;
  if (body.modes !== undefined) {
    out.modes = EVENT_MODES.filter((m) => body.modes?.includes(m));
    if (opts.callerMode === 'test' && out.modes.includes('live')) {
      errors.add('modes', 'a test key or a test-mode session may not subscribe an endpoint to live events; use a live key');
    }
  } else if (!partial) out.modes = opts.callerMode === 'test' ? ['test'] : [...EVENT_MODES];

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

/**
 * A render's or the workspace's callback URL (decisions.md "Webhooks"): the policy of an endpoint's
 * url, else 422 VALIDATION_FAILED keyed by `path`. Answers the URL trimmed.
 */
export function checkCallbackUrl(value: string, env: ValidateOptions['env'], path: string): string {
  const errors = new Collector();
  const url = checkUrl(value, env, errors, path);
  if (!errors.empty) throw validationFailed(errors.errors, 'The callback URL is not usable');
  return url;
}
