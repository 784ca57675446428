import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, MaxLength } from 'class-validator';
import { CreditsBalanceDto } from '../credits/credits.dto.js';
import { MayOmit } from '../http/validation.js';

export class SendOtpDto {
  @ApiProperty({ example: '+4915112345678', description: 'International form; spaces, dashes and brackets are ignored' })
  @IsString() @MaxLength(32) phone!: string;
}

export class VerifyOtpDto {
  @ApiProperty({ example: '+4915112345678' }) @IsString() @MaxLength(32) phone!: string;
  @ApiProperty({ example: '123456' }) @IsString() @Length(1, 12) otp!: string;
}

export class RefreshDto {
  @ApiProperty({ example: 'rt_…', required: false, description: 'Required unless X-Service-Client: dashboard sends the refresh cookie' })
  @MayOmit() @IsString() @MaxLength(200) refreshToken?: string;
}

export class OtpSentDto {
  @ApiProperty({ enum: [true] }) sent!: boolean;
  @ApiProperty({ example: 300 }) expiresInSec!: number;
}

export class TokensDto {
  @ApiProperty({ description: 'Access token (JWT, 12 h)' }) token!: string;
  @ApiProperty({ description: 'Refresh token (60 days, rotated on use); absent with X-Service-Client: dashboard (it is in the HttpOnly cookie)', required: false })
  refreshToken?: string;
}

class SessionUserDto {
  @ApiProperty() id!: string;
  @ApiProperty() phone!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
}

class SessionOrgDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['owner', 'member'] }) role!: string;
}

class PlanDto {
  @ApiProperty() code!: string;
  @ApiProperty() name!: string;
}

export class SessionDto extends TokensDto {
  @ApiProperty({ type: SessionUserDto }) user!: SessionUserDto;
  @ApiProperty({ type: SessionOrgDto }) organization!: SessionOrgDto;
  @ApiProperty({ type: PlanDto }) plan!: PlanDto;
  @ApiProperty({ type: CreditsBalanceDto, description: 'The credit balance (GET /credits)' }) credits!: CreditsBalanceDto;
}


/** One workspace of the signed-in user (GET /auth/memberships). */
export class MembershipDto {
  @ApiProperty({ example: 'ws_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P', description: 'Send it as X-Service-Org' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['owner', 'member'] }) role!: string;
  @ApiProperty({ type: PlanDto }) plan!: PlanDto;
  @ApiProperty({ description: 'A suspended workspace answers 403 ORG_SUSPENDED' }) suspended!: boolean;
}
