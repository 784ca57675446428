import { Body, Controller, Get, HttpCode, Inject, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { assertModeMayAct, ok, type AppConfig, type KeyMode } from '#libs/core';
import { checkCallbackUrl, WebhookEndpoints } from '#libs/webhooks';
import { WorkspacesService } from '#libs/workspaces';
import { ApiEnvelope, ApiErrors, Session } from '../http/decorators.js';
import { CallerMode, SessionUser, type SessionPrincipal } from '../http/principal.js';
import { APP_CONFIG } from '#libs/app';
import { CallbackSettingsDto, CallbackSettingsViewDto, RotatedSecretDto } from './webhooks.dto.js';

/**
 * The workspace's render callbacks (decisions.md "Webhooks"): the default callback URL used when a
 * render names none, and the secret that signs callbacks (rotated here, shown once). They are live
 * settings (live renders report there): a test-mode session reads them but may not change them.
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
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED', 'LIVE_MODE_REQUIRED')
  async set(@SessionUser() s: SessionPrincipal, @CallerMode() mode: KeyMode, @Body() body: CallbackSettingsDto) {
    assertModeMayAct(mode, 'live', 'workspace callback setting');
    const url = body.defaultCallbackUrl === null ? null : checkCallbackUrl(body.defaultCallbackUrl, this.config.env, 'defaultCallbackUrl');
    await this.workspaces.setDefaultCallback(s.workspaceId, url);
    return ok(await this.workspaces.callbackSettings(s.workspaceId), url ? 'Renders without a callback now notify this URL' : 'Default callback cleared');
  }

  @Post('rotate-secret')
  @HttpCode(200)
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Replace the callback signing secret; the new one is in this answer only (data.secret)' })
  @ApiEnvelope(RotatedSecretDto, { description: 'Rotated; data.secret is shown this once' })
  @ApiErrors('LIVE_MODE_REQUIRED')
  async rotate(@SessionUser() s: SessionPrincipal, @CallerMode() mode: KeyMode) {
    assertModeMayAct(mode, 'live', 'workspace callback secret');
    const { secret, sealed } = await this.workspaces.rotateCallbackSecret(s.workspaceId);
    await this.webhooks.resealCallbacks(s.workspaceId, sealed);
    return ok({ secret, secretHint: `whsec_...${secret.slice(-4)}` }, 'Callback secret rotated. Store it now: it is not shown again; callbacks are signed with it from now on');
  }
}
