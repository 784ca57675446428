import type { EventEnvelope } from './types.js';

/** The values a delivery's placeholders resolve against (§6 "Variables"). */
export interface TemplateVars {
  event: EventEnvelope;
  /** Unix seconds, the same value as signed. */
  timestamp: number;
  orgId: string;
  endpointId: string;
}

/** A rendered value that cannot be sent (a header value that would split the header block). */
export class TemplateRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateRefused';
  }
}

const NAME = '[A-Za-z0-9_$.-]+';
/** `{{name}}`, with optional spaces inside the braces. */
const PLACEHOLDER = new RegExp(`\\{\\{\\s*(${NAME})\\s*\\}\\}`, 'g');
const WHOLE_PLACEHOLDER = new RegExp(`^\\{\\{\\s*(${NAME})\\s*\\}\\}$`);
const FIXED = new Set(['event.type', 'event.id', 'event.created', 'event.livemode', 'timestamp', 'data', 'org.id', 'endpoint.id']);
const DATA_PATH = /^data(\.[A-Za-z0-9_$-]+)+$/;

/** True for the variables of §6: the fixed names and `data.<path>`. */
export function isKnownVariable(name: string): boolean {
  return FIXED.has(name) || DATA_PATH.test(name);
}

/** Every placeholder name in `text`, in order of appearance. */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/** Replaces every placeholder with `replacement` (used to check a URL's shape before any delivery). */
export function replacePlaceholders(text: string, replacement: string): string {
  return text.replace(PLACEHOLDER, replacement);
}

/**
 * The value a variable resolves to, or `undefined` when the path is absent on this event (or the
 * name is not a variable at all: stored templates are rendered, never refused, at delivery time).
 * Only own properties are walked, so `data.constructor` or `data.__proto__` are absent, not functions.
 */
export function resolveVariable(name: string, vars: TemplateVars): unknown {
  switch (name) {
    case 'event.type': return vars.event.type;
    case 'event.id': return vars.event.id;
    case 'event.created': return vars.event.created;
    case 'event.livemode': return vars.event.livemode;
    case 'timestamp': return vars.timestamp;
    case 'data': return vars.event.data;
    case 'org.id': return vars.orgId;
    case 'endpoint.id': return vars.endpointId;
  }
  if (!DATA_PATH.test(name)) return undefined;
  let at: unknown = vars.event.data;
  for (const key of name.split('.').slice(1)) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** A value as text inside a longer string: absent and null give '', objects and arrays their JSON. */
function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function substitute(text: string, vars: TemplateVars, encode: (s: string) => string = (s) => s): string {
  return text.replace(PLACEHOLDER, (_m, name: string) => encode(asText(resolveVariable(name, vars))));
}

function renderValue(value: unknown, vars: TemplateVars): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_PLACEHOLDER.exec(value);
    if (whole) return resolveVariable(whole[1], vars) ?? null;
    return substitute(value, vars);
  }
  if (Array.isArray(value)) return value.map((v) => renderValue(v, vars));
  if (value !== null && typeof value === 'object') {
    // Keys are kept as written: substituting them could make two keys collide.
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = renderValue(v, vars);
    return out;
  }
  return value;
}

/** Parses a payload template; `null` unless it is a JSON object (arrays and scalars are not). */
export function parseTemplateObject(template: string): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(template);
  } catch {
    return null;
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
}

/**
 * A custom payload (§6): the template is parsed as JSON first, its string values are substituted,
 * and the result is an object again. A string that is exactly one placeholder takes the value with
 * its JSON type (`"{{data}}"` is the object, an absent path is null); placeholders inside longer
 * strings become text.
 */
export function renderPayload(template: string, vars: TemplateVars): Record<string, unknown> {
  const parsed = parseTemplateObject(template);
  if (!parsed) throw new TemplateRefused('The payload template is not a JSON object');
  return renderValue(parsed, vars) as Record<string, unknown>;
}

/** `renderPayload` serialised again, so quotes and newlines in values cannot break the body. */
export function renderTemplate(template: string, vars: TemplateVars): string {
  return JSON.stringify(renderPayload(template, vars));
}

/** The endpoint URL with each value URL-encoded (absent values are ''). */
export function renderUrl(url: string, vars: TemplateVars): string {
  return substitute(url, vars, encodeURIComponent);
}

/** Characters a header value may not carry: CR, LF and other controls, and anything beyond Latin-1. */
const BAD_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

export function isValidHeaderValue(value: string): boolean {
  return !BAD_HEADER_CHAR.test(value);
}

/**
 * A configured header value with its placeholders resolved (absent values are ''). A value that
 * would contain CR, LF or another character a header cannot carry is refused, never sent altered.
 */
export function renderHeaderValue(value: string, vars: TemplateVars): string {
  const out = substitute(value, vars);
  if (!isValidHeaderValue(out)) {
    throw new TemplateRefused(/[\r\n]/.test(out) ? 'A header value resolved to text with a line break' : 'A header value resolved to a character a header cannot carry');
  }
  return out;
}
