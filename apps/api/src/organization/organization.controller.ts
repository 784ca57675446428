import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthService, maskPhone, type Membership, type User } from '#libs/auth';
import { ok } from '#libs/core';
import { ApiEnvelope, ApiErrors, Session } from '../http/decorators.js';
import { ChangeRoleDto, InviteMemberDto, MemberDto, RemovedMemberDto } from './organization.dto.js';
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
    return ok(rows.map(memberView));
  }

  @Post('members')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Invite a member by phone: they sign in with a code sent to it (a number already a member: 422 on phone)' })
  @ApiEnvelope(MemberDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED')
  async invite(@SessionUser() s: SessionPrincipal, @Body() body: InviteMemberDto) {
    return ok(memberView(await this.auth.inviteMember(s.workspaceId, body.phone, body.role ?? 'member', body.name)), 'Member invited');
  }

  @Patch('members/:userId')
  @Session({ role: 'owner' })
  @ApiOperation({ summary: 'Change a member\'s role, from their next request (the last owner stays an owner: 422 on role)' })
  @ApiEnvelope(MemberDto)
  @ApiErrors('NOT_FOUND', 'VALIDATION_FAILED')
  async changeRole(@SessionUser() s: SessionPrincipal, @Param('userId') userId: string, @Body() body: ChangeRoleDto) {
    return ok(memberView(await this.auth.changeRole(s.workspaceId, userId, body.role)), 'Role changed');
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

/** A member as the dashboard shows it: the phone masked. */
function memberView({ user, membership }: { user: User; membership: Membership }): MemberDto {
  return { userId: user.id, name: user.name ?? null, phone: maskPhone(user.phone), role: membership.role, joinedAt: membership.createdAt.toISOString() };
}
