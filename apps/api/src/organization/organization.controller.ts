import { Controller, Delete, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthService, maskPhone } from '#libs/auth';
import { ok } from '#libs/core';
import { ApiEnvelope, ApiErrors, Session } from '../http/decorators.js';
import { MemberDto, RemovedMemberDto } from './organization.dto.js';
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

  @Delete('members/:userId')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Remove a member from the workspace: their sessions lose it on their next request (the last owner cannot be removed)' })
  @ApiEnvelope(RemovedMemberDto)
  @ApiErrors('NOT_FOUND', 'VALIDATION_FAILED')
  async removeMember(@SessionUser() s: SessionPrincipal, @Param('userId') userId: string) {
    await this.auth.removeMember(s.workspaceId, userId);
    return ok({ userId, removed: true }, 'Member removed');
  }
}
