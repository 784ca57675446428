import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, IsString, IsUrl, Length, Max, MaxLength, Min } from 'class-validator';
import { CONNECTION_STATUSES, INTEGRATION_PROVIDERS } from '#libs/integrations';
import { CONNECTABLE_CHANNELS } from '#libs/messaging';

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
export class ConnectedChannelDto {
  @ApiProperty({ enum: CONNECTABLE_CHANNELS }) channel!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Who sends: the WhatsApp display number, the SMS number or messaging service, the email sender', example: '+1 555 0100' }) identifier!: string | null;
}

export class ProviderStateDto {
  @ApiProperty({ enum: INTEGRATION_PROVIDERS }) provider!: string;
  @ApiProperty({ nullable: true, type: ConnectionDto }) connection!: ConnectionDto | null;
  @ApiProperty({ enum: ['available', 'missing', 'none'], description: 'The offline engine (engine: local): available (a worker reported within 90 s that it has every program; with no report, the API machine), missing (no worker has them all), or none for this provider' }) localEngine!: string;
  @ApiProperty({ type: [String], description: 'When localEngine is missing: the programs the best-equipped worker lacks' }) missingPrograms!: string[];
  @ApiProperty({ type: [ConnectedChannelDto], description: 'messaging-provider: the channels connected (no secret); empty for the other providers' }) channels!: ConnectedChannelDto[];
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

const secret = (what: string) => ({ maxLength: 1024, description: `${what}: sealed, never shown again` });

/**
 * One messaging channel's account (the fields of the CLI's integration:connect --channel): which are
 * required depends on the channel (422 naming each missing one), and the account is checked against
 * its provider before it is saved.
 */
export class ConnectChannelDto {
  @ApiPropertyOptional(secret('primary_chat: the WhatsApp Cloud API access token')) @IsOptional() @IsString() @Length(8, 1024) accessToken?: string;
  @ApiPropertyOptional({ maxLength: 64, description: 'primary_chat: the phone number id' }) @IsOptional() @IsString() @Length(1, 64) phoneNumberId?: string;
  @ApiPropertyOptional({ maxLength: 64, description: 'primary_chat: the WhatsApp Business Account id' }) @IsOptional() @IsString() @Length(1, 64) wabaId?: string;
  @ApiPropertyOptional({ maxLength: 32, description: 'primary_chat: the number as shown (read from the provider when omitted)' }) @IsOptional() @IsString() @MaxLength(32) displayNumber?: string;
  @ApiPropertyOptional(secret('primary_chat: the Meta app\'s secret (status webhooks are signed with it)')) @IsOptional() @IsString() @Length(8, 1024) appSecret?: string;
  @ApiPropertyOptional({ maxLength: 256, description: 'primary_chat: what Meta sends as hub.verify_token' }) @IsOptional() @IsString() @Length(1, 256) verifyToken?: string;
  @ApiPropertyOptional({ maxLength: 64, description: 'sms: the Twilio account SID' }) @IsOptional() @IsString() @Length(1, 64) accountSid?: string;
  @ApiPropertyOptional(secret('sms: the Twilio auth token')) @IsOptional() @IsString() @Length(8, 1024) authToken?: string;
  @ApiPropertyOptional({ maxLength: 64, description: 'sms: a messaging service SID, instead of a from number' }) @IsOptional() @IsString() @Length(1, 64) messagingServiceSid?: string;
  @ApiPropertyOptional({ maxLength: 320, description: 'sms: the sending number (E.164); email: the sender, `Name <address>`' }) @IsOptional() @IsString() @Length(1, 320) from?: string;
  @ApiPropertyOptional({ maxLength: 253, description: 'email: the SMTP relay\'s host' }) @IsOptional() @IsString() @Length(1, 253) smtpHost?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: 65535, description: 'email: 587 by default (465 when smtpSecure)' }) @IsOptional() @IsInt() @Min(1) @Max(65535) smtpPort?: number;
  @ApiPropertyOptional({ description: 'email: TLS from the first byte (port 465); otherwise STARTTLS when the relay offers it' }) @IsOptional() @IsBoolean() smtpSecure?: boolean;
  @ApiPropertyOptional({ maxLength: 320, description: 'email: the relay\'s user name' }) @IsOptional() @IsString() @Length(1, 320) smtpUser?: string;
  @ApiPropertyOptional(secret('email: the relay\'s password')) @IsOptional() @IsString() @Length(1, 1024) smtpPassword?: string;
  @ApiPropertyOptional({ description: 'primary_chat and sms: the provider\'s API root when not its public one; fetched with the SSRF checks of every provider call' })
  @IsOptional() @IsString() @MaxLength(2048) @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) baseUrl?: string;
}

export class ChannelDisconnectedDto {
  @ApiProperty({ enum: CONNECTABLE_CHANNELS }) channel!: string;
  @ApiProperty() disconnected!: boolean;
}
