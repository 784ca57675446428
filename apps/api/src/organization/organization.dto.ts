import { ApiProperty } from '@nestjs/swagger';

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
