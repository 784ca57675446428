import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsISO8601, IsOptional, IsString, MaxLength } from 'class-validator';
import { SCOPES } from '#libs/core';

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
