import { ApiProperty } from '@nestjs/swagger';
import { PLAN_CODES } from '#libs/workspaces';
import { CREDIT_KINDS, LEDGER_REASONS } from '#libs/credits';

class KindBalanceDto {
  @ApiProperty({ description: 'Granted this period by the plan' }) granted!: number;
  @ApiProperty({ description: 'Bought on top (never expire)' }) topup!: number;
  @ApiProperty({ description: 'What a render can still take' }) available!: number;
  @ApiProperty({ description: 'Held by renders in flight' }) held!: number;
  @ApiProperty({ description: 'Used of the grant this period' }) used!: number;
}

class KindBalancesDto {
  @ApiProperty({ type: KindBalanceDto }) image!: KindBalanceDto;
  @ApiProperty({ type: KindBalanceDto }) video!: KindBalanceDto;
}

class GrantsDto {
  @ApiProperty() imageCredits!: number;
  @ApiProperty() videoCredits!: number;
}

/** §2 the credit balance (GET /credits, and in the sign-in answer). */
export class CreditsBalanceDto {
  @ApiProperty({ type: KindBalancesDto }) credits!: KindBalancesDto;
  @ApiProperty({ type: GrantsDto, description: 'The plan\'s grant per period' }) grants!: GrantsDto;
  @ApiProperty({ format: 'date-time', description: 'When the grant renews' }) periodEnd!: string;
  @ApiProperty({ enum: PLAN_CODES }) planCode!: string;
}

/** One change of a balance (the ledger, newest first). */
export class LedgerEntryDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: CREDIT_KINDS }) kind!: string;
  @ApiProperty({ enum: LEDGER_REASONS }) reason!: string;
  @ApiProperty({ description: 'The change of available (hold −n, release +n, capture 0)' }) amount!: number;
  @ApiProperty({ description: 'The credits the entry concerns' }) credits!: number;
  @ApiProperty({ required: false, description: 'The render of a hold, capture, release or refund' }) renderId?: string;
  @ApiProperty({ description: 'available after the change' }) balanceAfter!: number;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}
