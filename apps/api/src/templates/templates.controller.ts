import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiErrors, Scopes, Session } from '../http/decorators.js';
import { Principal, SessionUser, type KeyPrincipal, type SessionPrincipal } from '../http/principal.js';
import {
  CategoryDto, CreateTemplateDto, ImportTemplateDto, PublishResultDto, PublishTemplateDto, TemplateDetailDto, TemplateDto,
  TemplateListQuery, TemplateSummaryDto, UpdateTemplateDto,
} from './templates.dto.js';
import { TemplateHandlers } from './templates.handlers.js';

const NOT_FOUND = 'TEMPLATE_NOT_FOUND' as const;
const CONTENT_ERRORS = ['INVALID_REQUEST', 'VALIDATION_FAILED', 'INVALID_CATEGORY', 'TEMPLATE_VALIDATION_FAILED', 'EMPTY_TIMELINE'] as const;

/** §4.2: templates with an API key. Editing, publishing and archiving are the dashboard's (decisions.md). */
@ApiTags('templates')
@Controller('v1/templates')
export class TemplatesController {
  constructor(private readonly h: TemplateHandlers) {}

  @Get()
  @Scopes('templates:read')
  @ApiOperation({ summary: 'List the workspace\'s templates and the shared library' })
  @TemplateListQuery()
  @ApiEnvelope(TemplateDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  list(@Principal() p: KeyPrincipal, @Query() q: Record<string, unknown>) {
    return this.h.list(p.workspaceId, q);
  }

  @Get('categories')
  @Scopes('templates:read')
  @ApiOperation({ summary: 'Template categories and their subcategories (the values of categoryId)' })
  @ApiEnvelope(CategoryDto, { isArray: true, paged: false })
  categories() {
    return this.h.categories();
  }

  @Post('import')
  @Scopes('templates:write')
  @ApiOperation({ summary: 'Import a design (an edit spec with {{FIELD}} placeholders) as a private draft; fields are derived from the placeholders when absent' })
  @ApiEnvelope(TemplateSummaryDto, { status: 201 })
  @ApiErrors(...CONTENT_ERRORS, 'LIMIT_TEMPLATES')
  import(@Principal() p: KeyPrincipal, @Body() body: ImportTemplateDto) {
    return this.h.import(p.workspaceId, p.plan, body);
  }

  @Get(':id')
  @Scopes('templates:read')
  @ApiOperation({ summary: 'Retrieve a template and its field schema (own, or in the library)' })
  @ApiEnvelope(TemplateDetailDto)
  @ApiErrors(NOT_FOUND)
  get(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return this.h.get(p.workspaceId, id);
  }

  @Post(':id/duplicate')
  @Scopes('templates:write')
  @ApiOperation({ summary: 'Copy a template into the workspace as a private draft (version 1); counts against the plan\'s template allowance' })
  @ApiEnvelope(TemplateSummaryDto, { status: 201 })
  @ApiErrors(NOT_FOUND, 'LIMIT_TEMPLATES')
  duplicate(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return this.h.duplicate(p.workspaceId, p.plan, id);
  }
}

/** The library rule (decisions.md, issue 28): a template public after the write is an owner's to create, save or publish. */
const writer = (s: SessionPrincipal) => ({ mayShare: s.role === 'owner' });

/** Dashboard (session + X-Service-Org): editing, the publish review and archiving (decisions.md "done in the dashboard"). */
@ApiTags('organization')
@Controller('organization/templates')
export class OrganizationTemplatesController {
  constructor(private readonly h: TemplateHandlers) {}

  @Get()
  @Session()
  @ApiOperation({ summary: 'List the workspace\'s templates and the shared library' })
  @TemplateListQuery()
  @ApiEnvelope(TemplateDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  list(@SessionUser() s: SessionPrincipal, @Query() q: Record<string, unknown>) {
    return this.h.list(s.workspaceId, q);
  }

  @Post()
  @Session()
  @ApiOperation({ summary: 'Create a template (a draft); visibility public is an owner\'s (403 ROLE_REQUIRED)' })
  @ApiEnvelope(TemplateDetailDto, { status: 201 })
  @ApiErrors(...CONTENT_ERRORS, 'LIMIT_TEMPLATES', 'ROLE_REQUIRED')
  create(@SessionUser() s: SessionPrincipal, @Body() body: CreateTemplateDto) {
    return this.h.create(s.workspaceId, s.plan, body, writer(s));
  }

  @Get(':id')
  @Session()
  @ApiOperation({ summary: 'Retrieve a template with its edit spec' })
  @ApiEnvelope(TemplateDetailDto)
  @ApiErrors(NOT_FOUND)
  get(@SessionUser() s: SessionPrincipal, @Param('id') id: string) {
    return this.h.get(s.workspaceId, id);
  }

  @Patch(':id')
  @Session()
  @ApiOperation({ summary: 'Save a template: send the version it was loaded at; the save bumps it. A published template must still pass its review; a template public after the save is an owner\'s (403 ROLE_REQUIRED)' })
  @ApiEnvelope(TemplateDetailDto)
  @ApiErrors(NOT_FOUND, 'TEMPLATE_STALE', 'NOT_PUBLISHABLE', 'ROLE_REQUIRED', ...CONTENT_ERRORS)
  update(@SessionUser() s: SessionPrincipal, @Param('id') id: string, @Body() body: UpdateTemplateDto) {
    return this.h.update(s.workspaceId, id, body, writer(s));
  }

  @Post(':id/publish')
  @HttpCode(200)
  @Session()
  @ApiOperation({ summary: 'Run the review (category, edit, timeline, placeholders ↔ fields, media reachable) and publish; emits template.published. A public template goes to the shared library: an owner\'s (403 ROLE_REQUIRED)' })
  @ApiBody({ type: PublishTemplateDto, required: false })
  @ApiEnvelope(PublishResultDto)
  @ApiErrors(NOT_FOUND, 'TEMPLATE_STALE', 'NOT_PUBLISHABLE', 'INVALID_CATEGORY', 'INVALID_REQUEST', 'VALIDATION_FAILED', 'ROLE_REQUIRED')
  publish(@SessionUser() s: SessionPrincipal, @Param('id') id: string, @Body() body: PublishTemplateDto) {
    return this.h.publish(s.workspaceId, id, body.version, writer(s));
  }

  @Post(':id/archive')
  @HttpCode(200)
  @Session()
  @ApiOperation({ summary: 'Archive a template: it leaves the library and can no longer be rendered' })
  @ApiEnvelope(TemplateSummaryDto)
  @ApiErrors(NOT_FOUND)
  archive(@SessionUser() s: SessionPrincipal, @Param('id') id: string) {
    return this.h.archive(s.workspaceId, id);
  }

  @Post(':id/duplicate')
  @Session()
  @ApiOperation({ summary: 'Copy a template into the workspace as a private draft' })
  @ApiEnvelope(TemplateSummaryDto, { status: 201 })
  @ApiErrors(NOT_FOUND, 'LIMIT_TEMPLATES')
  duplicate(@SessionUser() s: SessionPrincipal, @Param('id') id: string) {
    return this.h.duplicate(s.workspaceId, s.plan, id);
  }
}

/** Dashboard: the category catalogue. */
@ApiTags('organization')
@Controller('organization/template-categories')
export class OrganizationTemplateCategoriesController {
  constructor(private readonly h: TemplateHandlers) {}

  @Get()
  @Session()
  @ApiOperation({ summary: 'Template categories and their subcategories' })
  @ApiEnvelope(CategoryDto, { isArray: true, paged: false })
  list() {
    return this.h.categories();
  }
}
