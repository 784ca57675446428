import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthService } from '#libs/auth';
import { ApiError, clientAddress, ipAllowed, isId, PLAN_FEATURES, PLANS, validationFailed, type AppConfig, type PlanCode, type PlanFeature } from '#libs/core';
import { KeyAuthenticator, keyMode, looksLikeApiKey, RequestMeter, type CachedKey } from '#libs/keys';
import { APP_CONFIG } from '../infra/tokens.js';
import { AUTH_META, FEATURE_META, type RouteAuth } from './decorators.js';

/** The token of an `Authorization: Bearer <token>` header, or null for any other value. */
function bearerToken(header: string | undefined): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? null;
}

/** Reloads allowed per request when the workspace's auth version keeps moving. */
const MAX_RELOADS = 3;

/**
 * Authenticates every route by its declaration: @Public() passes; @Scopes() needs an API key and
 * applies the §7 order (missing → unknown/revoked/expired → scope → IP → suspension), then
 * the plan's rate limit and monthly allowance in one Redis round trip.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: KeyAuthenticator,
    private readonly meter: RequestMeter,
    private readonly sessions: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    const auth = this.reflector.getAllAndOverride<RouteAuth | undefined>(AUTH_META, targets);
    if (!auth) throw new ApiError('INTERNAL_ERROR', 'This route declares no authentication');
    if (auth.kind === 'public') return true;
    const http = ctx.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (auth.kind === 'session') {
      await this.authenticateSession(req, auth);
      return true;
    }
    const entry = await this.authenticate(req, reply, auth);
    req.principal = {
      kind: 'key', keyId: entry.keyId, workspaceId: entry.workspaceId, mode: entry.mode, plan: entry.plan, scopes: entry.scopes,
    };
    const feature = this.reflector.getAllAndOverride<PlanFeature | undefined>(FEATURE_META, targets);
    if (feature && !entry.plan[feature]) {
      throw new ApiError(PLAN_FEATURES[feature], `The ${entry.plan.name} plan does not include ${feature.replace(/Enabled$/, '')}`);
    }
    return true;
  }

  private rawKey(req: FastifyRequest): string | null {
    const header = req.headers['x-api-key'];
    if (typeof header === 'string' && header) return header.trim();
    const token = bearerToken(req.headers.authorization);
    if (!token) return null;
    if (!looksLikeApiKey(token)) {
      throw new ApiError('NO_API_KEY', 'This endpoint takes an API key (pk_live_… or pk_test_…); a session token was sent');
    }
    return token;
  }

  /**
   * Session routes: Authorization: Bearer <session token>, then X-Service-Org membership.
   * An API key here is refused (SESSION_REQUIRED), as is a session token on a key route (NO_API_KEY).
   */
  private async authenticateSession(req: FastifyRequest, auth: Extract<RouteAuth, { kind: 'session' }>): Promise<void> {
    const token = bearerToken(req.headers.authorization);
    if (!token) {
      throw new ApiError('SESSION_REQUIRED', req.headers['x-api-key']
        ? 'This endpoint takes a dashboard session token; an API key was sent'
        : 'Send a session token in Authorization: Bearer');
    }
    if (looksLikeApiKey(token)) throw new ApiError('SESSION_REQUIRED', 'This endpoint takes a dashboard session token; an API key was sent');
    const userId = await this.sessions.authenticate(token);
    if (!auth.workspace) {
      req.session = { kind: 'session', userId, workspaceId: '', role: 'member', plan: PLANS.free };
      return;
    }
    const org = req.headers['x-service-org'];
    if (typeof org !== 'string' || !org) {
      throw validationFailed({ 'headers.x-service-org': ['is required: the workspace id'] }, 'Send the workspace id in the X-Service-Org header');
    }
    if (!isId('workspace', org)) throw new ApiError('NOT_A_MEMBER', 'You are not a member of this workspace');
    const member = await this.sessions.member(userId, org);
    if (member.workspace.suspendedAt) throw new ApiError('ORG_SUSPENDED', 'The workspace is suspended');
    if (auth.role === 'owner' && member.role !== 'owner') throw new ApiError('ROLE_REQUIRED', 'Only an owner of the workspace may do this');
    req.session = { kind: 'session', userId, workspaceId: org, role: member.role, plan: PLANS[member.workspace.plan as PlanCode] ?? PLANS.free };
  }

  /** The first failing check in contract order, or null. */
  private check(entry: CachedKey | null, auth: Extract<RouteAuth, { kind: 'key' }>, req: FastifyRequest): ApiError | null {
    if (!entry) return new ApiError('INVALID_API_KEY', 'The API key is not valid');
    if (entry.revoked) return new ApiError('INVALID_API_KEY', 'The API key has been revoked');
    if (entry.expiresAt !== null && Date.now() >= entry.expiresAt) return new ApiError('INVALID_API_KEY', 'The API key has expired');
    const missing = auth.scopes.filter((s) => !entry.scopes.has(s));
    if (missing.length) return new ApiError('INSUFFICIENT_SCOPE', `The API key lacks the scope ${missing.join(', ')}`);
    if (entry.ipRules.length) {
      const ip = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.config.trustedProxies);
      if (!ipAllowed(entry.ipRules, ip)) return new ApiError('IP_NOT_ALLOWED', 'The caller\'s address is not on the API key\'s allowlist');
    }
    if (entry.suspended) return new ApiError('ORG_SUSPENDED', 'The workspace is suspended');
    return null;
  }

  private async authenticate(req: FastifyRequest, reply: FastifyReply, auth: Extract<RouteAuth, { kind: 'key' }>): Promise<CachedKey> {
    const raw = this.rawKey(req);
    if (!raw) throw new ApiError('NO_API_KEY', 'Send an API key in x-api-key or Authorization: Bearer');
    if (!keyMode(raw)) throw new ApiError('INVALID_API_KEY', 'The API key is not valid');
    const hash = this.authenticator.hash(raw);
    let entry = await this.authenticator.lookup(hash);
    for (let reloads = 0; ; ) {
      const failure = this.check(entry, auth, req);
      if (failure) {
        // A refusal from cached state is confirmed against the current auth version first.
        if (entry && !entry.revoked && reloads < MAX_RELOADS && (await this.authenticator.isStale(entry))) {
          entry = await this.authenticator.load(hash);
          reloads++;
          continue;
        }
        throw failure;
      }
      const ok = entry as CachedKey;
      const outcome = await this.meter.count(ok);
      if (outcome.state === 'stale') {
        if (++reloads > MAX_RELOADS) throw new ApiError('INTERNAL_ERROR', 'Workspace settings kept changing; try again');
        entry = await this.authenticator.load(hash);
        continue;
      }
      const headers = {
        'x-ratelimit-limit': String(outcome.limit),
        'x-ratelimit-remaining': String(outcome.remaining),
        'x-ratelimit-reset': String(Math.ceil(outcome.resetAt / 1000)),
      };
      if (outcome.state === 'rate') {
        throw new ApiError('RATE_LIMIT_EXCEEDED', `Rate limit of ${outcome.limit} requests per minute exceeded`, {
          headers: { ...headers, 'retry-after': String(outcome.retryAfterSec) },
        });
      }
      if (outcome.state === 'month') {
        throw new ApiError('LIMIT_APIREQUESTS', `The ${ok.plan.name} plan's ${ok.plan.apiRequestsPerMonth} API requests for this month are used up`, { headers });
      }
      reply.headers(headers);
      return ok;
    }
  }
}
