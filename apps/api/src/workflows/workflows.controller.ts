import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ok, paged, pagination, parseListQuery, type ListSpec } from '#libs/core';
import { ROW_STATUSES, RUN_STATUSES, WorkflowsService, type DefinitionInput } from '#libs/workflows';
import { ApiEnvelope, ApiErrors, ApiListQuery, RequireFeature, Scopes } from '../http/decorators.js';
import { Principal, type KeyPrincipal } from '../http/principal.js';
import { CreateWorkflowDto, RunWorkflowDto, UpdateWorkflowDto, WorkflowDto, WorkflowRowDto, WorkflowRunDto } from './workflows.dto.js';

export const WORKFLOW_LIST: ListSpec = { sort: ['createdAt', 'updatedAt', 'name'], defaultSort: 'createdAt', limit: { default: 20, max: 100 }, search: { maxLength: 128 } };
export const RUN_LIST: ListSpec = { sort: ['createdAt'], defaultSort: 'createdAt', limit: { default: 20, max: 100 }, sets: { status: RUN_STATUSES } };
export const ROW_LIST: ListSpec = { sort: ['position'], defaultSort: 'position', defaultOrder: 'asc', limit: { default: 50, max: 100 }, sets: { status: ROW_STATUSES } };

/** What a definition can be refused for (define, update): the template, the rules, the plan, the accounts, the sheet. */
const DEFINE_ERRORS = [
  'VALIDATION_FAILED', 'TEMPLATE_NOT_FOUND', 'TEMPLATE_NOT_OWNED', 'TEMPLATE_NOT_PUBLISHED', 'LIMIT_WORKFLOWMAXSTEPS', 'LIMIT_INTEGRATION_NOT_ALLOWED',
  'INTEGRATION_NOT_CONNECTED', 'INTEGRATION_REAUTH_REQUIRED', 'MESSAGING_CHANNEL_NOT_CONNECTED', 'SPREADSHEET_NOT_FOUND', 'PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR',
] as const;

/**
 * Workflows (docs/workflows.md): rows of a connected sheet (or posted) become renders of a template,
 * then cells written back, messages and uploads. Every route needs a plan with workflows (402
 * FEATURE_WORKFLOWSENABLED); reads need renders:read, changes and runs renders:write and
 * integrations:write (a run renders, and writes into connected accounts).
 */
@ApiTags('workflows')
@Controller('v1/workflows')
@RequireFeature('workflowsEnabled')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Post()
  @Scopes('renders:write', 'integrations:write')
  @ApiOperation({ summary: 'Define a workflow: a source (a sheet\'s tab or posted rows), a template and its field mapping, then steps (write back, message, upload)' })
  @ApiEnvelope(WorkflowDto, { status: 201 })
  @ApiErrors(...DEFINE_ERRORS)
  async create(@Principal() p: KeyPrincipal, @Body() body: CreateWorkflowDto) {
    return ok(await this.workflows.define(p.workspaceId, p.plan, p.mode, body as DefinitionInput), 'Created');
  }

  @Get()
  @Scopes('renders:read')
  @ApiOperation({ summary: 'List workflows' })
  @ApiListQuery(WORKFLOW_LIST)
  @ApiEnvelope(WorkflowDto, { isArray: true })
  @ApiErrors('INVALID_LIST_QUERY')
  async list(@Principal() p: KeyPrincipal, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(WORKFLOW_LIST, raw);
    const { rows, total } = await this.workflows.list(p.workspaceId, q);
    return paged(rows, pagination(q, total));
  }

  @Get(':id')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'Retrieve a workflow' })
  @ApiEnvelope(WorkflowDto)
  @ApiErrors('WORKFLOW_NOT_FOUND')
  async get(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    return ok(await this.workflows.get(p.workspaceId, id));
  }

  @Patch(':id')
  @Scopes('renders:write', 'integrations:write')
  @ApiOperation({ summary: 'Change a workflow: the fields given replace the stored ones and every rule is checked again; runs already started keep their definition' })
  @ApiEnvelope(WorkflowDto)
  @ApiErrors('WORKFLOW_NOT_FOUND', 'LIVE_MODE_REQUIRED', ...DEFINE_ERRORS)
  async update(@Principal() p: KeyPrincipal, @Param('id') id: string, @Body() body: UpdateWorkflowDto) {
    return ok(await this.workflows.update(p.workspaceId, p.plan, p.mode, id, body as Partial<DefinitionInput>), 'Updated');
  }

  @Delete(':id')
  @Scopes('renders:write', 'integrations:write')
  @ApiOperation({ summary: 'Delete a workflow with its runs (their renders, messages and uploads stay)' })
  @ApiEnvelope(null)
  @ApiErrors('WORKFLOW_NOT_FOUND', 'LIVE_MODE_REQUIRED', 'WORKFLOW_RUN_ACTIVE')
  async remove(@Principal() p: KeyPrincipal, @Param('id') id: string) {
    await this.workflows.remove(p.workspaceId, p.mode, id);
    return ok(null, 'Deleted');
  }

  @Post(':id/runs')
  @HttpCode(202)
  @Scopes('renders:write', 'integrations:write')
  @ApiOperation({ summary: 'Run a workflow: its rows (the sheet read now, or `rows`) checked against every column it names, then rendered and delivered by the workers; poll the run or wait for workflow.run.completed' })
  @ApiEnvelope(WorkflowRunDto, { status: 202 })
  @ApiErrors('WORKFLOW_NOT_FOUND', 'LIMIT_WORKFLOWRUNS', ...DEFINE_ERRORS)
  async run(@Principal() p: KeyPrincipal, @Param('id') id: string, @Body() body: RunWorkflowDto) {
    return ok(await this.workflows.start(p.workspaceId, p.plan, p.mode, id, body.rows), 'Queued');
  }

  @Get(':id/runs')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'List a workflow\'s runs (newest first) with their progress' })
  @ApiListQuery(RUN_LIST)
  @ApiEnvelope(WorkflowRunDto, { isArray: true })
  @ApiErrors('WORKFLOW_NOT_FOUND', 'INVALID_LIST_QUERY')
  async runs(@Principal() p: KeyPrincipal, @Param('id') id: string, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(RUN_LIST, raw);
    const { rows, total } = await this.workflows.listRuns(p.workspaceId, id, q);
    return paged(rows, pagination(q, total));
  }

  @Get(':id/runs/:runId')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'Retrieve a run and its progress (rows by status)' })
  @ApiEnvelope(WorkflowRunDto)
  @ApiErrors('WORKFLOW_RUN_NOT_FOUND')
  async getRun(@Principal() p: KeyPrincipal, @Param('id') id: string, @Param('runId') runId: string) {
    return ok(await this.workflows.getRun(p.workspaceId, id, runId));
  }

  @Get(':id/runs/:runId/rows')
  @Scopes('renders:read')
  @ApiOperation({ summary: 'A run\'s rows with their results: render id, output URL, each step\'s outcome and error (paged, in row order)' })
  @ApiListQuery(ROW_LIST)
  @ApiEnvelope(WorkflowRowDto, { isArray: true })
  @ApiErrors('WORKFLOW_RUN_NOT_FOUND', 'INVALID_LIST_QUERY')
  async rows(@Principal() p: KeyPrincipal, @Param('id') id: string, @Param('runId') runId: string, @Query() raw: Record<string, unknown>) {
    const q = parseListQuery(ROW_LIST, raw);
    const { rows, total } = await this.workflows.rows(p.workspaceId, id, runId, q);
    return paged(rows, pagination(q, total));
  }

  @Post(':id/runs/:runId/cancel')
  @HttpCode(202)
  @Scopes('renders:write', 'integrations:write')
  @ApiOperation({ summary: 'Cancel a run: no row starts after this; rows already running finish; the run then settles cancelled' })
  @ApiEnvelope(WorkflowRunDto, { status: 202 })
  @ApiErrors('WORKFLOW_RUN_NOT_FOUND', 'LIVE_MODE_REQUIRED', 'ALREADY_SETTLED')
  async cancel(@Principal() p: KeyPrincipal, @Param('id') id: string, @Param('runId') runId: string) {
    return ok(await this.workflows.cancel(p.workspaceId, p.mode, id, runId), 'Cancelling: rows already running finish');
  }

  @Post(':id/runs/:runId/rerun')
  @HttpCode(202)
  @Scopes('renders:write', 'integrations:write')
  @ApiOperation({ summary: 'Run a settled run\'s failed and cancelled rows again: what they already rendered, sent or uploaded is found by its key and not made again' })
  @ApiEnvelope(WorkflowRunDto, { status: 202 })
  @ApiErrors('WORKFLOW_RUN_NOT_FOUND', 'LIVE_MODE_REQUIRED', 'WORKFLOW_RUN_ACTIVE', 'LIMIT_WORKFLOWMAXSTEPS')
  async rerun(@Principal() p: KeyPrincipal, @Param('id') id: string, @Param('runId') runId: string) {
    const { run, rows } = await this.workflows.rerun(p.workspaceId, p.plan, p.mode, id, runId);
    return ok(run, rows ? `Running ${rows} row(s) again` : 'Every row is done; nothing to run again');
  }
}
