import { MikroORM, type EntityManager, type FilterQuery } from '@mikro-orm/core';
import { ApiError, assertModeMayAct, likeTerm, newId, orderBy, validationFailed, type KeyMode, type ListQuery } from '#libs/core';
import { lockWorkspace, monthStart, type Plan } from '#libs/workspaces';
import { forWorkspace, retryBusy, type Orm } from '#libs/db';
import type { IntegrationsService } from '#libs/integrations';
import type { MessagingService } from '#libs/messaging';
import type { SheetsService } from '#libs/suite';
import type { TemplatesService } from '#libs/templates';
import {
  checkColumns, checkDefinition, checkStepCeiling, MAX_RUN_ROWS, normaliseSteps, sheetRows, sourceRange, type Cell, type SheetSource, type SourceRow, type WorkflowDefinition,
} from './definition.js';
import { ROW_STATUSES, Workflow, WorkflowRow, WorkflowRun, type RowStatus, type RunStatus } from './entities.js';

export interface WorkflowsDeps {
  orm: Orm;
  templates: Pick<TemplatesService, 'findForRender'>;
  integrations: Pick<IntegrationsService, 'use'>;
  sheets: Pick<SheetsService, 'read'>;
  messaging: Pick<MessagingService, 'channelsOf'>;
  /** Hands a run's rows to the workers: one flow (a `workflow.run` parent over a `workflow.row` child per row). */
  enqueue: (runId: string, round: number, rowIds: string[]) => Promise<void>;
}

export interface WorkflowView {
  id: string;
  name: string;
  source: WorkflowDefinition['source'];
  templateId: string;
  mapping: Record<string, string>;
  steps: WorkflowDefinition['steps'];
  createdAt: string;
  updatedAt: string;
  /** The definer's mode: a test caller may change or delete only test workflows. */
  mode: KeyMode;
}

export type RunProgress = Record<RowStatus, number>;

export interface RunView {
  id: string;
  workflowId: string;
  status: RunStatus;
  mode: KeyMode;
  cancelRequested: boolean;
  round: number;
  totalRows: number;
  progress: RunProgress;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

export interface RowView {
  id: string;
  position: number;
  sheetRow: number | null;
  values: Record<string, Cell>;
  status: RowStatus;
  renderId: string | null;
  outputUrl: string | null;
  steps: WorkflowRow['steps'];
  error: WorkflowRow['error'];
  attempts: number;
  updatedAt: string;
}

const ACTIVE: RunStatus[] = ['queued', 'running'];

export function workflowView(w: Workflow): WorkflowView {
  const d = w.definition;
  return { id: w.id, name: w.name, source: d.source, templateId: d.templateId, mapping: d.mapping, steps: d.steps, createdAt: w.createdAt.toISOString(), updatedAt: w.updatedAt.toISOString(), mode: w.mode };
}

export function rowView(r: WorkflowRow): RowView {
  return {
    id: r.id, position: r.position, sheetRow: r.sheetRow ?? null, values: r.values, status: r.status, renderId: r.renderId ?? null, outputUrl: r.outputUrl ?? null,
    steps: r.steps, error: r.error ?? null, attempts: r.attempts, updatedAt: r.updatedAt.toISOString(),
  };
}

/** Rows of a run by status, read on `em` (the workspace's, or its transaction). */
export async function runProgress(em: EntityManager, runId: string): Promise<RunProgress> {
  const progress = {} as RunProgress;
  for (const status of ROW_STATUSES) progress[status] = await em.count(WorkflowRow, { runId, status });
  return progress;
}

/** A run as the API shows it; `on`: the ORM (the run's workspace), or a transaction of it. */
export async function runView(on: Orm | EntityManager, run: WorkflowRun): Promise<RunView> {
  const em = on instanceof MikroORM ? forWorkspace(on, run.workspaceId) : on;
  return {
    id: run.id, workflowId: run.workflowId, status: run.status, mode: run.mode, cancelRequested: run.cancelRequested, round: run.round, totalRows: run.totalRows,
    progress: await runProgress(em, run.id),
    createdAt: run.createdAt.toISOString(), startedAt: run.startedAt?.toISOString() ?? null, completedAt: run.completedAt?.toISOString() ?? null,
  };
}

/** What a definition is given as (POST, or the PATCHed fields merged over the stored ones). */
export interface DefinitionInput {
  name: string;
  source: { type: 'sheet' | 'rows'; spreadsheetId?: string; tab?: string; headerRow?: number };
  templateId: string;
  mapping: Record<string, string>;
  steps: object[];
}

/**
 * Workflows (docs/workflows.md), the API's half: definitions checked against their template, the
 * connected accounts and the sheet's header row; runs started (plan gates, the live sheet read and
 * checked before anything is rendered, the rows stored, one flow enqueued), read, cancelled, rerun.
 * The worker's half is WorkflowRunner.
 */
export class WorkflowsService {
  constructor(private readonly deps: WorkflowsDeps) {}

  private normalise(input: DefinitionInput): WorkflowDefinition {
    const s = input.source;
    const source: WorkflowDefinition['source'] = s.type === 'sheet'
      ? { type: 'sheet', spreadsheetId: s.spreadsheetId ?? '', tab: s.tab ?? 'Sheet1', headerRow: s.headerRow ?? 1 }
      : { type: 'rows' };
    return { source, templateId: input.templateId, mapping: input.mapping, steps: normaliseSteps(input.steps) };
  }

  /**
   * Every rule a definition must keep, in the order a caller fixes them: the template (404/403/409 as
   * a render), the definition's own rules (422 by path), the plan's step ceiling (402), the connected
   * accounts its source and steps use (402/409), and the sheet's header row (422 naming the column).
   */
  private async check(workspaceId: string, plan: Plan, def: WorkflowDefinition): Promise<void> {
    const template = await this.deps.templates.findForRender(workspaceId, def.templateId);
    checkDefinition(def, template.fields.map((f) => ({ key: f.key, required: f.required === true, hasDefault: f.defaultValue !== undefined && f.defaultValue !== null })));
    checkStepCeiling(plan, def);
    if (def.source.type === 'sheet') {
      const headers = await this.headerRow(workspaceId, plan, def.source);
      checkColumns(def, headers, `the header row (row ${def.source.headerRow}) of ${def.source.tab}`);
    }
    await this.connections(workspaceId, plan, def);
  }

  /** The connected accounts the steps use: 402/409 now, not on every row. */
  private async connections(workspaceId: string, plan: Plan, def: WorkflowDefinition): Promise<void> {
    if (def.steps.some((s) => s.type === 'upload')) await this.deps.integrations.use(workspaceId, plan, 'workspace-suite');
    const channels = [...new Set(def.steps.flatMap((s) => (s.type === 'message' ? [s.channel] : [])))];
    if (channels.length) {
      const accounts = this.deps.messaging.channelsOf(await this.deps.integrations.use(workspaceId, plan, 'messaging-provider'));
      for (const channel of channels) {
        if (!accounts[channel]) throw new ApiError('MESSAGING_CHANNEL_NOT_CONNECTED', `The messaging-provider connection has no ${channel} account; connect one (integration:connect --provider messaging-provider --channel ${channel})`);
      }
    }
  }

  private async headerRow(workspaceId: string, plan: Plan, src: SheetSource): Promise<string[]> {
    return (await this.readSheet(workspaceId, plan, src, true)).headers;
  }

  /** The source tab (or its header row alone); a tab Google cannot find is 422 on `source.tab`. */
  private async readSheet(workspaceId: string, plan: Plan, src: SheetSource, headerOnly: boolean): Promise<ReturnType<typeof sheetRows>> {
    const use = await this.deps.integrations.use(workspaceId, plan, 'workspace-suite');
    try {
      const read = await this.deps.sheets.read(use, src.spreadsheetId, { range: sourceRange(src, headerOnly), as: 'values', renderOption: 'FORMATTED_VALUE' });
      return sheetRows('values' in read ? read.values : [], src.headerRow);
    } catch (err) {
      const refused = err instanceof ApiError && err.code === 'VALIDATION_FAILED' ? err.extras.errors?.['query.range'] : undefined;
      if (refused) throw validationFailed({ 'source.tab': refused }, `The spreadsheet has no tab "${src.tab}" to read`);
      throw err;
    }
  }

  async define(workspaceId: string, plan: Plan, mode: KeyMode, input: DefinitionInput): Promise<WorkflowView> {
    const def = this.normalise(input);
    await this.check(workspaceId, plan, def);
    const em = forWorkspace(this.deps.orm, workspaceId);
    const now = new Date();
    const row = em.create(Workflow, { id: newId('workflow'), workspaceId, name: input.name.trim(), searchText: input.name.trim().toLowerCase(), definition: def, createdAt: now, updatedAt: now, mode });
    await em.flush();
    return workflowView(row);
  }

  async list(workspaceId: string, q: ListQuery): Promise<{ rows: WorkflowView[]; total: number }> {
    const where: FilterQuery<Workflow> = q.search ? { searchText: { $like: likeTerm(q.search) } } : {};
    const [rows, total] = await forWorkspace(this.deps.orm, workspaceId).findAndCount(Workflow, where, { orderBy: orderBy(q) as never, limit: q.limit, offset: q.offset });
    return { rows: rows.map(workflowView), total };
  }

  private async find(workspaceId: string, id: string): Promise<Workflow> {
    const row = await forWorkspace(this.deps.orm, workspaceId).findOne(Workflow, { id });
    if (!row) throw new ApiError('WORKFLOW_NOT_FOUND', `Workflow ${id} does not exist`);
    return row;
  }

  async get(workspaceId: string, id: string): Promise<WorkflowView> {
    return workflowView(await this.find(workspaceId, id));
  }

  /** PATCH: the given fields over the stored ones, every rule checked again; running runs keep the definition they started with. */
  async update(workspaceId: string, plan: Plan, mode: KeyMode, id: string, patch: Partial<DefinitionInput>): Promise<WorkflowView> {
    const row = await this.find(workspaceId, id);
    assertModeMayAct(mode, row.mode, 'workflow');
    const d = row.definition;
    const merged: DefinitionInput = {
      name: patch.name ?? row.name,
      source: patch.source ?? d.source,
      templateId: patch.templateId ?? d.templateId,
      mapping: patch.mapping ?? d.mapping,
      steps: patch.steps ?? d.steps,
    };
    const def = this.normalise(merged);
    await this.check(workspaceId, plan, def);
    const em = forWorkspace(this.deps.orm, workspaceId);
    em.assign(row, { name: merged.name.trim(), searchText: merged.name.trim().toLowerCase(), definition: def, updatedAt: new Date() });
    await em.flush();
    return workflowView(row);
  }

  /**
   * Deletes a workflow with its runs' rows and its older runs; 409 while one of its runs is active.
   * This month's run records stay (unreachable, the rows' data gone): they are what LIMIT_WORKFLOWRUNS
   * counts, so deleting and re-creating a workflow gives no runs back.
   */
  async remove(workspaceId: string, mode: KeyMode, id: string): Promise<void> {
    assertModeMayAct(mode, (await this.find(workspaceId, id)).mode, 'workflow');
    const em = forWorkspace(this.deps.orm, workspaceId);
    if (await em.count(WorkflowRun, { workflowId: id, status: { $in: ACTIVE } })) {
      throw new ApiError('WORKFLOW_RUN_ACTIVE', `Workflow ${id} has a run queued or running; cancel it (POST …/runs/{runId}/cancel) or wait for it`);
    }
    await em.transactional(async (tx) => {
      const runs = (await tx.find(WorkflowRun, { workflowId: id }, { fields: ['id'] })).map((r) => r.id);
      if (runs.length) await tx.nativeDelete(WorkflowRow, { runId: { $in: runs } });
      await tx.nativeDelete(WorkflowRun, { workflowId: id, createdAt: { $lt: monthStart() } });
      await tx.nativeDelete(Workflow, { id });
    });
  }

  // --- runs ------------------------------------------------------------------------------------------

  /**
   * POST …/runs: the plan's gates (402 FEATURE_WORKFLOWSENABLED at the route, LIMIT_WORKFLOWMAXSTEPS,
   * LIMIT_WORKFLOWRUNS), the rows (the live sheet, or `rows` posted) checked against every column the
   * definition names (422, nothing rendered), then the run and its rows stored in one transaction,
   * and one flow enqueued (`workflow.run.started` is written when its first row starts).
   */
  async start(workspaceId: string, plan: Plan, mode: KeyMode, workflowId: string, posted: Record<string, Cell>[] | undefined): Promise<RunView> {
    const workflow = await this.find(workspaceId, workflowId);
    const def = workflow.definition;
    checkStepCeiling(plan, def);
    const em = forWorkspace(this.deps.orm, workspaceId);
    // Checked first so a spent allowance reads no sheet, and again under the workspace's lock below.
    await runAllowance(em, plan);
    await this.deps.templates.findForRender(workspaceId, def.templateId);
    let rows: SourceRow[];
    let headers: string[] | null = null;
    if (def.source.type === 'sheet') {
      if (posted !== undefined) throw validationFailed({ rows: ['this workflow reads its rows from its sheet; post no rows'] });
      const grid = await this.readSheet(workspaceId, plan, def.source, false);
      headers = grid.headers;
      checkColumns(def, headers, `the header row (row ${def.source.headerRow}) of ${def.source.tab}`);
      rows = grid.rows;
      if (!rows.length) throw validationFailed({ source: [`${def.source.tab} has no rows below its header row (row ${def.source.headerRow})`] }, 'Nothing to run');
    } else {
      if (!posted?.length) throw validationFailed({ rows: ['are required: this workflow\'s source is posted rows (1 or more)'] });
      const keys = [...new Set(posted.flatMap((r) => Object.keys(r)))];
      checkColumns(def, keys, 'the posted rows');
      rows = posted.map((values) => ({ sheetRow: null, values: Object.fromEntries(keys.map((k) => [k, values[k] ?? null])) }));
    }
    if (rows.length > MAX_RUN_ROWS) throw validationFailed({ [posted ? 'rows' : 'source']: [`${rows.length} rows; a run takes at most ${MAX_RUN_ROWS.toLocaleString('en')}`] });
    await this.connections(workspaceId, plan, def);

    const now = new Date();
    const runId = newId('workflowRun');
    const rowIds = rows.map(() => newId('workflowRow'));
    // Under the workspace's lock: parallel starts at the last allowed run cannot both pass the count.
    const run = await retryBusy(() => em.fork().transactional(async (tx) => {
      await lockWorkspace(tx, workspaceId);
      await runAllowance(tx, plan);
      const created = tx.create(WorkflowRun, {
        id: runId, workspaceId, workflowId, status: 'queued', definition: def, mode, planCode: plan.code, headers, totalRows: rows.length, round: 1,
        cancelRequested: false, createdAt: now, startedAt: null, completedAt: null,
      });
      rows.forEach((r, i) => tx.create(WorkflowRow, {
        id: rowIds[i]!, workspaceId, runId, position: i, sheetRow: r.sheetRow, values: r.values, status: 'pending', renderId: null, outputUrl: null, steps: [], error: null, attempts: 0, updatedAt: now,
      }));
      await tx.flush();
      return created;
    }));
    // The run as stored (read before the workers can take a row): queued, every row pending.
    const view = await runView(this.deps.orm, run);
    try {
      await this.deps.enqueue(runId, 1, rowIds);
    } catch (err) {
      // No flow, no run: nothing is left waiting for workers that will never come, and the month's count is not spent.
      await em.transactional(async (tx) => {
        await tx.nativeDelete(WorkflowRow, { runId });
        await tx.nativeDelete(WorkflowRun, { id: runId });
      });
      throw err;
    }
    return view;
  }

  private async findRun(workspaceId: string, workflowId: string, runId: string): Promise<WorkflowRun> {
    const run = await forWorkspace(this.deps.orm, workspaceId).findOne(WorkflowRun, { id: runId, workflowId });
    if (!run) throw new ApiError('WORKFLOW_RUN_NOT_FOUND', `Workflow ${workflowId} has no run ${runId}`);
    return run;
  }

  async listRuns(workspaceId: string, workflowId: string, q: ListQuery): Promise<{ rows: RunView[]; total: number }> {
    await this.find(workspaceId, workflowId);
    const where: FilterQuery<WorkflowRun> = { workflowId };
    if (q.sets.status) where.status = { $in: q.sets.status as RunStatus[] };
    const [runs, total] = await forWorkspace(this.deps.orm, workspaceId).findAndCount(WorkflowRun, where, { orderBy: orderBy(q) as never, limit: q.limit, offset: q.offset });
    return { rows: await Promise.all(runs.map((r) => runView(this.deps.orm, r))), total };
  }

  async getRun(workspaceId: string, workflowId: string, runId: string): Promise<RunView> {
    return runView(this.deps.orm, await this.findRun(workspaceId, workflowId, runId));
  }

  /** The run's rows with their results, in order (filter: `status`). */
  async rows(workspaceId: string, workflowId: string, runId: string, q: ListQuery): Promise<{ rows: RowView[]; total: number }> {
    await this.findRun(workspaceId, workflowId, runId);
    const where: FilterQuery<WorkflowRow> = { runId };
    if (q.sets.status) where.status = { $in: q.sets.status as RowStatus[] };
    const [rows, total] = await forWorkspace(this.deps.orm, workspaceId).findAndCount(WorkflowRow, where, { orderBy: orderBy(q) as never, limit: q.limit, offset: q.offset });
    return { rows: rows.map(rowView), total };
  }

  /**
   * Cancel: no row starts after this (the pending ones are `cancelled` at once); rows already running
   * finish (their renders settle and their credits with them); the run's parent job then settles the
   * run `cancelled` with `workflow.run.completed`. A settled run: 409 ALREADY_SETTLED.
   */
  async cancel(workspaceId: string, mode: KeyMode, workflowId: string, runId: string): Promise<RunView> {
    const run = await this.findRun(workspaceId, workflowId, runId);
    assertModeMayAct(mode, run.mode, 'workflow run');
    if (!ACTIVE.includes(run.status)) throw new ApiError('ALREADY_SETTLED', `Run ${runId} is ${run.status}; there is nothing to cancel`);
    const em = forWorkspace(this.deps.orm, workspaceId);
    await em.transactional(async (tx) => {
      await tx.nativeUpdate(WorkflowRun, { id: runId }, { cancelRequested: true });
      await tx.nativeUpdate(WorkflowRow, { runId, status: 'pending' }, { status: 'cancelled', updatedAt: new Date() });
    });
    return runView(this.deps.orm, await em.fork().findOneOrFail(WorkflowRun, { id: runId }));
  }

  /**
   * Rerun a settled run: its failed and cancelled rows run again with the same keys, so a render, a
   * message or an upload already made is found and not made again; done rows are left alone. Not a
   * new run (the month's count is unchanged). Active: 409 WORKFLOW_RUN_ACTIVE.
   */
  async rerun(workspaceId: string, plan: Plan, mode: KeyMode, workflowId: string, runId: string): Promise<{ run: RunView; rows: number }> {
    const run = await this.findRun(workspaceId, workflowId, runId);
    assertModeMayAct(mode, run.mode, 'workflow run');
    if (ACTIVE.includes(run.status)) throw new ApiError('WORKFLOW_RUN_ACTIVE', `Run ${runId} is ${run.status}; rerun it once it has settled`);
    checkStepCeiling(plan, run.definition);
    const em = forWorkspace(this.deps.orm, workspaceId);
    const rows = await em.find(WorkflowRow, { runId, status: { $in: ['failed', 'cancelled'] } }, { fields: ['id', 'status'], orderBy: { position: 'asc' } });
    const again = rows.map((r) => r.id);
    if (!again.length) return { run: await runView(this.deps.orm, run), rows: 0 };
    const round = run.round + 1;
    // The rows keep their last `error` until they run again.
    await em.transactional(async (tx) => {
      await tx.nativeUpdate(WorkflowRun, { id: runId }, { status: 'queued', round, cancelRequested: false, completedAt: null, planCode: plan.code });
      await tx.nativeUpdate(WorkflowRow, { id: { $in: again } }, { status: 'pending', updatedAt: new Date() });
    });
    const view = await runView(this.deps.orm, await em.fork().findOneOrFail(WorkflowRun, { id: runId }));
    try {
      await this.deps.enqueue(runId, round, again);
    } catch (err) {
      // No flow: the run is as it was (settled, its rows failed or cancelled), so it can be rerun later.
      await em.transactional(async (tx) => {
        await tx.nativeUpdate(WorkflowRun, { id: runId }, { status: run.status, round: run.round, cancelRequested: run.cancelRequested, completedAt: run.completedAt ?? null, planCode: run.planCode });
        for (const status of ['failed', 'cancelled'] as const) {
          const ids = rows.filter((r) => r.status === status).map((r) => r.id);
          if (ids.length) await tx.nativeUpdate(WorkflowRow, { id: { $in: ids } }, { status });
        }
      });
      throw err;
    }
    return { run: view, rows: again.length };
  }
}

/** §8 workflow runs this month (the records of deleted workflows included) against the plan's ceiling: 402 LIMIT_WORKFLOWRUNS. */
async function runAllowance(em: EntityManager, plan: Plan): Promise<void> {
  const used = await em.count(WorkflowRun, { createdAt: { $gte: monthStart() } });
  if (used >= plan.workflowRunsPerMonth) {
    throw new ApiError('LIMIT_WORKFLOWRUNS', `The ${plan.name} plan's ${plan.workflowRunsPerMonth.toLocaleString('en')} workflow runs this month are used up`);
  }
}
