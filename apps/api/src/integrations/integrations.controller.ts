import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ok } from '#libs/core';
import { IntegrationsService } from '#libs/integrations';
import { ApiEnvelope, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { ConnectionDto } from './integrations.dto.js';

/** §4.5 "List connected accounts" (connecting is the dashboard's or the CLI's: decisions.md). */
@ApiTags('integrations')
@Controller('v1/integrations')
export class IntegrationsController {
  constructor(private readonly integrations: IntegrationsService) {}

  @Get()
  @Scopes('integrations:read')
  @ApiOperation({ summary: 'List the workspace\'s connected accounts' })
  @ApiEnvelope(ConnectionDto, { isArray: true, paged: false, description: 'Every connection of the workspace, one per provider' })
  async list(@Principal() p: KeyPrincipal) {
    const rows = await this.integrations.list(p.workspaceId);
    return ok(rows.map((r) => this.integrations.view(r)));
  }
}
