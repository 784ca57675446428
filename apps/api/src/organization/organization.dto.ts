import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ROLES, type Role } from '#libs/auth';

/** A member of the workspace (the phone masked). */
export class MemberDto {
  @ApiProperty({ example: 'usr_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) userId!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ example: '+44791…789' }) phone!: string;
  @ApiProperty({ enum: ['owner', 'member'] }) role!: string;
  @ApiProperty({ format: 'date-time' }) joinedAt!: string;
}

/** A member taken out of the workspace (DELETE /organization/members/{userId}). */
export class RemovedMemberDto {
  @ApiProperty({ example: 'usr_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) userId!: string;
  @ApiProperty({ enum: [true] }) removed!: boolean;
}

/** An owner's invitation of a member by phone (POST /organization/members). */
export class InviteMemberDto {
  @ApiProperty({ example: '+4915112345678', description: 'In international form; they sign in with a code sent to it' })
  @IsString() @MaxLength(32) phone!: string;

  @ApiProperty({ enum: ROLES, required: false, default: 'member' })
  @IsOptional() @IsIn(ROLES) role?: Role;

  @ApiProperty({ required: false, maxLength: 200, description: 'Kept for a number we do not know yet; a known user keeps their name' })
  @IsOptional() @IsString() @MaxLength(200) name?: string;
}

/** A member's new role (PATCH /organization/members/{userId}). */
export class ChangeRoleDto {
  @ApiProperty({ enum: ROLES }) @IsIn(ROLES) role!: Role;
}
