import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { ok } from '#libs/core';
import type { UsableConnection } from '#libs/integrations';
import { Integration, RequireFeature, Scopes } from '../apps/api/src/http/decorators.js';
import { Connection, Principal, type KeyPrincipal } from '../apps/api/src/http/principal.js';

class InnerDto {
  @IsInt() @Min(1) @Max(3) scale!: number;
}

class EchoDto {
  @IsString() @MaxLength(10) name!: string;
  @IsOptional() @ValidateNested() @Type(() => InnerDto) output?: InnerDto;
}

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

  @Post('echo')
  @HttpCode(200)
  @Scopes()
  echo(@Body() body: EchoDto) {
    return ok(body);
  }

  @Get('workflows')
  @Scopes()
  @RequireFeature('workflowsEnabled')
  workflows() {
    return ok({});
  }

  @Get('suite')
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  suite(@Connection() c: UsableConnection) {
    return ok({ connectionId: c.connection.id, hasKey: Boolean(c.credentials.apiKey ?? c.credentials.accessToken) });
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
