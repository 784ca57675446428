import { createHash } from 'node:crypto';
import { ApiError, validationFailed } from '#libs/core';
import type { MergePair } from '#libs/templates';

/**
 * The body of POST /v1/render and /v1/render/estimate (§4.1) once the API's DTO has checked its
 * shape: the fields it may hold, their types and sizes. `edit` is checked by the edit-spec parser.
 */
export interface RenderBody {
  templateId?: string;
  values?: Record<string, unknown> | null;
  fields?: Record<string, unknown> | null;
  merge?: readonly MergePair[] | null;
  edit?: Record<string, unknown>;
  output?: Record<string, unknown>;
  callback?: string;
  idempotencyKey?: string;
  metadata?: Record<string, unknown> | null;
}

/** Its query, checked likewise: `templateId` only on the estimate. */
export interface RenderQuery {
  format?: 'binary' | 'json';
  /** An output format; `jpg` is `jpeg`. */
  type?: string;
  scale?: number;
  /** A resolution; `1080` is `fhd`. */
  resolution?: string;
  fps?: number;
  templateId?: string;
}

/** GET /v1/render/estimate's query: a template's, or (none named) the output described by `type`, `durationSec`, `resolution`, `fps`, `size` (`WxH`). */
export interface EstimateQuery extends RenderQuery {
  durationSec?: number;
  size?: string;
}

/** A create-render (or estimate) request as the API hands it over. */
export interface RenderRequest {
  body: RenderBody;
  query: RenderQuery;
  /** The Idempotency-Key header. */
  idempotencyKey?: string;
  /** Body and query as the client sent them, which an idempotency key is bound to (`requestHash`); else `body` and `query`. */
  sent?: { body: unknown; query: unknown };
  /** A dashboard form's preview (a session's test-mode still, out of the workspace's history; `Render.preview`). */
  preview?: boolean;
  /** A preview of a video template: a low-resolution draft video (issue 29), drawn at DRAFT_SIDE and DRAFT_FPS. */
  draft?: boolean;
}

/** A create-render (or estimate) request mapped for the service; values still raw. */
export interface RenderInput {
  templateId?: string;
  edit?: Record<string, unknown>;
  /** `values`, `fields` or `merge`, as sent (normalised against the template later). */
  valueForms: Pick<RenderBody, 'values' | 'fields' | 'merge'>;
  output?: Record<string, unknown>;
  callback?: string;
  idempotencyKey?: string;
  metadata?: Record<string, unknown>;
  /** Query: raw bytes instead of JSON (stills only). */
  binary: boolean;
  scale: number;
  /** Query overrides of output: type (format), resolution, fps. */
  overrides: { format?: string; resolution?: string; fps?: number };
  /** A dashboard form's preview: a still (or a draft video), no event, no template use counted, kept an hour. */
  preview: boolean;
  /** A preview's draft video: the output made small and slow before it is checked and priced. */
  draft: boolean;
}

/** An Idempotency-Key: 1 to 255 visible ASCII characters (§1.4; also the messaging send's). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Maps a checked request to the service's input, applying the rules that span its parts (§4.1, §7):
 * neither templateId nor edit is 400 INVALID_REQUEST; both, an idempotency key of the wrong form
 * (header or body) or a header and body field that differ is 422 VALIDATION_FAILED.
 */
export function parseRenderInput({ body, query, idempotencyKey: header, preview = false, draft = false }: RenderRequest): RenderInput {
  const templateId = body.templateId ?? query.templateId;
  if (templateId === undefined && body.edit === undefined) {
    throw new ApiError('INVALID_REQUEST', 'Name a templateId or send a complete edit');
  }
  const errors: Record<string, string[]> = {};
  if (templateId !== undefined && body.edit !== undefined) errors.edit = ['send templateId or edit, not both'];
  if (header !== undefined && body.idempotencyKey !== undefined && body.idempotencyKey !== header) {
    errors.idempotencyKey = ['differs from the Idempotency-Key header; send one of them'];
  }
  const key = header ?? body.idempotencyKey;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    errors[header !== undefined ? 'headers.idempotency-key' : 'idempotencyKey'] = ['must be 1 to 255 visible ASCII characters'];
  }
  if (Object.keys(errors).length) throw validationFailed(errors, 'The render request is not valid');
  return {
    templateId,
    edit: body.edit,
    valueForms: { values: body.values, fields: body.fields, merge: body.merge },
    output: body.output,
    callback: body.callback,
    idempotencyKey: key,
    metadata: body.metadata ?? undefined,
    binary: query.format === 'binary',
    scale: query.scale ?? 1,
    overrides: {
      format: query.type === 'jpg' ? 'jpeg' : query.type,
      resolution: query.resolution === '1080' ? 'fhd' : query.resolution,
      fps: query.fps,
    },
    preview,
    draft: preview && draft,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  return value;
}

/** What an idempotency key is bound to: the body (without the key itself) and the query, as sent. */
export function requestHash({ body, query }: { body: unknown; query: unknown }): string {
  const b = isObject(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'idempotencyKey')) : body ?? {};
  return createHash('sha256').update(JSON.stringify(canonical({ body: b, query }))).digest('hex');
}

const VIDEO_FORMATS = ['mp4', 'gif'];

/**
 * GET /v1/render/estimate (spec decisions "HTTP methods"): a template named in the query is priced as
 * the POST form prices it; without one, the query alone describes the output, priced as an edit of
 * that format, size and duration (a single shape, which costs what any edit of that output costs), so
 * the render path's checks (plan ceilings, the video engine) apply unchanged. `durationSec` is
 * required for a video and refused for a still; `size` and `resolution` exclude each other; a query
 * naming nothing to price is 400 INVALID_REQUEST (§7: neither a template nor an edit).
 */
export function estimateRequest(query: EstimateQuery): RenderRequest {
  const { durationSec, size, ...rest } = query;
  const errors: Record<string, string[]> = {};
  if (rest.templateId !== undefined) {
    if (durationSec !== undefined) errors['query.durationSec'] = ['prices an output without a template; a template has its own duration'];
    if (size !== undefined) errors['query.size'] = ['prices an output without a template; use resolution to resize a template'];
    if (Object.keys(errors).length) throw validationFailed(errors, 'The estimate query is not valid');
    return { body: {}, query: rest };
  }
  if ([durationSec, size, rest.type, rest.resolution, rest.fps].every((v) => v === undefined)) {
    throw new ApiError('INVALID_REQUEST', 'Name a templateId, or describe the output in the query (type, durationSec, resolution, fps, size)');
  }
  const video = VIDEO_FORMATS.includes(rest.type ?? (durationSec !== undefined ? 'mp4' : 'png'));
  if (video && durationSec === undefined) errors['query.durationSec'] = ['is required to price a video (mp4, gif)'];
  if (!video && durationSec !== undefined) errors['query.durationSec'] = ['prices videos only (mp4, gif); a still has no duration'];
  if (size !== undefined && rest.resolution !== undefined) errors['query.size'] = ['send size or resolution, not both'];
  if (Object.keys(errors).length) throw validationFailed(errors, 'The estimate query is not valid');
  const [width, height] = (size ?? '').split('x').map(Number);
  const edit = {
    timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 1 } }, start: 0, length: durationSec ?? 1 }] }] },
    output: { format: video ? 'mp4' : 'png', ...(size !== undefined ? { size: { width, height } } : {}) },
  };
  return { body: { edit }, query: rest };
}
