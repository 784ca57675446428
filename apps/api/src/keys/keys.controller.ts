import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ok, paged, pagination, parseListQuery, type ListSpec } from '#libs/core';
import { KeysService, type ApiKey } from '#libs/keys';
import { ApiEnvelope, ApiErrors, ApiListQuery, KeyOnly, Session } from '../http/decorators.js';
import { Principal, SessionUser, type KeyPrincipal, type SessionPrincipal } from '../http/principal.js';
import { CreatedKeyDto, CreateKeyDto, CurrentKeyDto, KeyDto, RevokedKeyDto } from './keys.dto.js';

const KEY_LIST: ListSpec<'createdAt' | 'name'> = {
  sort: ['createdAt', 'name'],
  defaultSort: 'createdAt',
  sets: { mode: ['live', 'test'], status: ['active', 'revoked', 'expired'] },
};

function keyView(k: ApiKey) {
  return {
    id: k.id, mode: k.mode, name: k.name, hint: k.hint, scopes: k.scopes, ipAllowlist: k.ipAllowlist,
    expiresAt: k.expiresAt?.toISOString() ?? null, revokedAt: k.revokedAt?.toISOString() ?? null, createdAt: k.createdAt.toISOString(),
  };
}

@ApiTags('keys')
@Controller('v1/keys')
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Get('current')
  @KeyOnly()
  @ApiOperation({ summary: 'The calling API key and its workspace (any valid key)' })
  @ApiEnvelope(CurrentKeyDto)
  current(@Principal() principal: KeyPrincipal) {
    // The row KeyAuthentication checked this request (no read: it is current while the auth version is).
    if (principal.kind !== 'key') throw new ApiError('INVALID_API_KEY', 'The API key is not valid');
    const { key } = principal;
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

/**
 * The dashboard's API keys (what the contract leaves to the dashboard). The operation ids are the
 * ones these routes had under OrganizationController: clients generated from openapi.json keep them.
 */
@ApiTags('organization')
@Controller('organization/api-keys')
export class OrganizationKeysController {
  constructor(private readonly keys: KeysService) {}

  @Get()
  @Session()
  @ApiOperation({ operationId: 'OrganizationController_listKeys', summary: 'List the workspace\'s API keys (never the keys themselves)' })
  @ApiListQuery(KEY_LIST)
  @ApiEnvelope(KeyDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  async list(@SessionUser() s: SessionPrincipal, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(KEY_LIST, raw);
    const { rows, total } = await this.keys.list(s.workspaceId, q);
    return paged(rows.map(keyView), pagination(q, total));
  }

  @Post()
  @Session({ role: 'owner' })
  @ApiOperation({ operationId: 'OrganizationController_createKey', summary: 'Create an API key; the key is in this answer only' })
  @ApiEnvelope(CreatedKeyDto, { status: 201, description: 'Created; data.key is shown this once' })
  @ApiErrors('INVALID_REQUEST', 'LIMIT_APIKEYS')
  async create(@SessionUser() s: SessionPrincipal, @Body() body: CreateKeyDto) {
    const created = await this.keys.create({
      workspaceId: s.workspaceId, mode: body.mode ?? 'live', name: body.name ?? null, scopes: body.scopes,
      ipAllowlist: body.ipAllowlist, expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
    });
    return ok(created, 'API key created. Store it now: it is not shown again');
  }

  @Delete(':id')
  @Session({ role: 'owner' })
  @ApiOperation({ operationId: 'OrganizationController_revokeKey', summary: 'Revoke an API key (effective on its next request)' })
  @ApiEnvelope(RevokedKeyDto)
  @ApiErrors('API_KEY_NOT_FOUND')
  async revoke(@SessionUser() s: SessionPrincipal, @Param('id') id: string) {
    const key = await this.keys.revoke(id, s.workspaceId);
    return ok({ id: key.id, revoked: true }, 'API key revoked');
  }
}
