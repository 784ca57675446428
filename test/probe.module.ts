import { Controller, Get, Module } from '@nestjs/common';
import { ok } from '#libs/core';
import { RequireFeature, Scopes } from '../apps/api/src/http/decorators.js';
import { Principal, type KeyPrincipal } from '../apps/api/src/http/principal.js';

/** Probe routes mounted only in tests, to exercise the scope and plan guards before real routes use them. */
@Controller('v1/probe')
class ProbeController {
  @Get('renders')
  @Scopes('renders:read')
  renders(@Principal() p: KeyPrincipal) {
    return ok({ workspaceId: p.workspaceId, mode: p.mode });
  }

  @Get('webhooks')
  @Scopes('webhooks:read', 'webhooks:write')
  webhooks() {
    return ok({});
  }

  @Get('workflows')
  @Scopes()
  @RequireFeature('workflowsEnabled')
  workflows() {
    return ok({});
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
