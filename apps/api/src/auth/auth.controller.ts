import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthService } from '#libs/auth';
import { clientAddress, formatIp, ok, type AppConfig } from '#libs/core';
import { planFor } from '#libs/workspaces';
import { CreditsService } from '#libs/credits';
import { ApiEnvelope, ApiErrors, Public, Session } from '../http/decorators.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';
import { APP_CONFIG } from '#libs/app';
import { MembershipDto, OtpSentDto, RefreshDto, SendOtpDto, SessionDto, TokensDto, VerifyOtpDto } from './auth.dto.js';
import { handOut, presentedRefreshToken, setRefreshCookie } from './refresh-cookie.js';

const CLIENT_HEADER_DOC = {
  name: 'X-Service-Client',
  required: false,
  enum: ['dashboard'],
  description: 'dashboard: the refresh token travels in an HttpOnly cookie (service_refresh, on the auth routes\' path) instead of the body; refresh reads it only with this header',
};

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly credits: CreditsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('send-otp')
  @HttpCode(200)
  @Public()
  @ApiOperation({ summary: 'Send a sign-in code by SMS (same answer whether or not the number is known)' })
  @ApiEnvelope(OtpSentDto)
  @ApiErrors('INVALID_REQUEST', 'RATE_LIMIT_EXCEEDED')
  async sendOtp(@Body() body: SendOtpDto, @Req() req: FastifyRequest) {
    const ip = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.config.trustedProxies);
    return ok(await this.auth.sendOtp(body.phone, ip ? formatIp(ip) : 'unknown'), 'If the number has an account, a code is on its way');
  }

  @Post('verify-otp')
  @HttpCode(200)
  @Public()
  @ApiOperation({ summary: 'Exchange a sign-in code for a session' })
  @ApiHeader(CLIENT_HEADER_DOC)
  @ApiEnvelope(SessionDto)
  @ApiErrors('INVALID_REQUEST', 'INVALID_OTP')
  async verifyOtp(@Body() body: VerifyOtpDto, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const { user, tokens } = await this.auth.verifyOtp(body.phone, body.otp);
    const member = await this.auth.defaultMembership(user.id);
    const plan = planFor(member.workspace.plan, member.workspace.id);
    return ok({
      ...handOut(req, reply, this.config, tokens),
      user: { id: user.id, phone: user.phone, name: user.name },
      organization: { id: member.workspace.id, name: member.workspace.name, role: member.role },
      plan: { code: plan.code, name: plan.name },
      credits: await this.credits.balance(member.workspace.id, plan.code),
    }, 'Signed in');
  }

  @Post('refresh')
  @HttpCode(200)
  @Public()
  @ApiOperation({ summary: 'Rotate a refresh token (the body\'s, or with X-Service-Client: dashboard the cookie\'s) for a new access token' })
  @ApiHeader(CLIENT_HEADER_DOC)
  @ApiEnvelope(TokensDto)
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED', 'INVALID_REFRESH_TOKEN')
  async refresh(@Body() body: RefreshDto, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const tokens = await this.auth.refresh(presentedRefreshToken(req, body?.refreshToken));
    return ok(handOut(req, reply, this.config, tokens), 'Session refreshed');
  }

  @Get('memberships')
  @Session({ workspace: false })
  @ApiOperation({ summary: 'The signed-in user\'s workspaces with role and plan (the dashboard\'s workspace switcher; no X-Service-Org)' })
  @ApiEnvelope(MembershipDto, { isArray: true, paged: false })
  async memberships(@SessionUser() session: SessionPrincipal) {
    return ok((await this.auth.memberships(session.userId)).map(({ role, workspace }) => {
      const plan = planFor(workspace.plan, workspace.id);
      return { id: workspace.id, name: workspace.name, role, plan: { code: plan.code, name: plan.name }, suspended: workspace.suspendedAt !== null };
    }));
  }

  @Post('sign-out')
  @HttpCode(200)
  @Session({ workspace: false })
  @ApiOperation({ summary: 'Revoke every token of the account on every device' })
  @ApiEnvelope(null, { description: 'Signed out' })
  async signOut(@SessionUser() session: SessionPrincipal, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.auth.signOut(session.userId);
    setRefreshCookie(req, reply, this.config, null);
    return ok(null, 'Signed out everywhere');
  }
}
