import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUrl, Length, MaxLength } from 'class-validator';
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

/** A provider as the dashboard shows it (issue 29): its connection, and whether this machine runs its offline engine. */
export class ProviderStateDto {
  @ApiProperty({ enum: INTEGRATION_PROVIDERS }) provider!: string;
  @ApiProperty({ nullable: true, type: ConnectionDto }) connection!: ConnectionDto | null;
  @ApiProperty({ enum: ['available', 'missing', 'none'], description: 'The offline engine (engine: local): available on this machine, missing (its programs are not installed), or none for this provider' }) localEngine!: string;
  @ApiProperty({ type: [String], description: 'When localEngine is missing: the programs to install' }) missingPrograms!: string[];
}

export class AuthorizeSuiteDto {
  @ApiPropertyOptional({ description: 'Another authorization server and API base, one of those the operator allows (GOOGLE_BASE_URLS; the CLI\'s --base-url takes any): the OAuth client\'s secret is sent to it' })
  @IsOptional() @IsString() @MaxLength(2048) @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) baseUrl?: string;
}

export class ConsentDto {
  @ApiProperty({ description: 'Send the user here: the provider\'s consent page' }) authorizationUrl!: string;
  @ApiProperty() state!: string;
  @ApiProperty({ format: 'date-time' }) expiresAt!: string;
  @ApiProperty({ description: 'Where the provider sends the user back: the dashboard\'s /integrations/callback' }) redirectUri!: string;
}

export class FinishConsentDto {
  @ApiProperty({ maxLength: 2048 }) @IsString() @Length(1, 2048) code!: string;
  @ApiProperty({ maxLength: 256 }) @IsString() @Length(1, 256) state!: string;
}

export class DisconnectedDto {
  @ApiProperty({ enum: INTEGRATION_PROVIDERS }) provider!: string;
  @ApiProperty() disconnected!: boolean;
}

export class ConnectKeyDto {
  @ApiProperty({ maxLength: 512, description: 'The provider\'s API key: checked against the provider before it is saved (sealed), never shown again' })
  @IsString() @Length(8, 512) apiKey!: string;

  @ApiPropertyOptional({ description: 'The provider\'s API root, when not its public one (an EU endpoint, a proxy); fetched with the SSRF checks of every provider call' })
  @IsOptional() @IsString() @MaxLength(2048) @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) baseUrl?: string;
}

export class CheckedDto {
  @ApiProperty({ enum: INTEGRATION_PROVIDERS }) provider!: string;
  @ApiProperty({ description: 'What was checked, in words' }) message!: string;
}
