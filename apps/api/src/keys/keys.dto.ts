import { ApiProperty } from '@nestjs/swagger';
import { PLAN_CODES, SCOPES } from '#libs/core';

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
