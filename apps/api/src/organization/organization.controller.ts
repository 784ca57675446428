import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthService, maskPhone } from '#libs/auth';
import { ok } from '#libs/core';
import { ApiEnvelope, Session } from '../http/decorators.js';
import { MemberDto } from './organization.dto.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';

/** Dashboard endpoints for what the contract leaves to the dashboard: the members (API keys: keys/). */
@ApiTags('organization')
@Controller('organization')
export class OrganizationController {
  constructor(private readonly auth: AuthService) {}

  @Get('members')
  @Session()
  @ApiOperation({ summary: 'Members of the workspace' })
  @ApiEnvelope(MemberDto, { isArray: true, paged: false })
  async members(@SessionUser() s: SessionPrincipal) {
    const rows = await this.auth.members(s.workspaceId);
    return ok(rows.map(({ user, membership }) => ({
      userId: user.id, name: user.name, phone: maskPhone(user.phone), role: membership.role, joinedAt: membership.createdAt.toISOString(),
    })));
  }
}
