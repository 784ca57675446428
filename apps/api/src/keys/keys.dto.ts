import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsISO8601, IsOptional, IsString, MaxLength } from 'class-validator';
import { SCOPES } from '#libs/core';
import { PLAN_CODES } from '#libs/workspaces';

class WorkspaceRefDto {
  @ApiProperty({ example: 'org_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: PLAN_CODES }) plan!: string;
}

export class CurrentKeyDto {
  @ApiProperty({ example: 'key_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: ['live', 'test'] }) mode!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ example: 'pk_live_…a1B2' }) hint!: string;
  @ApiProperty({ enum: SCOPES, isArray: true }) scopes!: string[];
  @ApiProperty({ type: [String], example: ['203.0.113.0/24'] }) ipAllowlist!: string[];
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) expiresAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ type: WorkspaceRefDto }) workspace!: WorkspaceRefDto;
}

export class CreateKeyDto {
  @ApiProperty({ enum: ['live', 'test'], required: false, default: 'live' })
  @IsOptional() @IsIn(['live', 'test']) mode?: 'live' | 'test';

  @ApiProperty({ required: false, maxLength: 200 })
  @IsOptional() @IsString() @MaxLength(200) name?: string;

  @ApiProperty({ enum: SCOPES, isArray: true, required: false, description: 'Default: every scope' })
  @IsOptional() @IsArray() @IsIn(SCOPES, { each: true }) scopes?: string[];

  @ApiProperty({ type: [String], required: false, example: ['203.0.113.0/24', '2001:db8::/32'] })
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) @MaxLength(64, { each: true }) ipAllowlist?: string[];

  @ApiProperty({ required: false, format: 'date-time' })
  @IsOptional() @IsISO8601({ strict: true }) expiresAt?: string;
}

/** An API key as the dashboard lists it (never the key itself). */
export class KeyDto {
  @ApiProperty({ example: 'key_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: ['live', 'test'] }) mode!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ example: 'pk_live_…a1B2' }) hint!: string;
  @ApiProperty({ enum: SCOPES, isArray: true }) scopes!: string[];
  @ApiProperty({ type: [String] }) ipAllowlist!: string[];
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) expiresAt!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) revokedAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

/** A new API key: the key itself, shown this once. */
export class CreatedKeyDto {
  @ApiProperty({ example: 'key_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ description: 'The API key; not shown again', example: 'pk_live_…' }) key!: string;
  @ApiProperty({ example: 'pk_live_…a1B2' }) hint!: string;
  @ApiProperty({ enum: ['live', 'test'] }) mode!: string;
  @ApiProperty({ enum: SCOPES, isArray: true }) scopes!: string[];
  @ApiProperty({ type: [String] }) ipAllowlist!: string[];
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) expiresAt!: string | null;
}

export class RevokedKeyDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: [true] }) revoked!: boolean;
}
