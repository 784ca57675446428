import { Body, Controller, Get, HttpCode, Inject, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ok, type AppConfig } from '#libs/core';
import { checkCallbackUrl, WebhookEndpoints } from '#libs/webhooks';
import { WorkspacesService } from '#libs/workspaces';
import { ApiEnvelope, ApiErrors, Session } from '../http/decorators.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';
import { APP_CONFIG } from '../infra/tokens.js';
import { CallbackSettingsDto, CallbackSettingsViewDto, RotatedSecretDto } from './webhooks.dto.js';

/**
 * The workspace's render callbacks (decisions.md "Webhooks"): the default callback URL used when a
 * render names none, and the secret that signs callbacks (rotated here, shown once).
 */
@ApiTags('organization')
@Controller('organization/callback')
export class OrganizationCallbackController {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly webhooks: WebhookEndpoints,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Session()
  @ApiOperation({ summary: 'Default callback URL and a hint of the callback signing secret' })
  @ApiEnvelope(CallbackSettingsViewDto)
  async get(@SessionUser() s: SessionPrincipal) {
    return ok(await this.workspaces.callbackSettings(s.workspaceId));
  }

  @Patch()
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Set or clear (null) the default callback URL of render settle events' })
  @ApiEnvelope(CallbackSettingsViewDto)
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED')
  async set(@SessionUser() s: SessionPrincipal, @Body() body: CallbackSettingsDto) {
    const url = body.defaultCallbackUrl === null ? null : checkCallbackUrl(body.defaultCallbackUrl, this.config.env, 'defaultCallbackUrl');
    await this.workspaces.setDefaultCallback(s.workspaceId, url);
    return ok(await this.workspaces.callbackSettings(s.workspaceId), url ? 'Renders without a callback now notify this URL' : 'Default callback cleared');
  }

  @Post('rotate-secret')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Replace the callback signing secret; the new one is in this answer only (data.secret)' })
  @ApiEnvelope(RotatedSecretDto, { description: 'Rotated; data.secret is shown this once' })
  async rotate(@SessionUser() s: SessionPrincipal) {
    const { secret, sealed } = await this.workspaces.rotateCallbackSecret(s.workspaceId);
    await this.webhooks.resealCallbacks(s.workspaceId, sealed);
    return ok({ secret, secretHint: `whsec_...${secret.slice(-4)}` }, 'Callback secret rotated. Store it now: it is not shown again; callbacks are signed with it from now on');
  }
}
