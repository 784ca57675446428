import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, PLAN_FEATURES, type PlanFeature } from '#libs/core';
import { IntegrationsService, type IntegrationProvider } from '#libs/integrations';
import { AUTH_META, FEATURE_META, INTEGRATION_META, type RouteAuth } from './decorators.js';
import { KeyAuthentication } from './key-auth.js';
import { SessionGuard } from './session.strategy.js';

/**
 * Authenticates every route by its declaration: @Public() passes; @Session() runs the passport
 * `session` strategy; @Scopes() needs an API key (KeyAuthentication: §7 order, then the plan's rate
 * limit and monthly allowance), then @RequireFeature's plan feature (402), then @Integration's
 * connected account (402/409). A route that declares
 * none is refused: a programming error, which the route-walk test also fails on.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: KeyAuthentication,
    private readonly sessions: SessionGuard,
    private readonly integrations: IntegrationsService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    const auth = this.reflector.getAllAndOverride<RouteAuth | undefined>(AUTH_META, targets);
    if (!auth) throw new ApiError('INTERNAL_ERROR', 'This route declares no authentication');
    if (auth.kind === 'public') return true;
    const http = ctx.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    if (auth.kind === 'session') {
      req.sessionRoute = auth;
      return (await this.sessions.canActivate(ctx)) as boolean;
    }
    const { plan, workspaceId } = await this.keys.authenticate(req, http.getResponse<FastifyReply>(), auth);
    const feature = this.reflector.getAllAndOverride<PlanFeature | undefined>(FEATURE_META, targets);
    if (feature && !plan[feature]) throw new ApiError(PLAN_FEATURES[feature], `The ${plan.name} plan does not include ${feature.replace(/Enabled$/, '')}`);
    const provider = this.reflector.getAllAndOverride<IntegrationProvider | undefined>(INTEGRATION_META, targets);
    if (provider) req.integration = await this.integrations.use(workspaceId, plan, provider);
    return true;
  }
}
