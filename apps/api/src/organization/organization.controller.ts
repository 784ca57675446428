import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthService, maskPhone } from '#libs/auth';
import { ok, paged, pagination, parseListQuery, type ListSpec } from '#libs/core';
import { KeysService, type ApiKey } from '#libs/keys';
import { ApiErrors, Session } from '../http/decorators.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';
import { CreateKeyDto } from './organization.dto.js';

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

/** Dashboard endpoints for what the contract leaves to the dashboard: API keys and members. */
@ApiTags('organization')
@Controller('organization')
export class OrganizationController {
  constructor(
    private readonly keys: KeysService,
    private readonly auth: AuthService,
  ) {}

  @Get('api-keys')
  @Session()
  @ApiOperation({ summary: 'List the workspace\'s API keys (never the keys themselves)' })
  @ApiErrors('INVALID_LIST_QUERY')
  async listKeys(@SessionUser() s: SessionPrincipal, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(KEY_LIST, raw);
    const { rows, total } = await this.keys.list(s.workspaceId, q);
    return paged(rows.map(keyView), pagination(q, total));
  }

  @Post('api-keys')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Create an API key; the key is in this answer only' })
  @ApiErrors('INVALID_REQUEST', 'LIMIT_APIKEYS')
  async createKey(@SessionUser() s: SessionPrincipal, @Body() body: CreateKeyDto) {
    const created = await this.keys.create({
      workspaceId: s.workspaceId, mode: body.mode ?? 'live', name: body.name ?? null, scopes: body.scopes,
      ipAllowlist: body.ipAllowlist, expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
    });
    return ok(created, 'API key created. Store it now: it is not shown again');
  }

  @Delete('api-keys/:id')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Revoke an API key (effective on its next request)' })
  @ApiErrors('API_KEY_NOT_FOUND')
  async revokeKey(@SessionUser() s: SessionPrincipal, @Param('id') id: string) {
    const key = await this.keys.revoke(id, s.workspaceId);
    return ok({ id: key.id, revoked: true }, 'API key revoked');
  }

  @Get('members')
  @Session()
  @ApiOperation({ summary: 'Members of the workspace' })
  async members(@SessionUser() s: SessionPrincipal) {
    const rows = await this.auth.members(s.workspaceId);
    return ok(rows.map(({ user, membership }) => ({
      userId: user.id, name: user.name, phone: maskPhone(user.phone), role: membership.role, joinedAt: membership.createdAt.toISOString(),
    })));
  }
}
