import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import type { KeyMode } from '#libs/core';
import {
  BODY_FORMATS, DELIVERY_STATES, EVENT_MODES, HTTP_METHODS, isHeaderName, isMaskedValue, isValidHeaderValue, LIMITS, MASK, PAYLOAD_MODES, WEBHOOK_EVENTS,
  type BodyFormat, type EndpointInput, type HeaderPair, type HttpMethod, type PayloadMode, type WebhookEvent,
} from '#libs/webhooks';
import { MayOmit, Satisfies } from '../http/validation.js';

// The shapes of the webhook endpoint bodies (§4.6, §4.7, §8). What a shape cannot tell is
// libs/webhooks validateEndpointInput's: the URL policy of the deployment, {{variables}} that exist,
// the payload template as a JSON object, headers the delivery sets, a header named twice.

/** An outbound URL: what the lib's policy then checks (absolute, https outside development, public). */
export const UrlRules = () => applyDecorators(IsString(), IsNotEmpty(), MaxLength(LIMITS.urlLength));

const unknownEvents = (value: unknown) => [value].flat().filter((e) => !(WEBHOOK_EVENTS as readonly unknown[]).includes(e)).map((e) => JSON.stringify(e)).join(', ');

class HeaderDto implements HeaderPair {
  @ApiProperty({ maxLength: LIMITS.headerName, example: 'Authorization', description: 'Not X-Service-* nor a header the delivery sets (Host, Content-Type, User-Agent, …)' })
  @IsString() @IsNotEmpty() @MaxLength(LIMITS.headerName)
  @Satisfies('isHeaderName', (v) => typeof v === 'string' && isHeaderName(v), 'key must be a header name (letters, digits and !#$%&\'*+-.^_`|~)')
  key!: string;

  @ApiProperty({
    maxLength: LIMITS.headerValue, example: 'Bearer {{org.id}}',
    description: `May hold {{variables}}. Stored sealed and never shown again (answers show it masked); on update, a value exactly as shown (\`Bearer ${MASK}1a2b\`) keeps the stored one`,
  })
  @IsString() @MaxLength(LIMITS.headerValue)
  @Satisfies('isHeaderValue', (v) => typeof v === 'string' && (isValidHeaderValue(v) || isMaskedValue(v)), 'value must not contain line breaks, control characters or characters beyond Latin-1')
  value!: string;
}

/** The settings a create and an update share. */
class EndpointSettingsDto implements EndpointInput {
  @ApiPropertyOptional({ maxLength: LIMITS.description, nullable: true, type: String })
  @IsOptional() @IsString() @MaxLength(LIMITS.description) description?: string | null;

  @ApiPropertyOptional({
    enum: WEBHOOK_EVENTS, isArray: true,
    description: 'Subscribed events; /v1/webhooks defaults to render.completed, render.failed, render.cancelled, /organization/webhooks requires them',
  })
  @MayOmit() @IsArray() @ArrayMinSize(1) @IsIn(WEBHOOK_EVENTS, { each: true, message: ({ value }) => `${unknownEvents(value)} not an event; events: ${WEBHOOK_EVENTS.join(', ')}` })
  events?: WebhookEvent[];

  @ApiPropertyOptional({ enum: HTTP_METHODS, default: 'POST' })
  @MayOmit() @IsIn(HTTP_METHODS) method?: HttpMethod;

  @ApiPropertyOptional({ enum: BODY_FORMATS, default: 'json', description: 'Forced to none for GET' })
  @MayOmit() @IsIn(BODY_FORMATS) bodyFormat?: BodyFormat;

  @ApiPropertyOptional({ enum: PAYLOAD_MODES, default: 'default' })
  @MayOmit() @IsIn(PAYLOAD_MODES) payloadMode?: PayloadMode;

  @ApiPropertyOptional({ maxLength: LIMITS.payloadTemplate, nullable: true, type: String, description: 'A JSON object as text, with {{variables}}; required in custom mode', example: '{"id": "{{data.id}}", "url": "{{data.url}}"}' })
  @IsOptional() @IsString() @MaxLength(LIMITS.payloadTemplate) payloadTemplate?: string | null;

  @ApiPropertyOptional({ type: [HeaderDto], maxItems: LIMITS.headers, description: 'Sent on every delivery; replaces the list on update' })
  @MayOmit() @IsArray() @ArrayMaxSize(LIMITS.headers) @ValidateNested({ each: true }) @Type(() => HeaderDto) headers?: HeaderDto[];

  @ApiPropertyOptional({ description: 'false pauses deliveries; true re-enables a disabled endpoint and clears its failure streak' })
  @MayOmit() @IsBoolean() isActive?: boolean;

  @ApiPropertyOptional({
    enum: EVENT_MODES, isArray: true, example: ['live'],
    description: 'The modes of the events it receives (each event\'s livemode). Default ["live","test"]; made with a test key or a test-mode session: ["test"], and live may not be named',
  })
  @MayOmit() @IsArray() @ArrayMinSize(1) @IsIn(EVENT_MODES, { each: true, message: 'modes: each must be live or test' }) modes?: KeyMode[];
}

/** §4.6 Register, §4.7 Create. */
export class CreateWebhookDto extends EndpointSettingsDto {
  @ApiProperty({ maxLength: LIMITS.urlLength, example: 'https://hooks.example.com/renders', description: 'Absolute; https outside development; may hold {{variables}}' })
  @UrlRules() url!: string;
}

/** §4.6, §4.7 Update: every field optional; lists replace the stored ones. */
export class UpdateWebhookDto extends EndpointSettingsDto {
  @ApiPropertyOptional({ maxLength: LIMITS.urlLength })
  @MayOmit() @UrlRules() url?: string;
}

/** Decisions.md "Webhooks": the workspace's default callback URL. */
export class CallbackSettingsDto {
  @ApiProperty({ nullable: true, type: String, maxLength: LIMITS.urlLength, description: 'Where renders without a callback report when they settle; null clears it' })
  @ValidateIf((_dto: object, value: unknown) => value !== null) @UrlRules() defaultCallbackUrl!: string | null;
}

// --- answers ---------------------------------------------------------------------------------

/** A configured header as the routes show it: the value masked (sealed at rest, never read back; issue 28). */
class HeaderPairDto {
  @ApiProperty({ example: 'Authorization' }) key!: string;
  @ApiProperty({
    example: `Bearer ${MASK}1a2b`,
    description: `Masked: a leading scheme word (Basic, Bearer, Digest, Token, Negotiate, ApiKey, Key) is kept, the rest is ${MASK} plus its last four characters when it has 12 or more. The value is stored sealed and never shown; deliveries send it`,
  }) value!: string;
}

/** A webhook endpoint as the routes show it (never its secret, except once on creation). */
export class WebhookEndpointDto {
  @ApiProperty({ example: 'whk_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ example: 'https://hooks.example.com/renders' }) url!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true }) events!: string[];
  @ApiProperty({ enum: EVENT_MODES, description: 'The mode it was made in (live once it takes live events); a test key changes only test endpoints' }) mode!: string;
  @ApiProperty({ enum: EVENT_MODES, isArray: true, description: 'The modes of the events it receives' }) modes!: string[];
  @ApiProperty({ enum: HTTP_METHODS }) method!: string;
  @ApiProperty({ enum: BODY_FORMATS }) bodyFormat!: string;
  @ApiProperty({ enum: PAYLOAD_MODES }) payloadMode!: string;
  @ApiProperty({ nullable: true, type: String }) payloadTemplate!: string | null;
  @ApiProperty({ type: [HeaderPairDto] }) headers!: HeaderPairDto[];
  @ApiProperty({ example: 'whsec_...a1B2' }) secretHint!: string;
  @ApiProperty() isActive!: boolean;
  @ApiProperty({ description: 'Disabled after too many failures in a row; isActive true re-enables it' }) disabled!: boolean;
  @ApiProperty() consecutiveFailures!: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) lastSuccessAt!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) lastFailureAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}

/** A new endpoint: with its signing secret, shown this once. */
export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  @ApiProperty({ description: 'Signs every delivery (§6); not shown again', example: 'whsec_…' }) secret!: string;
}

export class WebhookTestResultDto {
  @ApiProperty({ description: 'The endpoint answered 2xx' }) ok!: boolean;
  @ApiProperty({ nullable: true, type: Number, description: 'Its HTTP status; null when it could not be reached' }) status!: number | null;
}

class DeliveryAttemptDto {
  @ApiProperty() attempt!: number;
  @ApiProperty({ nullable: true, type: Number }) status!: number | null;
  @ApiProperty({ nullable: true, type: String }) error!: string | null;
  @ApiProperty() durationMs!: number;
  @ApiProperty({ format: 'date-time' }) at!: string;
}

/** One delivery of an event to an endpoint, with its attempts. */
export class DeliveryDto {
  @ApiProperty({ example: 'dlv_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty() eventId!: string;
  @ApiProperty({ example: 'render.completed' }) event!: string;
  @ApiProperty({ enum: EVENT_MODES, description: 'The event\'s mode (its livemode); a test key redelivers only test events' }) mode!: string;
  @ApiProperty({ description: 'A test delivery (POST …/test)' }) test!: boolean;
  @ApiProperty({ enum: DELIVERY_STATES }) state!: string;
  @ApiProperty() attempts!: number;
  @ApiProperty({ nullable: true, type: Number }) lastStatus!: number | null;
  @ApiProperty({ nullable: true, type: String }) lastError!: string | null;
  @ApiProperty({ nullable: true, type: Number }) lastDurationMs!: number | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completedAt!: string | null;
  @ApiProperty({ type: [DeliveryAttemptDto] }) log!: DeliveryAttemptDto[];
}

export class RedeliveryDto {
  @ApiProperty() id!: string;
  @ApiProperty() eventId!: string;
  @ApiProperty({ enum: ['pending'] }) state!: string;
}

/** The workspace's render callback settings. */
export class CallbackSettingsViewDto {
  @ApiProperty({ nullable: true, type: String }) defaultCallbackUrl!: string | null;
  @ApiProperty({ example: 'whsec_...a1B2' }) secretHint!: string;
}

export class RotatedSecretDto {
  @ApiProperty({ description: 'Signs callbacks from now on; not shown again' }) secret!: string;
  @ApiProperty({ example: 'whsec_...a1B2' }) secretHint!: string;
}
