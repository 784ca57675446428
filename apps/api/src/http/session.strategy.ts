import { Injectable, type ExecutionContext } from '@nestjs/common';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { AuthService } from '#libs/auth';
import { ApiError, isId, validationFailed } from '#libs/core';
import { planFor, PLANS } from '#libs/workspaces';
import { looksLikeApiKey } from '#libs/keys';
import { bearerToken } from './bearer.js';
import type { RouteAuth } from './decorators.js';
import type { SessionPrincipal } from './principal.js';

type SessionRoute = Extract<RouteAuth, { kind: 'session' }>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The session route's declaration, for the strategy (set by the global AuthGuard). */
    sessionRoute?: SessionRoute;
  }
}

/**
 * Dashboard sessions as a passport strategy (`session`): `Authorization: Bearer <session token>`,
 * then, unless the route says `workspace: false`, membership of the workspace named by
 * X-Service-Org (an owner where the route says so); each request counts toward the account's
 * ceiling (SESSION_LIMITS.requestsPerUser, 429). An API key here is refused (SESSION_REQUIRED). The
 * global AuthGuard also runs it for a session on a key route (`@Scopes`). Failures are the §7 and
 * house codes, in the order of SESSION_AUTH_ERRORS.
 */
@Injectable()
export class SessionStrategy extends PassportStrategy(Strategy, 'session') {
  constructor(private readonly sessions: AuthService) {
    super();
  }

  async validate(req: FastifyRequest): Promise<SessionPrincipal> {
    const route = req.sessionRoute ?? { kind: 'session', workspace: true };
    const token = bearerToken(req.headers.authorization);
    if (!token) {
      throw new ApiError('SESSION_REQUIRED', req.headers['x-api-key']
        ? 'This endpoint takes a dashboard session token; an API key was sent'
        : 'Send a session token in Authorization: Bearer');
    }
    if (looksLikeApiKey(token)) throw new ApiError('SESSION_REQUIRED', 'This endpoint takes a dashboard session token; an API key was sent');
    const userId = await this.sessions.authenticate(token);
    await this.sessions.countRequest(userId);
    if (!route.workspace) return { kind: 'session', userId, workspaceId: '', role: 'member', plan: PLANS.free };
    const org = req.headers['x-service-org'];
    if (typeof org !== 'string' || !org) {
      throw validationFailed({ 'headers.x-service-org': ['is required: the workspace id'] }, 'Send the workspace id in the X-Service-Org header');
    }
    if (!isId('workspace', org)) throw new ApiError('NOT_A_MEMBER', 'You are not a member of this workspace');
    const member = await this.sessions.member(userId, org);
    if (member.workspace.suspendedAt) throw new ApiError('ORG_SUSPENDED', 'The workspace is suspended');
    if (route.role === 'owner' && member.role !== 'owner') throw new ApiError('ROLE_REQUIRED', 'Only an owner of the workspace may do this');
    return { kind: 'session', userId, workspaceId: org, role: member.role, plan: planFor(member.workspace.plan, org) };
  }
}

/** Runs the `session` strategy; the principal lands on `req.session` (never a passport login session). */
@Injectable()
export class SessionGuard extends AuthGuard('session') {
  override getAuthenticateOptions(): { session: false; property: string } {
    return { session: false, property: 'session' };
  }

  override handleRequest<T>(err: unknown, user: T | false, _info: unknown, _context: ExecutionContext): T {
    if (err) throw err;
    if (!user) throw new ApiError('SESSION_REQUIRED', 'Send a session token in Authorization: Bearer');
    return user;
  }
}
