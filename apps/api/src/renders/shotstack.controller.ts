import { Body, Controller, Get, Headers, HttpCode, Param, Query, Post, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsArray, IsIn, IsObject, IsString } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { RendersService, shotstackQueued, shotstackRender } from '#libs/renders';
import { ApiErrors, ApiRaw, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { MayOmit } from '../http/validation.js';

/** Shotstack's Edit body (timeline, output, merge, callback, disk): handed to the edit parser whole. */
export class ShotstackEditDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Shotstack timeline (soundtrack, background, fonts, tracks)' })
  @MayOmit() @IsObject() timeline?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Shotstack output (format, resolution, size, fps, quality, …)' })
  @MayOmit() @IsObject() output?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object', properties: { find: { type: 'string' }, replace: {} } }, description: 'Merge fields: {{FIND}} placeholders replaced' })
  @MayOmit() @IsArray() merge?: unknown[];

  @ApiPropertyOptional({ description: 'URL notified when the render settles (our signed webhook, §6)' })
  @MayOmit() @IsString() callback?: string;

  @ApiPropertyOptional({ enum: ['local', 'mount'], description: 'Shotstack infrastructure hint: accepted, not used' })
  @MayOmit() @IsIn(['local', 'mount']) disk?: string;
}

export class ShotstackRenderQueryDto {
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Include the edit (as normalised) in `response.data`' })
  @MayOmit() @IsIn(['true', 'false']) data?: 'true' | 'false';

  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Accepted for Shotstack clients; the edit is always shown merged' })
  @MayOmit() @IsIn(['true', 'false']) merged?: 'true' | 'false';
}

class ShotstackQueuedBodyDto {
  @ApiProperty({ example: 'Render Successfully Queued' }) message!: string;
  @ApiProperty({ example: 'rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
}

/** Shotstack's QueuedResponse. */
export class ShotstackQueuedDto {
  @ApiProperty({ enum: [true] }) success!: boolean;
  @ApiProperty({ example: 'Created' }) message!: string;
  @ApiProperty({ type: ShotstackQueuedBodyDto }) response!: ShotstackQueuedBodyDto;
}

class ShotstackRenderBodyDto {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'The workspace id' }) owner!: string;
  @ApiProperty({ description: 'The plan code' }) plan!: string;
  @ApiProperty({ enum: ['queued', 'fetching', 'rendering', 'saving', 'done', 'failed'], description: 'A cancelled render shows failed' }) status!: string;
  @ApiPropertyOptional({ description: '`CODE: message` of a failed render' }) error?: string;
  @ApiPropertyOptional({ description: 'Seconds' }) duration?: number;
  @ApiPropertyOptional({ description: 'Milliseconds' }) renderTime?: number;
  @ApiPropertyOptional() url?: string;
  @ApiPropertyOptional() poster?: string;
  @ApiPropertyOptional() thumbnail?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The edit as normalised (with ?data=true)' }) data?: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created!: string;
  @ApiProperty({ format: 'date-time' }) updated!: string;
}

/** Shotstack's RenderResponse. */
export class ShotstackRenderDto {
  @ApiProperty({ enum: [true] }) success!: boolean;
  @ApiProperty({ example: 'OK' }) message!: string;
  @ApiProperty({ type: ShotstackRenderBodyDto }) response!: ShotstackRenderBodyDto;
}

/**
 * The Shotstack door (decisions.md "Shotstack door"): Shotstack Edit API v1's render routes at
 * `/api/compat/shotstack/v1` (and `/stage`, the same), over the same keys, scopes, credits, plans,
 * idempotency and events as `/v1/render`. Stills are answered as Shotstack answers them: queued, then polled.
 */
@ApiTags('shotstack compat')
@Controller('compat/shotstack/v1')
export class ShotstackController {
  constructor(private readonly renders: RendersService) {}

  @Post('render')
  @HttpCode(201)
  @Scopes('renders:write')
  @ApiOperation({ summary: 'Shotstack POST /render: the raw Edit body; answers {success, message, response: {id, message}}' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'As on POST /v1/render (§1.4)' })
  @ApiRaw(ShotstackQueuedDto, { status: 201, description: 'Queued; poll GET render/{id}' })
  @ApiErrors('INVALID_REQUEST', 'VALIDATION_FAILED', 'TEMPLATE_VALIDATION_FAILED', 'EMPTY_TIMELINE', 'UNSUPPORTED_ASSET', 'MEDIA_UNAVAILABLE', 'IDEMPOTENCY_KEY_REUSED',
    'LIMIT_IMAGE_SIZE', 'INSUFFICIENT_CREDITS', 'ENGINE_NOT_CONFIGURED', 'RENDER_TIMEOUT', 'RENDER_FAILED', 'WORKER_LOST', 'FEATURE_VIDEOENABLED', 'LIMIT_VIDEO_DURATION', 'LIMIT_VIDEO_RESOLUTION',
    'LIMIT_VIDEO_FPS', 'LIMIT_QUEUE_DEPTH')
  async render(@Principal() p: KeyPrincipal, @Body() body: ShotstackEditDto, @Headers('idempotency-key') idempotencyKey: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const { render } = await this.renders.create(p, { body: { edit: { ...body } }, query: {}, idempotencyKey, sent: { body: reply.request.body, query: { door: 'shotstack' } } });
    return shotstackQueued(render);
  }

  @Get('render/:id')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'Shotstack GET /render/{id}: status queued|fetching|rendering|saving|done|failed, url, poster, thumbnail, renderTime (ms)' })
  @ApiRaw(ShotstackRenderDto)
  @ApiErrors('RENDER_NOT_FOUND')
  async get(@Principal() p: KeyPrincipal, @Param('id') id: string, @Query() query: ShotstackRenderQueryDto) {
    const row = await this.renders.get(p.workspaceId, id);
    const view = this.renders.view(row) as { url: string | null; posterUrl: string | null; thumbnailUrl: string | null };
    return shotstackRender(row, view, { owner: p.workspaceId, plan: p.plan.code, data: query.data === 'true' });
  }
}

/** Shotstack's sandbox base path (`…/stage`): the same door; the key's mode decides watermarks. */
@ApiTags('shotstack compat')
@Controller('compat/shotstack/stage')
export class ShotstackStageController extends ShotstackController {}
