import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ok } from '#libs/core';
import { RendersService } from '#libs/renders';
import { TemplatesService } from '#libs/templates';
import { ApiEnvelope, ApiErrors, Session } from '../http/decorators.js';
import { SessionUser, type SessionPrincipal } from '../http/principal.js';
import { RENDER_VIEW_EXAMPLE, RenderDto, TemplatePreviewDto } from './renders.dto.js';

/**
 * The dashboard's template form previews: a test-mode still (free, watermarked) marked `preview`, which
 * the renders list leaves out and which writes no event. A session route: an API key has POST /v1/render
 * for real renders (decisions.md "Test mode (issue 28): dashboard previews and the mode switch").
 */
@ApiTags('organization')
@Controller('organization/templates')
export class TemplatePreviewsController {
  constructor(
    private readonly renders: RendersService,
    private readonly templates: TemplatesService,
  ) {}

  @Post(':id/preview')
  @HttpCode(200)
  @Session()
  @ApiOperation({ summary: 'Preview a template the workspace can read (its own, a draft too, or a library one before it is copied) with the form\'s values, free and watermarked, not listed among renders, firing no webhook or event, readable by id for an hour: an image template drawn at once; a video template with draft: true as a small 12 fps video, answered queued (poll GET /v1/render/{id})' })
  @ApiEnvelope(RenderDto, { description: 'The preview, drawn (status done, url set, preview true)', example: { ...RENDER_VIEW_EXAMPLE, mode: 'test', preview: true, credits: 0, watermarked: true } })
  @ApiErrors(
    'VALIDATION_FAILED', 'TEMPLATE_NOT_FOUND', 'TEMPLATE_NOT_OWNED', 'TEMPLATE_NOT_PUBLISHED', 'TEMPLATE_VALIDATION_FAILED', 'EMPTY_TIMELINE',
    'UNSUPPORTED_ASSET', 'MEDIA_UNAVAILABLE', 'LIMIT_IMAGE_SIZE', 'RENDER_TIMEOUT', 'RENDER_FAILED', 'WORKER_LOST',
  )
  async preview(@SessionUser() s: SessionPrincipal, @Param('id') id: string, @Body() body: TemplatePreviewDto) {
    // Test mode whatever X-Service-Mode says: a preview is free and watermarked in either mode of the dashboard.
    const caller = { workspaceId: s.workspaceId, plan: s.plan, mode: 'test' as const };
    if (body.edit) {
      // The editor's unsaved edit of a template the workspace may change (its own: 404/403 as a save would be).
      await this.templates.getOwn(s.workspaceId, id);
      const { render } = await this.renders.create(caller, { body: { edit: body.edit, ...(body.values ? { values: body.values } : {}) }, query: {}, preview: true });
      return ok(this.renders.view(render), 'Preview rendered');
    }
    const { render } = await this.renders.create(caller, { body: { templateId: id, values: body.values }, query: {}, preview: true, draft: body.draft === true });
    return ok(this.renders.view(render), 'Preview rendered');
  }
}
