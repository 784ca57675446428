import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ok } from '#libs/core';
import { KeysService } from '#libs/keys';
import { ApiEnvelope, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { CurrentKeyDto } from './keys.dto.js';

@ApiTags('keys')
@Controller('v1/keys')
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Get('current')
  @Scopes()
  @ApiOperation({ summary: 'The calling API key and its workspace (any valid key)' })
  @ApiEnvelope(CurrentKeyDto)
  async current(@Principal() principal: KeyPrincipal) {
    const key = await this.keys.findById(principal.workspaceId, principal.keyId);
    if (!key) throw new ApiError('INVALID_API_KEY', 'The API key is not valid');
    return ok({
      id: key.id,
      mode: key.mode,
      name: key.name,
      hint: key.hint,
      scopes: key.scopes,
      ipAllowlist: key.ipAllowlist,
      expiresAt: key.expiresAt?.toISOString() ?? null,
      createdAt: key.createdAt.toISOString(),
      workspace: { id: principal.workspaceId, plan: principal.plan.code },
    });
  }
}
