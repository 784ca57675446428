import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsObject, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import {
  CHANNEL_NAMES, DEFAULT_CAMPAIGN_RATE, DEFAULT_MESSAGING_LIMIT, INTERACTIVE_TYPES, MAX_CAMPAIGN_RATE, MAX_MESSAGING_LIMIT, MAX_RECIPIENTS, MEDIA_TYPES, MESSAGE_TYPES,
  RECIPIENT_STATUSES, type InteractiveMessage,
} from '#libs/messaging';
import { MaxJsonLength, MayOmit, Satisfies } from '../http/validation.js';

// The messaging-provider rows of §4.5 and the §2 shapes (Messaging channel, template, contact, allowance); docs/messaging.md.

const TEMPLATE_STATUSES = ['APPROVED', 'PENDING', 'REJECTED', 'DISABLED', 'DRAFT'] as const;
const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
const stringValues = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string' && x.length <= 1024);

/** §4.5 List channels (query). */
export class ListChannelsQueryDto {
  @ApiPropertyOptional({ enum: CHANNEL_NAMES }) @MayOmit() @IsIn(CHANNEL_NAMES) channel?: string;
  @ApiPropertyOptional({ enum: ['connected', 'disconnected', 'all'], default: 'connected', description: 'disconnected: the contract\'s channel names this workspace has no account for' })
  @MayOmit() @IsIn(['connected', 'disconnected', 'all']) status?: string;
}

/** §4.5 List messaging templates (query). */
export class ListTemplatesQueryDto {
  @ApiPropertyOptional({ enum: TEMPLATE_STATUSES, default: 'APPROVED' }) @MayOmit() @IsIn(TEMPLATE_STATUSES) status?: string;
  @ApiPropertyOptional({ enum: TEMPLATE_CATEGORIES }) @MayOmit() @IsIn(TEMPLATE_CATEGORIES) category?: string;
  @ApiPropertyOptional({ example: 'en_US' }) @MayOmit() @IsString() @MaxLength(16) language?: string;
  @ApiPropertyOptional({ maxLength: 128, description: 'Part of the name' }) @MayOmit() @IsString() @MaxLength(128) search?: string;
  @ApiPropertyOptional({ description: 'The sending number\'s id (a primary_chat channel\'s accountId)' }) @MayOmit() @IsString() @MaxLength(64) accountId?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_MESSAGING_LIMIT, default: DEFAULT_MESSAGING_LIMIT })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_MESSAGING_LIMIT) limit?: number;
}

/** §4.5 List messaging contacts (query). */
export class ListContactsQueryDto {
  @ApiPropertyOptional({ maxLength: 64 }) @MayOmit() @IsString() @MaxLength(64) tag?: string;
  @ApiPropertyOptional({ maxLength: 128, description: 'Part of the name, number or email' }) @MayOmit() @IsString() @MaxLength(128) search?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_MESSAGING_LIMIT, default: DEFAULT_MESSAGING_LIMIT })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_MESSAGING_LIMIT) limit?: number;
  @ApiPropertyOptional({ minimum: 1, default: 1 }) @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(100_000) page?: number;
}

/** §4.5 Send one message (body). */
export class SendMessageDto {
  @ApiProperty({ example: '+44 7700 900123', description: 'International phone number (primary_chat, sms: spaces, a plus sign and leading zeros are cleaned; no country code is refused) or an email address (email)' })
  @IsString() @MaxLength(320) to!: string;

  @ApiPropertyOptional({ enum: CHANNEL_NAMES, default: 'primary_chat' }) @MayOmit() @IsIn(CHANNEL_NAMES) channel?: string;
  @ApiPropertyOptional({ description: 'Sending identity; default: the channel\'s account (GET .../channels)' }) @MayOmit() @IsString() @MaxLength(64) accountId?: string;
  @ApiPropertyOptional({ enum: MESSAGE_TYPES, default: 'template' }) @MayOmit() @IsIn(MESSAGE_TYPES) type?: string;
  @ApiPropertyOptional({ description: 'Required for template sends: an APPROVED template' }) @MayOmit() @IsString() @MaxLength(512) templateName?: string;
  @ApiPropertyOptional({ example: 'en_US', description: 'Needed only when the template name exists in several languages' }) @MayOmit() @IsString() @MaxLength(16) languageCode?: string;
  @ApiPropertyOptional({ description: 'A finished render of this workspace: its URL becomes the template\'s media header (or the media)' }) @MayOmit() @IsString() @MaxLength(32) renderId?: string;
  @ApiPropertyOptional({ description: 'Public URL ending in the file\'s extension; takes precedence over renderId; its type must match the template\'s header (or the type)' })
  @MayOmit() @IsString() @MaxLength(2048) mediaUrl?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 1: 'Ada', 2: 'SPRING20' }, description: 'Body variables by slot number, exactly the template\'s count' })
  @MayOmit() @IsObject() @Satisfies('stringValues', stringValues, 'variables must map slot numbers to strings (up to 1,024 characters)') variables?: Record<string, string>;
  @ApiPropertyOptional({ maxLength: 4096, description: 'Body for type text' }) @MayOmit() @IsString() @MaxLength(4096) text?: string;
  @ApiPropertyOptional({ maxLength: 998, description: 'Required on the email channel; ignored elsewhere' }) @MayOmit() @IsString() @MaxLength(998) subject?: string;
  @ApiPropertyOptional({ maxLength: 1024, description: 'For image, video or document sent alone; audio has none' }) @MayOmit() @IsString() @MaxLength(1024) caption?: string;
  @ApiPropertyOptional({
    type: 'object', additionalProperties: true, description: `{type: ${INTERACTIVE_TYPES.join('/')}, body: {text}, header?: {type: text, text}, footer?: {text}, action}: button → action.buttons [{id, title}] (up to 3); list → action.button and action.sections [{title, rows: [{id, title, description?}]}] (up to 10 rows overall); cta_url → action.displayText and action.url`,
  })
  @MayOmit() @IsObject() @MaxJsonLength(20_000) interactive?: InteractiveMessage;
  @ApiPropertyOptional({ maxLength: 240, description: 'Document filename; derived from the URL if omitted; ignored for image and video' }) @MayOmit() @IsString() @MaxLength(240) headerFilename?: string;
}

export class CapabilitiesDto {
  @ApiProperty() template!: boolean;
  @ApiProperty() text!: boolean;
  @ApiProperty({ enum: MEDIA_TYPES, isArray: true }) media!: string[];
  @ApiProperty({ enum: INTERACTIVE_TYPES, isArray: true }) interactive!: string[];
}

/** §2 Messaging channel. */
export class ChannelDto {
  @ApiProperty({ example: 'primary_chat:106540352242922' }) id!: string;
  @ApiProperty({ enum: CHANNEL_NAMES }) channel!: string;
  @ApiProperty({ nullable: true, type: String, example: 'whatsapp-cloud' }) provider!: string | null;
  @ApiProperty({ example: 'WhatsApp Business' }) label!: string;
  @ApiProperty({ nullable: true, type: String, example: '+1 555 0100' }) identifier!: string | null;
  @ApiProperty() isDefault!: boolean;
  @ApiProperty({ enum: ['connected', 'disconnected'] }) status!: string;
  @ApiProperty({ type: CapabilitiesDto }) capabilities!: CapabilitiesDto;
}

/** §2 Messaging template. */
export class MessagingTemplateDto {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'The sending number\'s id' }) accountId!: string;
  @ApiProperty({ example: 'spring_sale' }) name!: string;
  @ApiProperty({ enum: TEMPLATE_CATEGORIES }) category!: string;
  @ApiProperty({ example: 'en_US' }) language!: string;
  @ApiProperty({ enum: TEMPLATE_STATUSES }) status!: string;
  @ApiProperty({ nullable: true, type: String, example: 'IMAGE', description: 'IMAGE, VIDEO, DOCUMENT, TEXT, LOCATION; null without a header' }) headerFormat!: string | null;
  @ApiProperty({ example: 2 }) bodyVariableCount!: number;
  @ApiProperty({ type: [String], example: ['1', '2'] }) variables!: string[];
  @ApiProperty({ description: 'Messages this workspace sent with it' }) usageCount!: number;
}

/** §2 Messaging contact. */
export class MessagingContactDto {
  @ApiProperty() id!: string;
  @ApiProperty({ nullable: true, type: String, example: '447700900123' }) waId!: string | null;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ nullable: true, type: String }) firstName!: string | null;
  @ApiProperty({ nullable: true, type: String }) lastName!: string | null;
  @ApiProperty({ nullable: true, type: String }) email!: string | null;
  @ApiProperty({ type: [String] }) tags!: string[];
  @ApiProperty() optedIn!: boolean;
  @ApiProperty() blocked!: boolean;
}

/** §2 Messaging contacts response wrapper. */
export class MessagingContactsPageDto {
  @ApiProperty({ type: [MessagingContactDto] }) contacts!: MessagingContactDto[];
  @ApiProperty() total!: number;
  @ApiProperty() page!: number;
  @ApiProperty() pages!: number;
}

export class MessageAllowanceDto {
  @ApiProperty({ example: 'messages' }) key!: string;
  @ApiProperty({ example: 'Messages this month' }) label!: string;
  @ApiProperty() used!: number;
  @ApiProperty({ nullable: true, type: Number }) limit!: number | null;
  @ApiProperty() unlimited!: boolean;
  @ApiProperty({ nullable: true, type: Number }) remaining!: number | null;
  @ApiProperty() percentUsed!: number;
}

/** §2 Messaging allowance. */
export class MessagingAllowanceDto {
  @ApiProperty({ example: 'pro' }) plan!: string;
  @ApiProperty({ example: 'active' }) subscriptionStatus!: string;
  @ApiProperty() active!: boolean;
  @ApiProperty({ example: 300 }) rateLimitPerMinute!: number;
  @ApiProperty({ type: MessageAllowanceDto }) messages!: MessageAllowanceDto;
}

/** A sent message's record. */
export class MessageDto {
  @ApiProperty({ example: 'msg_01J…' }) id!: string;
  @ApiProperty({ enum: CHANNEL_NAMES }) channel!: string;
  @ApiProperty() accountId!: string;
  @ApiProperty({ description: 'The cleaned recipient' }) to!: string;
  @ApiProperty({ enum: MESSAGE_TYPES }) type!: string;
  @ApiProperty({ nullable: true, type: String }) templateName!: string | null;
  @ApiProperty({ nullable: true, type: String }) languageCode!: string | null;
  @ApiProperty({ nullable: true, type: String }) renderId!: string | null;
  @ApiProperty({ nullable: true, type: String }) mediaUrl!: string | null;
  @ApiProperty({ enum: ['sending', 'sent', 'delivered', 'read', 'failed'], description: 'sent when the provider took it; delivered, read or failed as its status callbacks say' }) status!: string;
  @ApiProperty({ nullable: true, type: String, example: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA' }) providerMessageId!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) sentAt!: string | null;
  @ApiProperty({ enum: ['live', 'test'], description: 'The sender\'s mode (a pk_test_ key, a test-mode session, a test campaign or workflow run)' }) mode!: string;
  @ApiProperty({ description: 'true in test mode: checked as in live mode and answered with an id of the provider\'s shape, but sent to no provider' }) simulated!: boolean;
}

/** One recipient of a broadcast. */
export class CampaignRecipientInputDto {
  @ApiProperty({ example: '+44 7700 900123', description: 'Phone number in international form (cleaned as for a single send)' }) @IsString() @MaxLength(320) to!: string;
  @ApiPropertyOptional({ maxLength: 200 }) @MayOmit() @IsString() @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 1: 'Ada' }, description: 'Body variables by slot number, over commonVariables' })
  @MayOmit() @IsObject() @Satisfies('stringValues', stringValues, 'variables must map slot numbers to strings (up to 1,024 characters)') variables?: Record<string, string>;
}

/** §4.5 Broadcast (body). */
export class CreateCampaignDto {
  @ApiProperty({ description: 'An APPROVED template of the primary_chat (WhatsApp) channel' }) @IsString() @MaxLength(512) templateName!: string;
  @ApiProperty({ type: [CampaignRecipientInputDto], maxItems: MAX_RECIPIENTS, description: `Up to ${MAX_RECIPIENTS.toLocaleString('en')} recipients` })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_RECIPIENTS) @ValidateNested({ each: true }) @Type(() => CampaignRecipientInputDto) recipients!: CampaignRecipientInputDto[];
  @ApiPropertyOptional({ maxLength: 200, description: 'Default: "Broadcast <date> UTC"' }) @MayOmit() @IsString() @MaxLength(200) name?: string;
  @ApiPropertyOptional({ example: 'en_US', description: 'Needed only when the template name exists in several languages' }) @MayOmit() @IsString() @MaxLength(16) languageCode?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 2: 'SPRING20' }, description: 'Body variables by slot number shared by every recipient' })
  @MayOmit() @IsObject() @Satisfies('stringValues', stringValues, 'commonVariables must map slot numbers to strings (up to 1,024 characters)') commonVariables?: Record<string, string>;
  @ApiPropertyOptional({ description: 'A finished render of this workspace: the template\'s media header' }) @MayOmit() @IsString() @MaxLength(32) renderId?: string;
  @ApiPropertyOptional({ description: 'Public URL ending in the file\'s extension; takes precedence over renderId' }) @MayOmit() @IsString() @MaxLength(2048) mediaUrl?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CAMPAIGN_RATE, default: DEFAULT_CAMPAIGN_RATE, description: 'Messages a second, across every worker' })
  @MayOmit() @IsInt() @Min(1) @Max(MAX_CAMPAIGN_RATE) rateLimitPerSecond?: number;
}

export class CampaignProgressDto {
  @ApiProperty() queued!: number;
  @ApiProperty() sending!: number;
  @ApiProperty() sent!: number;
  @ApiProperty() delivered!: number;
  @ApiProperty() read!: number;
  @ApiProperty() failed!: number;
  @ApiProperty({ description: 'Its worker stopped while the provider was being called: not resent (docs/messaging.md)' }) unknown!: number;
}

/** A broadcast campaign and its progress. */
export class CampaignDto {
  @ApiProperty({ example: 'cmp_01J…' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['primary_chat'] }) channel!: string;
  @ApiProperty() templateName!: string;
  @ApiProperty({ nullable: true, type: String }) languageCode!: string | null;
  @ApiProperty({ nullable: true, type: String }) renderId!: string | null;
  @ApiProperty({ nullable: true, type: String }) mediaUrl!: string | null;
  @ApiProperty() rateLimitPerSecond!: number;
  @ApiProperty({ enum: ['sending', 'completed'] }) status!: string;
  @ApiProperty() total!: number;
  @ApiProperty({ type: CampaignProgressDto }) progress!: CampaignProgressDto;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completedAt!: string | null;
  @ApiProperty({ enum: ['live', 'test'], description: 'The creator\'s mode' }) mode!: string;
  @ApiProperty({ description: 'true in test mode: every recipient is checked and paced as in live mode but sent to no provider' }) simulated!: boolean;
}

/** One recipient of a campaign and how its send went. */
export class CampaignRecipientDto {
  @ApiProperty({ example: 'rcp_01J…' }) id!: string;
  @ApiProperty({ description: 'Its index in the request\'s recipients' }) position!: number;
  @ApiProperty() to!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ enum: RECIPIENT_STATUSES }) status!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Why it failed: the error code (MESSAGE_REJECTED, PROVIDER_UNAVAILABLE, MESSAGE_FAILED, OUTCOME_UNKNOWN…)' }) errorCode!: string | null;
  @ApiProperty({ nullable: true, type: String }) reason!: string | null;
  @ApiProperty({ nullable: true, type: String }) providerMessageId!: string | null;
  @ApiProperty({ nullable: true, type: String }) messageId!: string | null;
  @ApiProperty() attempts!: number;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) sentAt!: string | null;
}

/** What a status callback recorded. */
export class StatusCallbackResultDto {
  @ApiProperty({ description: 'Statuses in the callback' }) received!: number;
  @ApiProperty({ description: 'Statuses matched to a message of this workspace' }) recorded!: number;
}
