import { createHash } from 'node:crypto';
import { ApiError, type FieldErrors } from '#libs/core';
import { OUTPUT_FORMATS, RESOLUTIONS } from '#libs/edit-spec';

/** A create-render (or estimate) request after its shape is checked (§4.1); values still raw. */
export interface RenderInput {
  templateId?: string;
  edit?: Record<string, unknown>;
  /** `values`, `fields` or `merge`, exactly as sent (normalised against the template later). */
  valueForms: { values?: unknown; fields?: unknown; merge?: unknown };
  output?: Record<string, unknown>;
  callback?: string;
  idempotencyKey?: string;
  metadata?: Record<string, unknown>;
  /** Query: raw bytes instead of JSON (stills only). */
  binary: boolean;
  scale: number;
  /** Query overrides of output: type (format), resolution, fps. */
  overrides: { format?: string; resolution?: string; fps?: number };
}

const BODY_KEYS = ['templateId', 'values', 'fields', 'merge', 'edit', 'output', 'callback', 'idempotencyKey', 'metadata'];
const QUERY_KEYS = ['format', 'type', 'scale', 'resolution', 'fps', 'templateId'];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the body and query of POST /v1/render (and the estimate): 400 INVALID_REQUEST, with paths,
 * for a malformed body, unknown fields, bad query values, or neither templateId nor edit.
 */
export function parseRenderInput(body: unknown, query: Record<string, unknown>, header?: string, opts: { allowQueryTemplate?: boolean } = {}): RenderInput {
  const errors: FieldErrors = {};
  const add = (path: string, message: string) => (errors[path] ??= []).push(message);
  const b = body === undefined || body === null ? {} : body;
  if (!isObject(b)) throw new ApiError('INVALID_REQUEST', 'The body must be a JSON object');
  for (const key of Object.keys(b)) if (!BODY_KEYS.includes(key)) add(key, `unknown field "${key}"`);
  for (const key of Object.keys(query)) if (!QUERY_KEYS.includes(key) || (key === 'templateId' && !opts.allowQueryTemplate)) add(`query.${key}`, `unknown query parameter "${key}"`);

  const input: RenderInput = { valueForms: {}, binary: false, scale: 1, overrides: {} };
  const templateId = b.templateId ?? (opts.allowQueryTemplate ? query.templateId : undefined);
  if (templateId !== undefined) {
    if (typeof templateId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(templateId)) add('templateId', 'must be a template id');
    else input.templateId = templateId;
  }
  if (b.edit !== undefined) {
    if (!isObject(b.edit)) add('edit', 'must be an edit spec object (timeline and output)');
    else input.edit = b.edit;
  }
  if (input.templateId !== undefined && input.edit !== undefined) add('edit', 'send templateId or edit, not both');
  if (input.templateId === undefined && input.edit === undefined && !errors.templateId && !errors.edit) {
    throw new ApiError('INVALID_REQUEST', 'Name a templateId or send a complete edit', { errors: { templateId: ['templateId or edit is required'] } });
  }
  for (const k of ['values', 'fields', 'merge'] as const) if (b[k] !== undefined) input.valueForms[k] = b[k];
  if (b.output !== undefined) {
    if (!isObject(b.output)) add('output', 'must be an object of output settings');
    else input.output = b.output;
  }
  if (b.callback !== undefined) {
    if (typeof b.callback !== 'string' || !/^https?:\/\/\S+$/i.test(b.callback) || b.callback.length > 2048) add('callback', 'must be an http(s) URL of at most 2048 characters');
    else input.callback = b.callback;
  }
  if (b.metadata !== undefined && b.metadata !== null) {
    if (!isObject(b.metadata)) add('metadata', 'must be an object');
    else if (JSON.stringify(b.metadata).length > 8192) add('metadata', 'must be at most 8 KB of JSON');
    else input.metadata = b.metadata;
  }
  const key = header ?? (b.idempotencyKey as unknown);
  if (header !== undefined && b.idempotencyKey !== undefined && b.idempotencyKey !== header) {
    add('idempotencyKey', 'differs from the Idempotency-Key header; send one of them');
  } else if (key !== undefined) {
    if (typeof key !== 'string' || key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) add('idempotencyKey', 'must be 1 to 255 visible ASCII characters');
    else input.idempotencyKey = key;
  }

  const q = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const format = q('format');
  if (format !== undefined) {
    if (format === 'binary') input.binary = true;
    else if (format !== 'json') add('query.format', 'must be binary (raw bytes) or json');
  }
  const type = q('type');
  if (type !== undefined) {
    const normal = type === 'jpg' ? 'jpeg' : type;
    if (!(OUTPUT_FORMATS as readonly string[]).includes(normal)) add('query.type', `must be one of ${OUTPUT_FORMATS.join(', ')}`);
    else input.overrides.format = normal;
  }
  const scale = q('scale');
  if (scale !== undefined) {
    if (!/^[123]$/.test(scale)) add('query.scale', 'must be 1, 2 or 3 (§8 still scale)');
    else input.scale = Number(scale);
  }
  const resolution = q('resolution');
  if (resolution !== undefined) {
    const normal = resolution === '1080' ? 'fhd' : resolution;
    if (!(RESOLUTIONS as readonly string[]).includes(normal)) add('query.resolution', `must be one of ${RESOLUTIONS.join(', ')}`);
    else input.overrides.resolution = normal;
  }
  const fps = q('fps');
  if (fps !== undefined) {
    if (!/^\d{1,3}(\.\d+)?$/.test(fps)) add('query.fps', 'must be a frame rate');
    else input.overrides.fps = Number(fps);
  }
  if (Object.keys(errors).length) throw new ApiError('INVALID_REQUEST', `The render request is not valid: ${Object.keys(errors).join(', ')}`, { errors });
  return input;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  return value;
}

/** What an idempotency key is bound to: the body (without the key itself) and the query. */
export function requestHash(body: unknown, query: Record<string, unknown>): string {
  const b = isObject(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'idempotencyKey')) : body ?? {};
  return createHash('sha256').update(JSON.stringify(canonical({ body: b, query }))).digest('hex');
}
