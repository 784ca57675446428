import { applyDecorators, SetMetadata, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiExtraModels, ApiQuery, ApiResponse, ApiSecurity, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS, type ErrorCode, type ListSpec, type Scope } from '#libs/core';
import { PLAN_FEATURES, type PlanFeature } from '#libs/workspaces';
import { ROLE_SCOPES } from '#libs/auth';
import type { IntegrationProvider } from '#libs/integrations';

export const AUTH_META = 'mr:auth';
export const FEATURE_META = 'mr:feature';
export const INTEGRATION_META = 'mr:integration';
/** Marks a route that answers a never-ending text/event-stream (tests that call every route leave it to its own test). */
export const STREAM_META = 'mr:stream';
const ERRORS_META = 'mr:errors';
/** The @nestjs/swagger metadata key of ApiResponse. */
const API_RESPONSE_META = 'swagger/apiResponse';

/** How a route authenticates; every route declares one (a test walks them all). */
export type RouteAuth =
  | { kind: 'public' }
  /** `sessions`: a dashboard session may call it too, its member's role standing in for scopes. */
  | { kind: 'key'; scopes: readonly Scope[]; sessions: boolean }
  | { kind: 'session'; role?: 'owner'; workspace: boolean };

/** The §7 auth failures of a key route, in the order they are checked, plus the meter's refusals. */
export const KEY_AUTH_ERRORS: readonly ErrorCode[] = [
  'NO_API_KEY', 'INVALID_API_KEY', 'INSUFFICIENT_SCOPE', 'IP_NOT_ALLOWED', 'ORG_SUSPENDED', 'RATE_LIMIT_EXCEEDED', 'LIMIT_APIREQUESTS',
  // Redis or the database down (decisions.md "HTTP and errors")
  'DEPENDENCY_UNAVAILABLE',
];

function errorSchema(codes: readonly ErrorCode[]) {
  return {
    allOf: [
      { $ref: '#/components/schemas/ErrorEnvelope' },
      { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } },
    ],
  };
}

/**
 * Documents the error codes a route can answer with, grouped by status. Repeated uses merge,
 * so auth decorators and route-specific codes add up.
 */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const holder = (descriptor ? descriptor.value : target) as object;
    const all: ErrorCode[] = [...new Set([...((Reflect.getMetadata(ERRORS_META, holder) as ErrorCode[]) ?? []), ...codes])];
    Reflect.defineMetadata(ERRORS_META, all, holder);
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of all) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
    // Each use re-documents every status with the whole list: the previous entries go first, or
    // @nestjs/swagger would join their descriptions ("A\n\nA | B").
    const documented = { ...((Reflect.getMetadata(API_RESPONSE_META, holder) as Record<string, unknown> | undefined) ?? {}) };
    for (const status of byStatus.keys()) delete documented[status];
    Reflect.defineMetadata(API_RESPONSE_META, documented, holder);
    for (const [status, list] of byStatus) {
      ApiResponse({ status, description: list.join(' | '), schema: errorSchema(list) })(target, key as string, descriptor as PropertyDescriptor);
    }
  };
}

/** The @nestjs/swagger metadata key of ApiOperation (its decorator would reset the summary). */
const API_OPERATION_META = 'swagger/apiOperation';

/**
 * A route open to anyone; documented with an explicit `security: []` (no credentials), merged into
 * the operation so that it survives the explorer, which drops an empty ApiSecurity.
 */
export function Public(): MethodDecorator {
  return (target, key, descriptor) => {
    SetMetadata(AUTH_META, { kind: 'public' } satisfies RouteAuth)(target, key, descriptor);
    const op = descriptor.value as object;
    Reflect.defineMetadata(API_OPERATION_META, { ...(Reflect.getMetadata(API_OPERATION_META, op) as object | undefined), security: [] }, op);
  };
}

/**
 * The failures of a dashboard session on a key route (decisions.md "Sessions (dashboard)"): its
 * token, X-Service-Org and membership (suspension and outages are in KEY_AUTH_ERRORS), the mode
 * header, the account's request ceiling.
 */
const SESSION_ON_KEY_ROUTE_ERRORS: readonly ErrorCode[] = ['TOKEN_EXPIRED', 'INVALID_TOKEN', 'VALIDATION_FAILED', 'NOT_A_MEMBER'];

/**
 * A route for API keys holding every scope named (none named: any valid key), and for dashboard
 * sessions (X-Service-Org) whose member's role grants those scopes (ROLE_SCOPES; else 403
 * ROLE_REQUIRED). Carries the OpenAPI security and the auth error codes with it.
 */
export function Scopes(...scopes: Scope[]) {
  const ownersOnly = scopes.some((s) => !ROLE_SCOPES.member.has(s));
  return applyDecorators(
    SetMetadata(AUTH_META, { kind: 'key', scopes, sessions: true } satisfies RouteAuth),
    ApiSecurity('apiKey'),
    ApiBearerAuth('bearerKey'),
    ApiSecurity({ session: [], org: [] }),
    ApiExtension('x-required-scopes', scopes),
    ApiErrors(...KEY_AUTH_ERRORS, ...SESSION_ON_KEY_ROUTE_ERRORS, ...(ownersOnly ? (['ROLE_REQUIRED'] as const) : [])),
  );
}

/** A route about the calling API key itself (`GET /v1/keys/current`): keys only, a session token is 401 NO_API_KEY. */
export function KeyOnly() {
  return applyDecorators(
    SetMetadata(AUTH_META, { kind: 'key', scopes: [], sessions: false } satisfies RouteAuth),
    ApiSecurity('apiKey'),
    ApiBearerAuth('bearerKey'),
    ApiErrors(...KEY_AUTH_ERRORS),
  );
}

/** The failures of a session route, in the order they are checked. */
export const SESSION_AUTH_ERRORS: readonly ErrorCode[] = [
  'SESSION_REQUIRED', 'TOKEN_EXPIRED', 'INVALID_TOKEN', 'RATE_LIMIT_EXCEEDED', 'VALIDATION_FAILED', 'NOT_A_MEMBER', 'ORG_SUSPENDED', 'DEPENDENCY_UNAVAILABLE',
];

/**
 * A dashboard route: a session token (Authorization: Bearer) and, unless `workspace: false`,
 * the workspace in X-Service-Org, of which the user must be a member (an owner when `role` says so).
 */
export function Session(opts: { role?: 'owner'; workspace?: boolean } = {}) {
  const workspace = opts.workspace ?? true;
  return applyDecorators(
    SetMetadata(AUTH_META, { kind: 'session', role: opts.role, workspace } satisfies RouteAuth),
    ApiSecurity(workspace ? { session: [], org: [] } : { session: [] }),
    ApiErrors(...SESSION_AUTH_ERRORS.filter((c) => workspace || !['VALIDATION_FAILED', 'NOT_A_MEMBER', 'ORG_SUSPENDED'].includes(c)), ...(opts.role ? (['ROLE_REQUIRED'] as const) : [])),
  );
}

/** Refuses workspaces whose plan lacks a feature, with the feature's 402 code. */
export function RequireFeature(feature: PlanFeature) {
  return applyDecorators(SetMetadata(FEATURE_META, feature), ApiErrors(PLAN_FEATURES[feature]));
}

/**
 * A route that uses a workspace's connected account at `provider`: after authentication and scope
 * (§7 order), the plan must include integrations (402 LIMIT_INTEGRATION_NOT_ALLOWED), the provider be
 * connected (409 INTEGRATION_NOT_CONNECTED) and its grant hold (409 INTEGRATION_REAUTH_REQUIRED). The
 * connection, credentials unsealed, is read with @Connection().
 */
export function Integration(provider: IntegrationProvider) {
  return applyDecorators(
    SetMetadata(INTEGRATION_META, provider),
    ApiExtension('x-integration', provider),
    ApiErrors('LIMIT_INTEGRATION_NOT_ALLOWED', 'INTEGRATION_NOT_CONNECTED', 'INTEGRATION_REAUTH_REQUIRED'),
  );
}

export interface EnvelopeOptions {
  /** The HTTP status of the answer (default 200). */
  status?: number;
  /** `data` is an array of the model. */
  isArray?: boolean;
  /** With isArray: the page-number list's `pagination` (default), or the cursor list's `nextPageToken` (`'cursor'`), or none (false). */
  paged?: boolean | 'cursor';
  description?: string;
  /** An example of `data` (shown in the envelope: beside a $ref it would be ignored). */
  example?: unknown;
  /** Other media types the same status may answer with (e.g. a render's bytes with format=binary). */
  binary?: readonly string[];
}

/**
 * Documents a success answer as the envelope {success, message, data: <dto>} (contract §1, convention 2),
 * with the list's `pagination` or `nextPageToken` where the route has them. `null` as the model: the
 * answer's data is null (a delete, a sign-out).
 */
export function ApiEnvelope(dto: Type | null, opts: EnvelopeOptions = {}) {
  const model = dto ? { $ref: getSchemaPath(dto) } : undefined;
  const data = !model ? { type: 'object', nullable: true, enum: [null], description: 'Always null' } : opts.isArray ? { type: 'array', items: model } : model;
  const properties: Record<string, object> = {
    success: { type: 'boolean', enum: [true] },
    message: { type: 'string' },
    data,
  };
  const required = ['success', 'message', 'data'];
  if (opts.isArray && opts.paged === 'cursor') {
    properties.nextPageToken = { type: 'string', nullable: true, description: 'Pass as pageToken for the next page; null on the last page' };
    required.push('nextPageToken');
  } else if (opts.isArray && opts.paged !== false) {
    properties.pagination = {
      type: 'object',
      required: ['page', 'limit', 'total', 'totalPages'],
      properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, totalPages: { type: 'integer' } },
    };
    required.push('pagination');
  }
  const schema = { type: 'object', required, properties };
  const binary = Object.fromEntries((opts.binary ?? []).map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));
  return applyDecorators(
    ...(dto ? [ApiExtraModels(dto)] : []),
    ApiResponse({
      status: opts.status ?? 200,
      description: opts.description ?? 'Success',
      ...(opts.binary || opts.example !== undefined
        ? { content: { 'application/json': { schema, ...(opts.example === undefined ? {} : { example: { success: true, message: 'OK', data: opts.example } }) }, ...binary } }
        : { schema }),
    }),
  );
}

/** Documents a success answer that is not the envelope (the Shotstack door answers in Shotstack's shapes). */
export function ApiRaw(dto: Type, opts: { status?: number; description?: string } = {}) {
  return applyDecorators(ApiExtraModels(dto), ApiResponse({ status: opts.status ?? 200, description: opts.description ?? 'Success', schema: { $ref: getSchemaPath(dto) } }));
}

/** Documents a server-sent event stream (text/event-stream) and marks the route as one (STREAM_META). */
export function ApiEventStream(description: string) {
  return applyDecorators(
    SetMetadata(STREAM_META, true),
    ApiResponse({ status: 200, description, content: { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events: `id:` (render events), `event:` (the type), `data:` (the event envelope as JSON); `:` comment lines are heartbeats' } } } }),
  );
}

/**
 * Documents the query of a list route from the ListSpec its handler parses (§1.6, libs/core
 * list-query): page, limit, sort and order (or the cursor list's limit and pageToken), the set
 * filters, date pairs, booleans and search. One spec, so the document cannot drift from the parser.
 */
export function ApiListQuery(spec: ListSpec) {
  const limit = spec.limit ?? { default: 20, max: 100 };
  const q = (name: string, description: string, extra: object = {}) => ApiQuery({ name, required: false, description, ...extra });
  return applyDecorators(
    ...(spec.cursor
      ? [q('pageToken', 'The nextPageToken of the previous page')]
      : [
          q('page', 'From 1', { type: 'integer', minimum: 1 }),
          q('sort', `Default ${spec.defaultSort}`, { enum: [...spec.sort] }),
          q('order', `Default ${spec.defaultOrder ?? 'desc'}`, { enum: ['asc', 'desc'] }),
        ]),
    q('limit', `1 to ${limit.max}, default ${limit.default}`, { type: 'integer', minimum: 1, maximum: limit.max }),
    ...Object.entries(spec.sets ?? {}).map(([name, set]) => q(name, `Comma-separated ${'pattern' in set ? set.describe : `values of: ${set.join(', ')}`}`)),
    ...(spec.dates ?? []).flatMap((d) => [q(`${d}From`, 'ISO 8601 date-time, inclusive', { format: 'date-time' }), q(`${d}To`, 'ISO 8601 date-time, inclusive', { format: 'date-time' })]),
    ...(spec.booleans ?? []).map((name) => q(name, 'true or false', { enum: ['true', 'false'] })),
    ...(spec.search ? [q('search', `Up to ${spec.search.maxLength} characters`, { maxLength: spec.search.maxLength })] : []),
  );
}
