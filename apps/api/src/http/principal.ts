import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError, validationFailed, type KeyMode } from '#libs/core';
import type { KeyView } from '#libs/keys';
import { type Plan } from '#libs/workspaces';
import type { UsableConnection } from '#libs/integrations';

interface KeyRouteCaller {
  workspaceId: string;
  mode: KeyMode;
  plan: Plan;
  scopes: ReadonlySet<string>;
}

/**
 * Who is calling a key route (set by AuthGuard): an API key, or a dashboard session standing in for
 * one (its member's role gives the scopes, X-Service-Mode the mode). Services read only the
 * workspace, plan and mode, the same for both.
 */
export type KeyPrincipal =
  | (KeyRouteCaller & { kind: 'key'; keyId: string; /** The key's row as checked this request (KeyAuthenticator's record). */ key: KeyView })
  | (KeyRouteCaller & { kind: 'session'; userId: string; role: 'owner' | 'member' });

/** Who is calling on a session route: the user, and the workspace named by X-Service-Org. */
export interface SessionPrincipal {
  kind: 'session';
  userId: string;
  workspaceId: string;
  role: 'owner' | 'member';
  plan: Plan;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: KeyPrincipal;
    session?: SessionPrincipal;
    /** The connected account of an @Integration() route. */
    integration?: UsableConnection;
  }
}

/** Injects the authenticated principal; a route without authentication has none and fails loudly. */
export const Principal = createParamDecorator((_: unknown, ctx: ExecutionContext): KeyPrincipal => {
  const principal = ctx.switchToHttp().getRequest<FastifyRequest>().principal;
  if (!principal) throw new ApiError('INTERNAL_ERROR', 'Route reads a principal but declares no key authentication');
  return principal;
});

/** Injects the session principal of a @Session() route. */
export const SessionUser = createParamDecorator((_: unknown, ctx: ExecutionContext): SessionPrincipal => {
  const session = ctx.switchToHttp().getRequest<FastifyRequest>().session;
  if (!session) throw new ApiError('INTERNAL_ERROR', 'Route reads a session but declares no session authentication');
  return session;
});

/** Injects the connected account of an @Integration() route (credentials unsealed: never log it). */
export const Connection = createParamDecorator((_: unknown, ctx: ExecutionContext): UsableConnection => {
  const integration = ctx.switchToHttp().getRequest<FastifyRequest>().integration;
  if (!integration) throw new ApiError('INTERNAL_ERROR', 'Route reads a connection but declares no @Integration()');
  return integration;
});

/** X-Service-Mode of a session: `live` (default) or `test` (the calls of a test key: free, watermarked renders; test records only). */
export function sessionMode(header: string | string[] | undefined): KeyMode {
  if (header === undefined || header === 'live' || header === 'test') return header ?? 'live';
  throw validationFailed({ 'headers.x-service-mode': ['must be live or test'] }, 'X-Service-Mode must be live or test');
}

/**
 * The caller's mode (issue 28): a key route's principal's (the key's prefix, or a session's
 * X-Service-Mode); on a session route (`/organization/...`), the session's X-Service-Mode, live by default.
 */
export const CallerMode = createParamDecorator((_: unknown, ctx: ExecutionContext): KeyMode => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest>();
  return req.principal?.mode ?? sessionMode(req.headers['x-service-mode']);
});
