import { ApiProperty } from '@nestjs/swagger';
import { CONNECTION_STATUSES, INTEGRATION_PROVIDERS } from '#libs/integrations';

export class ConnectionAccountDto {
  @ApiProperty({ nullable: true, type: String, example: 'ops@example.com' }) email!: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'Acme Ops' }) name!: string | null;
}

/** §2 Integration connection (credentials are never returned). */
export class ConnectionDto {
  @ApiProperty({ example: 'con_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: INTEGRATION_PROVIDERS }) provider!: string;
  @ApiProperty({ enum: CONNECTION_STATUSES, description: 'reauth_required: the provider refused the grant; its routes answer 409 INTEGRATION_REAUTH_REQUIRED until it is connected again' }) status!: string;
  @ApiProperty({ enum: ['provider', 'local'], description: 'local: the offline engine on this deployment (speech providers: pocketsphinx; voice-provider: espeak-ng)' }) engine!: string;
  @ApiProperty({ type: ConnectionAccountDto }) account!: ConnectionAccountDto;
  @ApiProperty({ format: 'date-time' }) connectedAt!: string;
  @ApiProperty({ nullable: true, type: String, description: 'When status is reauth_required: what the provider answered' }) reauthReason!: string | null;
}
