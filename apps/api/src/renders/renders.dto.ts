import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsPositive, IsString, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { EVENT_TYPES } from '#libs/core';
import { MAX_OUTPUT_SIDE, OUTPUT_FORMATS, RESOLUTIONS } from '#libs/edit-spec';
import { RENDER_KINDS, RENDER_STATUSES, type EstimateQuery, type RenderBody, type RenderQuery } from '#libs/renders';
import type { MergePair } from '#libs/templates';
import { DELIVERY_STATES, LIMITS } from '#libs/webhooks';
import { MaxJsonLength, MayOmit, Satisfies } from '../http/validation.js';

/** A template id as the routes take it (`tpl_…`, the library's `tpl_lib_…`). */
export const TEMPLATE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const IsTemplateId = () => Matches(TEMPLATE_ID, { message: '$property must be a template id' });

class MergePairDto implements MergePair {
  @ApiProperty({ description: 'The field key; written with its braces ("{{HEADLINE}}") it is read the same', example: 'HEADLINE' })
  @IsString() @Matches(/\S/, { message: 'find must name a field' }) find!: string;

  @ApiProperty({ description: 'The field\'s value (text, number, boolean, colour or media URL); null for its default', oneOf: [{ type: 'string', nullable: true }, { type: 'number' }, { type: 'boolean' }] })
  @ValidateIf((pair: object) => !Object.hasOwn(pair, 'replace')) @IsDefined({ message: 'replace is required (null for the field\'s default)' }) replace!: unknown;
}

/** §4.1 Create a render (and the estimate): the body. */
export class RenderBodyDto implements RenderBody {
  @ApiPropertyOptional({ description: 'A published template of the workspace; required unless `edit` is given', example: 'tpl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' })
  @MayOmit() @IsString() @IsTemplateId() templateId?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Field values keyed by field key, checked against the template\'s fields', example: { HEADLINE: 'Spring sale' } })
  @IsOptional() @IsObject() values?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Another name for `values` (send one of values, fields, merge)' })
  @IsOptional() @IsObject() fields?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: [MergePairDto], description: 'Shotstack merge pairs, another form of `values`' })
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => MergePairDto) merge?: MergePairDto[] | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'A complete edit spec (Shotstack Edit JSON: timeline, output) to render without a template; its errors are named `edit.…`' })
  @MayOmit() @IsObject() edit?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Merged over the edit\'s (or template\'s) output settings', example: { format: 'jpeg' } })
  @MayOmit() @IsObject() output?: Record<string, unknown>;

  @ApiPropertyOptional({ maxLength: LIMITS.urlLength, description: 'URL notified when the render settles, instead of the workspace default (https and public outside development)' })
  @MayOmit() @IsString() @MaxLength(LIMITS.urlLength) callback?: string;

  @ApiPropertyOptional({ maxLength: 255, description: 'Instead of the Idempotency-Key header (both only with the same value)' })
  @MayOmit() @IsString() idempotencyKey?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: 'Echoed on the render record; at most 8192 characters of JSON' })
  @IsOptional() @IsObject() @MaxJsonLength(8192) metadata?: Record<string, unknown> | null;
}

/** A dashboard form's preview of a template (POST /organization/templates/{id}/preview): the values as typed. */
export class TemplatePreviewDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: 'Field values keyed by field key, checked against the template\'s fields (a field left out takes its default)', example: { HEADLINE: 'Spring sale' } })
  @IsOptional() @IsObject() values?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The template editor\'s unsaved edit (issue 29): drawn instead of the saved one, with `values` as its merge values; its errors are named `edit.…`' })
  @IsOptional() @IsObject() edit?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'A video template\'s draft (issue 29): a small, 12 fps, low-quality test-mode video, answered queued; poll GET /v1/render/{id}' })
  @IsOptional() @IsBoolean() draft?: boolean;
}

/** §4.1 Create a render: the query. */
export class RenderQueryDto implements RenderQuery {
  @ApiPropertyOptional({ enum: ['binary', 'json'], description: 'binary: the still\'s bytes instead of the JSON record (png, jpeg, pdf only)' })
  @MayOmit() @IsIn(['binary', 'json']) format?: 'binary' | 'json';

  @ApiPropertyOptional({ enum: [...OUTPUT_FORMATS, 'jpg'], description: 'Overrides output.format' })
  @MayOmit() @IsIn([...OUTPUT_FORMATS, 'jpg']) type?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 3, default: 1, description: 'Device scale factor of a still (§8)' })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(3) scale?: number;

  @ApiPropertyOptional({ enum: [...RESOLUTIONS, '1080'], description: 'Replaces output.size' })
  @MayOmit() @IsIn([...RESOLUTIONS, '1080']) resolution?: string;

  @ApiPropertyOptional({ type: Number, description: 'Frame rate of a video (one the edit spec allows)', example: 25 })
  @MayOmit() @Type(() => Number) @IsNumber() @IsPositive() fps?: number;
}

/** §4.1 Estimate cost: the render's query, and a template to price by id (GET). */
export class EstimateQueryDto extends RenderQueryDto {
  @ApiPropertyOptional({ description: 'The template to price (GET; a POST body may name it instead)' })
  @MayOmit() @IsString() @IsTemplateId() templateId?: string;
}

/** GET /v1/render/estimate: also the output priced without a template (spec decisions "HTTP methods"). */
export class EstimateGetQueryDto extends EstimateQueryDto implements EstimateQuery {
  @ApiPropertyOptional({ type: Number, minimum: 0.01, maximum: 86_400, description: 'Seconds of video to price (mp4, gif; without a templateId)', example: 30 })
  @MayOmit() @Type(() => Number) @IsNumber() @Min(0.01) @Max(86_400) durationSec?: number;

  @ApiPropertyOptional({ pattern: '^[1-9][0-9]{0,3}x[1-9][0-9]{0,3}$', description: `Output size WxH in pixels, each side 1 to ${MAX_OUTPUT_SIDE} (without a templateId; or use resolution)`, example: '1920x1080' })
  @MayOmit() @IsString() @Satisfies('outputSize', (v) => typeof v === 'string' && /^[1-9][0-9]{0,3}x[1-9][0-9]{0,3}$/.test(v) && v.split('x').every((n) => Number(n) <= MAX_OUTPUT_SIDE), `size must be WxH in pixels, each side 1 to ${MAX_OUTPUT_SIDE}, such as 1920x1080`) size?: string;
}

// --- answers ---------------------------------------------------------------------------------

const RENDER_ID = 'rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P';

/** Why a render failed (decisions.md "Render record"). */
export class RenderErrorDto {
  @ApiProperty({ example: 'MEDIA_UNAVAILABLE' }) code!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ description: 'The stage it failed in', example: 'fetching' }) stage!: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'Offending path → messages' })
  errors?: Record<string, string[]>;
}

/** §2 Render (decisions.md "Render record"): what POST /v1/render, GET /v1/render/{id} and the list answer. */
export class RenderDto {
  @ApiProperty({ example: RENDER_ID }) id!: string;
  @ApiProperty({ enum: RENDER_STATUSES, description: 'queued → fetching → rendering → saving → done | failed | cancelled', example: 'done' }) status!: string;
  @ApiProperty({ enum: RENDER_KINDS }) kind!: string;
  @ApiProperty({ nullable: true, type: String, example: 'tpl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) templateId!: string | null;
  @ApiProperty({ nullable: true, type: Number, description: 'The template version rendered' }) templateVersion!: number | null;
  @ApiProperty({ nullable: true, type: String, description: 'The output, once done', example: 'https://media.example.com/files/r/rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P/a1b2.png' }) url!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Videos: a still of the first frame' }) posterUrl!: string | null;
  @ApiProperty({ nullable: true, type: String }) thumbnailUrl!: string | null;
  @ApiProperty({ enum: OUTPUT_FORMATS }) format!: string;
  @ApiProperty({ nullable: true, type: Number }) width!: number | null;
  @ApiProperty({ nullable: true, type: Number }) height!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'Seconds (videos)' }) duration!: number | null;
  @ApiProperty({ nullable: true, type: Number }) fileSizeBytes!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'Milliseconds from creation to done' }) renderTime!: number | null;
  @ApiProperty({ description: 'Credits charged (0 until done)' }) credits!: number;
  @ApiProperty() watermarked!: boolean;
  @ApiProperty({ enum: ['live', 'test'], description: 'The mode of the key that created it' }) mode!: string;
  @ApiProperty({ description: 'A dashboard form\'s preview (POST /organization/templates/{id}/preview): test mode, not listed, no event, kept an hour' }) preview!: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'When the output is deleted' }) expiresAt!: string | null;
  @ApiProperty({ nullable: true, type: RenderErrorDto }) error!: RenderErrorDto | null;
  @ApiProperty({ minimum: 0, maximum: 1 }) progress!: number;
  @ApiProperty() cancelRequested!: boolean;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true, description: 'What the request sent as metadata' }) metadata!: Record<string, unknown> | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) startedAt!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completedAt!: string | null;
}

class EstimateSizeDto {
  @ApiProperty() width!: number;
  @ApiProperty() height!: number;
}

class EstimateBreakdownDto {
  @ApiProperty({ example: '0:10' }) duration!: string;
  @ApiProperty({ example: '1920x1080' }) size!: string;
  @ApiProperty() fps!: number;
  @ApiProperty({ example: 'mp4' }) format!: string;
  @ApiProperty({ example: 'h264' }) codec!: string;
}

/** What a render would cost (POST/GET /v1/render/estimate). */
export class EstimateDto {
  @ApiProperty({ enum: RENDER_KINDS }) kind!: string;
  @ApiProperty({ description: 'Credits of its kind the render would take' }) credits!: number;
  @ApiProperty() durationSec!: number;
  @ApiProperty({ type: EstimateSizeDto }) size!: EstimateSizeDto;
  @ApiProperty({ type: EstimateBreakdownDto }) breakdown!: EstimateBreakdownDto;
}

/** The render body of the examples (an edit: one text on a background). */
export const RENDER_EXAMPLE = {
  edit: {
    timeline: { background: '#0B1F3A', tracks: [{ clips: [{ asset: { type: 'text', text: 'Spring sale', font: { family: 'Open Sans', size: 96, color: '#FFFFFF' } }, start: 0, length: 5 }] }] },
    output: { format: 'png', size: { width: 1080, height: 1080 } },
  },
};

/** A finished still as GET /v1/render/{id} shows it (the document's example). */
export const RENDER_VIEW_EXAMPLE = {
  id: RENDER_ID, status: 'done', kind: 'image', templateId: null, templateVersion: null,
  url: `https://media.example.com/files/r/${RENDER_ID}/a1b2c3.png`, posterUrl: null, thumbnailUrl: null, format: 'png',
  width: 1080, height: 1080, duration: null, fileSizeBytes: 48213, renderTime: 412, credits: 1, watermarked: false, mode: 'live', preview: false,
  expiresAt: '2026-12-27T10:00:00.412Z', error: null, progress: 1, cancelRequested: false, metadata: { order: 7 },
  createdAt: '2026-11-27T10:00:00.000Z', updatedAt: '2026-11-27T10:00:00.412Z', startedAt: '2026-11-27T10:00:00.020Z', completedAt: '2026-11-27T10:00:00.412Z',
};

/** The normalised edit a render was made from, as a POST /v1/render body (GET /v1/render/{id}/edit). */
export class RenderEditDto {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The edit spec as rendered: a template\'s values merged, defaults filled in', example: RENDER_EXAMPLE.edit })
  edit!: Record<string, unknown>;
}

/** One webhook delivery of a render's event (its summary; GET /v1/webhooks/{id}/deliveries has the attempts). */
export class RenderEventDeliveryDto {
  @ApiProperty({ example: 'dlv_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ example: 'whk_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P', description: 'The endpoint (a render callback URL is an endpoint of its own, not in the list of GET /v1/webhooks)' }) endpointId!: string;
  @ApiProperty({ description: 'A redelivery the workspace asked for' }) redelivery!: boolean;
  @ApiProperty({ enum: DELIVERY_STATES }) state!: string;
  @ApiProperty() attempts!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'The HTTP status of the last attempt' }) lastStatus!: number | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completedAt!: string | null;
}

/** One of a render's §6 events (GET /v1/render/{id}/events). */
export class RenderEventDto {
  @ApiProperty({ example: 'evt_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty({ enum: EVENT_TYPES.filter((t) => t.startsWith('render.')) }) type!: string;
  @ApiProperty({ format: 'date-time' }) created!: string;
  @ApiProperty({ description: 'false for a test render\'s event (its mode)' }) livemode!: boolean;
  @ApiProperty({ type: [RenderEventDeliveryDto], description: 'Its webhook deliveries, oldest first (none when no endpoint subscribes)' }) deliveries!: RenderEventDeliveryDto[];
}
