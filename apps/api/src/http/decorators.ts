import { applyDecorators, SetMetadata, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiExtraModels, ApiResponse, ApiSecurity, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS, PLAN_FEATURES, type ErrorCode, type PlanFeature, type Scope } from '#libs/core';
import type { IntegrationProvider } from '#libs/integrations';

export const AUTH_META = 'mr:auth';
export const FEATURE_META = 'mr:feature';
export const INTEGRATION_META = 'mr:integration';
const ERRORS_META = 'mr:errors';

/** How a route authenticates; every route declares one (a test walks them all). */
export type RouteAuth =
  | { kind: 'public' }
  | { kind: 'key'; scopes: readonly Scope[] }
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
    for (const [status, list] of byStatus) {
      ApiResponse({ status, description: list.join(' | '), schema: errorSchema(list) })(target, key as string, descriptor as PropertyDescriptor);
    }
  };
}

/** A route open to anyone. */
export const Public = () => SetMetadata(AUTH_META, { kind: 'public' } satisfies RouteAuth);

/**
 * A route for API keys holding every scope named (none named: any valid key). Carries the
 * OpenAPI security and the auth error codes with it.
 */
export function Scopes(...scopes: Scope[]) {
  return applyDecorators(
    SetMetadata(AUTH_META, { kind: 'key', scopes } satisfies RouteAuth),
    ApiSecurity('apiKey'),
    ApiBearerAuth('bearerKey'),
    ApiExtension('x-required-scopes', scopes),
    ApiErrors(...KEY_AUTH_ERRORS),
  );
}

/** The failures of a session route, in the order they are checked. */
export const SESSION_AUTH_ERRORS: readonly ErrorCode[] = [
  'SESSION_REQUIRED', 'TOKEN_EXPIRED', 'INVALID_TOKEN', 'VALIDATION_FAILED', 'NOT_A_MEMBER', 'ORG_SUSPENDED', 'DEPENDENCY_UNAVAILABLE',
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

/** Documents a success answer as the envelope {success, message, data: <dto>} (contract §1, convention 2). */
export function ApiEnvelope(dto: Type, opts: { status?: number; isArray?: boolean; paged?: boolean; description?: string } = {}) {
  const data = opts.isArray ? { type: 'array', items: { $ref: getSchemaPath(dto) } } : { $ref: getSchemaPath(dto) };
  const properties: Record<string, object> = {
    success: { type: 'boolean', enum: [true] },
    message: { type: 'string' },
    data,
  };
  if (opts.isArray && opts.paged !== false) {
    properties.pagination = {
      type: 'object',
      properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, totalPages: { type: 'integer' } },
    };
  }
  return applyDecorators(
    ApiExtraModels(dto),
    ApiResponse({
      status: opts.status ?? 200,
      description: opts.description ?? 'Success',
      schema: { type: 'object', required: ['success', 'message', 'data'], properties },
    }),
  );
}
