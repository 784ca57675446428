import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ok, paged, pagination, parseListQuery, type ListSpec } from '#libs/core';
import { RENDER_KINDS, RENDER_STATUSES, RendersService } from '#libs/renders';
import { ApiEnvelope, ApiErrors, ApiListQuery, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { EstimateDto, EstimateGetQueryDto, EstimateQueryDto, RENDER_EXAMPLE, RENDER_VIEW_EXAMPLE, RenderBodyDto, RenderDto, RenderEditDto, RenderEventDto, RenderQueryDto, TEMPLATE_ID } from './renders.dto.js';

/** List renders (§4.1; sorts of decisions.md "Render record"). */
export const RENDER_LIST: ListSpec = {
  sort: ['createdAt', 'completedAt', 'duration', 'fileSizeBytes', 'credits', 'status'],
  defaultSort: 'createdAt',
  limit: { default: 20, max: 100 },
  sets: { status: RENDER_STATUSES, kind: RENDER_KINDS, templateId: { pattern: TEMPLATE_ID, describe: 'template ids' } },
  dates: ['created', 'completed'],
};

const CREATE_ERRORS = [
  'INVALID_REQUEST', 'VALIDATION_FAILED', 'TEMPLATE_NOT_FOUND', 'TEMPLATE_NOT_OWNED', 'TEMPLATE_NOT_PUBLISHED', 'TEMPLATE_VALIDATION_FAILED', 'EMPTY_TIMELINE',
  'UNSUPPORTED_ASSET', 'MEDIA_UNAVAILABLE', 'IDEMPOTENCY_KEY_REUSED', 'LIMIT_IMAGE_SIZE', 'INSUFFICIENT_CREDITS', 'ENGINE_NOT_CONFIGURED', 'RENDER_TIMEOUT', 'RENDER_FAILED', 'WORKER_LOST',
  'FEATURE_VIDEOENABLED', 'LIMIT_VIDEO_DURATION', 'LIMIT_VIDEO_RESOLUTION', 'LIMIT_VIDEO_FPS', 'LIMIT_QUEUE_DEPTH',
] as const;
const ESTIMATE_ERRORS = [
  'INVALID_REQUEST', 'VALIDATION_FAILED', 'TEMPLATE_NOT_FOUND', 'TEMPLATE_NOT_OWNED', 'TEMPLATE_NOT_PUBLISHED', 'TEMPLATE_VALIDATION_FAILED', 'EMPTY_TIMELINE',
  'LIMIT_IMAGE_SIZE', 'ENGINE_NOT_CONFIGURED', 'FEATURE_VIDEOENABLED', 'LIMIT_VIDEO_DURATION', 'LIMIT_VIDEO_RESOLUTION', 'LIMIT_VIDEO_FPS',
] as const;

/** §4.1 Renders. */
@ApiTags('renders')
@Controller('v1/render')
export class RendersController {
  constructor(private readonly renders: RendersService) {}

  @Post()
  @HttpCode(200)
  @Scopes('renders:write')
  @ApiOperation({ summary: 'Create a render: a still answers done with its url (or its bytes with format=binary)' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 visible ASCII characters; a retry with it returns the original render (§1.4)' })
  @ApiBody({ type: RenderBodyDto, examples: { edit: { summary: 'A still from an edit spec', value: RENDER_EXAMPLE }, template: { summary: 'A template with field values', value: { templateId: 'tpl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P', values: { HEADLINE: 'Spring sale' } } } } })
  @ApiEnvelope(RenderDto, { description: 'A still, rendered (status done, url set); with format=binary its bytes', example: RENDER_VIEW_EXAMPLE, binary: ['image/png', 'image/jpeg', 'application/pdf'] })
  @ApiEnvelope(RenderDto, { status: 202, description: 'A video, queued: poll GET /v1/render/{id} until it settles, or wait for the webhook' })
  @ApiErrors(...CREATE_ERRORS)
  async create(
    @Principal() p: KeyPrincipal,
    @Body() body: RenderBodyDto,
    @Query() query: RenderQueryDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const pre = reply.elapsedTime;
    const sent = { body: reply.request.body, query: reply.request.query };
    const { render, replayed, timing } = await this.renders.create(p, { body, query, idempotencyKey, sent });
    reply.header('x-render-id', render.id);
    // A video is accepted into the queue (§3): 202, poll the record or wait for the webhook.
    if (render.kind === 'video') reply.status(202);
    // `app`: from the request's arrival to here (parsing, authentication, the render itself); `out`: reading the bytes.
    const serverTiming = (extra: Record<string, number>) => {
      if (timing) reply.header('server-timing', Object.entries({ ...timing, pre, ...extra, app: reply.elapsedTime }).map(([k, ms]) => `${k};dur=${Math.round(ms * 10) / 10}`).join(', '));
    };
    if (replayed) reply.header('idempotent-replayed', 'true');
    if (query.format === 'binary') {
      const before = performance.now();
      const out = await this.renders.output(render);
      serverTiming({ out: performance.now() - before });
      const ext = render.format === 'jpeg' ? 'jpg' : render.format;
      reply.header('content-disposition', `inline; filename="${render.id}.${ext}"`);
      if (Buffer.isBuffer(out.body)) {
        reply.header('content-type', out.contentType);
        return out.body;
      }
      return new StreamableFile(out.body as never, { type: out.contentType, length: out.sizeBytes });
    }
    serverTiming({});
    const message = replayed ? 'The render of this idempotency key' : render.kind === 'video' ? 'Queued; poll GET /v1/render/{id} or wait for the webhook' : 'Rendered';
    return ok(this.renders.view(render), message);
  }

  @Get('estimate')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'Estimate the cost of a template render (templateId in the query), or of the output the query describes (type, durationSec, resolution, fps, size)' })
  @ApiEnvelope(EstimateDto)
  @ApiErrors(...ESTIMATE_ERRORS)
  async estimateGet(@Principal() p: KeyPrincipal, @Query() query: EstimateGetQueryDto) {
    return ok(await this.renders.estimateQuery(p, query), 'Estimate');
  }

  @Post('estimate')
  @HttpCode(200)
  @Scopes('renders:read')
  @ApiOperation({ summary: 'Estimate the cost of a render body, without rendering or holding credits' })
  @ApiEnvelope(EstimateDto)
  @ApiErrors(...ESTIMATE_ERRORS)
  async estimatePost(@Principal() p: KeyPrincipal, @Body() body: RenderBodyDto, @Query() query: EstimateQueryDto) {
    return ok(await this.renders.estimate(p, { body, query }), 'Estimate');
  }

  @Get()
  @Scopes('renders:read')
  @ApiOperation({ summary: 'List renders (status, kind, templateId sets; created/completed date pairs)' })
  @ApiListQuery(RENDER_LIST)
  @ApiEnvelope(RenderDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  async list(@Principal() p: KeyPrincipal, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(RENDER_LIST, raw);
    const { rows, total } = await this.renders.list(p.workspaceId, q);
    return paged(rows.map((r) => this.renders.view(r)), pagination(q, total));
  }

  @Get(':id')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'Retrieve a render; poll it until it settles' })
  @ApiEnvelope(RenderDto, { description: 'The render; settled once status is done, failed or cancelled', example: RENDER_VIEW_EXAMPLE })
  @ApiErrors('RENDER_NOT_FOUND')
  async get(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(this.renders.view(await this.renders.get(p.workspaceId, id)));
  }

  @Get(':id/edit')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'The normalised edit a render was made from, as a POST /v1/render body (render it again, or copy it)' })
  @ApiEnvelope(RenderEditDto)
  @ApiErrors('RENDER_NOT_FOUND')
  async edit(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(await this.renders.edit(p.workspaceId, id));
  }

  @Get(':id/events')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'A render\'s events (render.queued … render.completed, failed or cancelled), oldest first, each with its webhook deliveries' })
  @ApiEnvelope(RenderEventDto, { isArray: true, paged: false })
  @ApiErrors('RENDER_NOT_FOUND')
  async events(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(await this.renders.events(p.workspaceId, id));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Scopes('renders:write')
  @ApiOperation({ summary: 'Cancel a render: queued → cancelled (200), working → cancelRequested (202)' })
  @ApiEnvelope(RenderDto, { description: 'Cancelled (it was queued); credits released' })
  @ApiEnvelope(RenderDto, { status: 202, description: 'Cancellation requested (it was working; cancelRequested true)' })
  @ApiErrors('RENDER_NOT_FOUND', 'LIVE_MODE_REQUIRED', 'ALREADY_SETTLED')
  async cancel(@Principal() p: KeyPrincipal, @Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const { render, immediate } = await this.renders.cancel(p.workspaceId, p.mode, id);
    if (!immediate) reply.status(202);
    return ok(this.renders.view(render), immediate ? 'Render cancelled; credits released' : 'Cancellation requested; the worker stops at the next stage');
  }
}
