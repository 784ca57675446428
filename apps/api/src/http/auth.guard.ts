import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ROLE_SCOPES } from '#libs/auth';
import { ApiError } from '#libs/core';
import { PLAN_FEATURES, type Plan, type PlanFeature } from '#libs/workspaces';
import { IntegrationsService, type IntegrationProvider } from '#libs/integrations';
import { AUTH_META, FEATURE_META, INTEGRATION_META, type RouteAuth } from './decorators.js';
import { KeyAuthentication } from './key-auth.js';
import { sessionMode, type SessionPrincipal } from './principal.js';
import { SessionGuard } from './session.strategy.js';

type KeyRoute = Extract<RouteAuth, { kind: 'key' }>;

/** What a route declares, read from its metadata once per handler (three reflector lookups a request otherwise). */
interface RouteRules {
  auth: RouteAuth | undefined;
  feature: PlanFeature | undefined;
  provider: IntegrationProvider | undefined;
}

/**
 * Authenticates every route by its declaration: @Public() passes; @Session() runs the passport
 * `session` strategy; @Scopes() needs an API key (KeyAuthentication: §7 order, then the plan's rate
 * limit and monthly allowance) or a dashboard session with X-Service-Org whose member's role grants
 * the scopes; then @RequireFeature's plan feature (402), then @Integration's connected account
 * (402/409). A route that declares none is refused: a programming error, which the route-walk test
 * also fails on.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: KeyAuthentication,
    private readonly sessions: SessionGuard,
    private readonly integrations: IntegrationsService,
  ) {}

  /** Per handler, per controller class (a handler inherited by two controllers may be declared differently in each). */
  private readonly rules = new WeakMap<object, WeakMap<object, RouteRules>>();

  private rulesOf(ctx: ExecutionContext): RouteRules {
    const handler = ctx.getHandler();
    const cls = ctx.getClass();
    let byClass = this.rules.get(handler);
    let found = byClass?.get(cls);
    if (!found) {
      const targets = [handler, cls];
      found = {
        auth: this.reflector.getAllAndOverride<RouteAuth | undefined>(AUTH_META, targets),
        feature: this.reflector.getAllAndOverride<PlanFeature | undefined>(FEATURE_META, targets),
        provider: this.reflector.getAllAndOverride<IntegrationProvider | undefined>(INTEGRATION_META, targets),
      };
      if (!byClass) this.rules.set(handler, (byClass = new WeakMap()));
      byClass.set(cls, found);
    }
    return found;
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const { auth, feature, provider } = this.rulesOf(ctx);
    if (!auth) throw new ApiError('INTERNAL_ERROR', 'This route declares no authentication');
    if (auth.kind === 'public') return true;
    const http = ctx.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    if (auth.kind === 'session') {
      req.sessionRoute = auth;
      return (await this.sessions.canActivate(ctx)) as boolean;
    }
    const { plan, workspaceId } = auth.sessions && this.keys.carriesSession(req)
      ? await this.sessionOnKeyRoute(ctx, req, auth)
      : await this.keys.authenticate(req, http.getResponse<FastifyReply>(), auth);
    if (feature && !plan[feature]) throw new ApiError(PLAN_FEATURES[feature], `The ${plan.name} plan does not include ${feature.replace(/Enabled$/, '')}`);
    if (provider) req.integration = await this.integrations.use(workspaceId, plan, provider);
    return true;
  }

  /**
   * A dashboard session on a key route: the session strategy (token, X-Service-Org, membership,
   * suspension, the account's request ceiling), then the role's scopes (403 ROLE_REQUIRED), then the
   * mode of X-Service-Mode (live by default). The principal is the key route's, so services see
   * the same workspace, plan and mode as with a key. Not metered against the workspace's plan rate
   * or monthly allowance (decisions.md "Sessions (dashboard)").
   */
  private async sessionOnKeyRoute(ctx: ExecutionContext, req: FastifyRequest, route: KeyRoute): Promise<{ plan: Plan; workspaceId: string }> {
    req.sessionRoute = { kind: 'session', workspace: true };
    await this.sessions.canActivate(ctx);
    const session = req.session as SessionPrincipal;
    const scopes = ROLE_SCOPES[session.role];
    const missing = route.scopes.filter((s) => !scopes.has(s));
    if (missing.length) throw new ApiError('ROLE_REQUIRED', `A ${session.role} of this workspace may not use ${missing.join(', ')}; an owner may`);
    const mode = sessionMode(req.headers['x-service-mode']);
    req.principal = { kind: 'session', userId: session.userId, role: session.role, workspaceId: session.workspaceId, plan: session.plan, mode, scopes };
    return session;
  }
}
