import { Logger } from '@nestjs/common';
import { ApiError } from '#libs/core';
import { type Plan, planFor } from '#libs/workspaces';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { writeEvent } from '#libs/events';
import type { IntegrationProvider, IntegrationsService, UsableConnection } from '#libs/integrations';
import type { MessagingService, SendInput } from '#libs/messaging';
import type { Render, RendersService } from '#libs/renders';
import { SimulatedSuiteWrites, type DriveService, type SheetsService, type SuiteWrites } from '#libs/suite';
import { cellRange, cellText, type Cell, type MessageStep, type RowError, type StepOutcome, type WorkflowStep } from './definition.js';
import { WorkflowRow, WorkflowRun } from './entities.js';
import { runView } from './workflows.service.js';

export interface RunnerDeps {
  orm: Orm;
  renders: Pick<RendersService, 'create' | 'get' | 'view'>;
  integrations: Pick<IntegrationsService, 'use'>;
  sheets: Pick<SheetsService, 'write'>;
  drive: Pick<DriveService, 'upload' | 'list'>;
  messaging: Pick<MessagingService, 'send'>;
  /** How often a row polls its video render until it settles. */
  pollMs?: number;
}

/** Failures worth another run of the row's job (an outage, a crash): the rest are the row's own (422, 402, 409…). */
const TRANSIENT = new Set(['PROVIDER_UNAVAILABLE', 'DEPENDENCY_UNAVAILABLE', 'INTERNAL_ERROR', 'RENDER_TIMEOUT']);

/** A row's render that settled failed or cancelled: its recorded error becomes the row's. */
class RenderFailed extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

function transient(err: unknown): boolean {
  if (err instanceof RenderFailed) return false;
  return !(err instanceof ApiError) || TRANSIENT.has(err.code);
}

const log = new Logger('workflows');

/** A failure as a row records it; a fault of ours is logged here (the row shows only its code). */
function failure(err: unknown): { code: string; message: string } {
  if (err instanceof ApiError || err instanceof RenderFailed) return { code: err.code, message: err.message };
  log.warn(`a workflow step failed unexpectedly: ${(err as Error)?.message ?? String(err)}`);
  return { code: 'INTERNAL_ERROR', message: 'The step failed unexpectedly' };
}

/** The key a row's step is claimed under (a render's or a message's Idempotency-Key): one per run, row and step. */
export function stepKey(rowId: string, step: 'render' | number): string {
  return `wf:${rowId}:${step === 'render' ? 'render' : `s${step}`}`;
}

/** The file name of a row's upload: its render's id, so a retried upload finds it in the folder. */
function uploadName(renderId: string, url: string): string {
  const ext = /\.([a-z0-9]{2,4})(?:\?|$)/i.exec(new URL(url).pathname)?.[1] ?? 'bin';
  return `${renderId}.${ext}`;
}

/**
 * Workflows, the worker's half (docs/workflows.md): one row at a time (its render, then each step,
 * each recorded as it ends and skipped once done; every side effect claimed under its key first), and
 * the run settled once its rows have run.
 */
export class WorkflowRunner {
  private readonly simulated = new SimulatedSuiteWrites();

  constructor(private readonly deps: RunnerDeps) {}

  /**
   * The port of a row's writes into the workspace-suite account: Google in live mode, the simulation
   * in test mode (nothing a test run does reaches a provider; its messages are simulated by
   * MessagingService's own port, chosen by the run's mode).
   */
  private suite(run: WorkflowRun, use: (p: IntegrationProvider) => Promise<UsableConnection>): SuiteWrites {
    if (run.mode === 'test') return this.simulated;
    return {
      write: async (id, input) => this.deps.sheets.write(await use('workspace-suite'), id, { ...input, mode: 'overwrite', raw: true }),
      upload: async (input) => this.deps.drive.upload(await use('workspace-suite'), { ...input, mimeType: null }),
      list: async (q) => this.deps.drive.list(await use('workspace-suite'), q),
    };
  }

  /**
   * One `workflow.row` job. `lastAttempt`: an outage is recorded as the step's failure instead of
   * failing the job for another run.
   */
  async processRow(runId: string, rowId: string, lastAttempt: boolean): Promise<{ status: string }> {
    // The job names its run and row; their workspace comes from them.
    const any = allWorkspaces(this.deps.orm).fork();
    const run = await any.findOne(WorkflowRun, { id: runId });
    if (!run) return { status: 'gone' };
    const now = new Date();
    if (run.cancelRequested) {
      await any.nativeUpdate(WorkflowRow, { id: rowId, status: 'pending' }, { status: 'cancelled', updatedAt: now });
    }
    // Claim the row: pending → running once; a job run again after a crash finds it running and resumes it.
    const claimed = await any.nativeUpdate(WorkflowRow, { id: rowId, status: 'pending' }, { status: 'running', updatedAt: now });
    const em = forWorkspace(this.deps.orm, run.workspaceId);
    const row = await em.findOne(WorkflowRow, { id: rowId });
    if (!row) return { status: 'gone' };
    if (!claimed && row.status !== 'running') return { status: row.status };
    // The round's first row: the run is running, and says so (status and event in one transaction, once).
    if (run.status === 'queued') {
      await em.transactional(async (tx) => {
        const startedAt = run.startedAt ?? now;
        if (await tx.nativeUpdate(WorkflowRun, { id: runId, status: 'queued' }, { status: 'running', startedAt })) {
          await writeEvent(tx, run.workspaceId, 'workflow.run.started', {
            id: runId, workflowId: run.workflowId, status: 'running', round: run.round, totalRows: run.totalRows, createdAt: run.createdAt.toISOString(), startedAt: startedAt.toISOString(),
          }, { mode: run.mode });
        }
      });
    }
    em.assign(row, { attempts: row.attempts + 1 });
    await em.flush();

    const plan: Plan = planFor(run.planCode, run.workspaceId);
    const def = run.definition;
    const connections = new Map<IntegrationProvider, Promise<UsableConnection>>();
    const use = (provider: IntegrationProvider) => {
      let found = connections.get(provider);
      if (!found) connections.set(provider, (found = this.deps.integrations.use(run.workspaceId, plan, provider)));
      return found;
    };

    // The render: claimed by its Idempotency-Key with its credit hold (RendersService), so a second run of this row finds it.
    if (!row.renderId || !row.outputUrl) {
      try {
        const render = await this.render(run, row, plan);
        em.assign(row, { renderId: render.id, outputUrl: this.deps.renders.view(render).url as string, updatedAt: new Date() });
        await em.flush();
      } catch (err) {
        if (transient(err) && !lastAttempt) throw err;
        const error: RowError = { ...failure(err), step: 'render' };
        em.assign(row, { status: 'failed', error, steps: def.steps.map((s) => ({ type: s.type, status: 'skipped' as const })), updatedAt: new Date() });
        await em.flush();
        return { status: 'failed' };
      }
    }

    let firstError: RowError | null = null;
    for (const [i, step] of def.steps.entries()) {
      const prior = row.steps[i];
      if (prior?.status === 'done') continue;
      let outcome: StepOutcome;
      try {
        const result = await this.step(run, plan, row, i, step, prior, use);
        outcome = { type: step.type, status: 'done', result };
      } catch (err) {
        if (transient(err) && !lastAttempt) throw err;
        const error = failure(err);
        outcome = { type: step.type, status: 'failed', error };
        firstError ??= { ...error, step: `steps[${i}]` };
      }
      await this.record(row, i, outcome);
    }
    em.assign(row, { status: firstError ? 'failed' : 'done', error: firstError, updatedAt: new Date() });
    await em.flush();
    return { status: row.status };
  }

  /** A step's outcome, stored before the next step starts (a new array: the JSON column is compared whole). */
  private async record(row: WorkflowRow, i: number, outcome: StepOutcome): Promise<void> {
    const steps = [...row.steps];
    steps[i] = outcome;
    const em = forWorkspace(this.deps.orm, row.workspaceId);
    await em.nativeUpdate(WorkflowRow, { id: row.id }, { steps, updatedAt: new Date() });
    row.steps = steps;
  }

  private async render(run: WorkflowRun, row: WorkflowRow, plan: Plan): Promise<Render> {
    const values: Record<string, Cell> = {};
    for (const [field, column] of Object.entries(run.definition.mapping)) {
      const cell = row.values[column];
      if (cell !== null && cell !== undefined && cell !== '') values[field] = cell;
    }
    const caller = { workspaceId: run.workspaceId, plan, mode: run.mode };
    let { render } = await this.deps.renders.create(caller, { body: { templateId: run.definition.templateId, values }, query: {}, idempotencyKey: stepKey(row.id, 'render') });
    // A video is queued: the row waits for it to settle (its worker moves it; a cancel of the render settles it too).
    while (!['done', 'failed', 'cancelled'].includes(render.status)) {
      await new Promise((r) => setTimeout(r, this.deps.pollMs ?? 1000));
      render = await this.deps.renders.get(run.workspaceId, render.id);
    }
    if (render.status !== 'done') {
      throw new RenderFailed(render.error?.code ?? 'RENDER_CANCELLED', render.error?.message ?? `Render ${render.id} was ${render.status}`);
    }
    return render;
  }

  private async step(run: WorkflowRun, plan: Plan, row: WorkflowRow, i: number, step: WorkflowStep, prior: StepOutcome | undefined, use: (p: IntegrationProvider) => Promise<UsableConnection>): Promise<Record<string, string>> {
    const url = row.outputUrl!;
    const src = run.definition.source;
    const suite = this.suite(run, use);
    // A test run's outcomes say they were simulated (nothing was written or sent).
    const marked = (result: Record<string, string>) => (run.mode === 'test' ? { ...result, simulated: 'true' } : result);
    if (step.type === 'writeBack') {
      if (src.type !== 'sheet' || row.sheetRow === null || row.sheetRow === undefined) throw new ApiError('VALIDATION_FAILED', 'writeBack needs a sheet source');
      // Overwriting one cell with the same URL: doing it twice changes nothing.
      const written = await suite.write(src.spreadsheetId, { range: cellRange(src, run.headers ?? [], step.column, row.sheetRow), values: [[url]] });
      return marked({ range: written.updatedRange });
    }
    if (step.type === 'message') {
      // The message row claims this key before the provider is called: a second run answers the stored message.
      const { message } = await this.deps.messaging.send(run.workspaceId, plan, run.mode, await use('messaging-provider'), this.message(step, row), stepKey(row.id, i));
      return marked({ messageId: message.id, status: message.status });
    }
    // Upload: its name is the render's id; a step begun before (a crash mid-upload) first looks for its file.
    const name = uploadName(row.renderId!, url);
    if (prior?.status === 'started') {
      const listed = await suite.list({ folderId: step.folderId, search: name, kind: null, limit: 10, pageToken: null });
      const found = listed.files.find((f) => f.name === name);
      if (found) return marked({ fileId: found.id, name });
    }
    await this.record(row, i, { type: 'upload', status: 'started', result: { name } });
    const file = await suite.upload({ url, name, folderId: step.folderId });
    return marked({ fileId: file.id, name });
  }

  private message(step: MessageStep, row: WorkflowRow): SendInput {
    const type = step.messageType ?? (step.channel === 'primary_chat' ? 'template' : 'image');
    const variables = step.variables ? Object.fromEntries(Object.entries(step.variables).map(([slot, column]) => [slot, cellText(row.values[column])])) : undefined;
    return {
      to: cellText(row.values[step.to]), channel: step.channel, type,
      ...(type === 'text' ? {} : { renderId: row.renderId! }),
      ...(step.templateName ? { templateName: step.templateName } : {}),
      ...(step.languageCode ? { languageCode: step.languageCode } : {}),
      ...(variables ? { variables } : {}),
      ...(step.subject ? { subject: step.subject } : {}),
      ...(step.caption ? { caption: step.caption } : {}),
      ...(step.text ? { text: step.text } : {}),
    };
  }

  /**
   * The flow's parent (`workflow.run`), once every row's job has ended: rows a job gave up on are
   * failed, the run settles (`completed`, or `cancelled` when asked) with `workflow.run.completed` in
   * the same transaction, once.
   */
  async finishRun(runId: string): Promise<{ status: string }> {
    const run = await allWorkspaces(this.deps.orm).fork().findOne(WorkflowRun, { id: runId });
    if (!run) return { status: 'gone' };
    if (run.status === 'completed' || run.status === 'cancelled') return { status: run.status };
    const em = forWorkspace(this.deps.orm, run.workspaceId);
    const status = run.cancelRequested ? 'cancelled' : 'completed';
    const now = new Date();
    const settled = await em.transactional(async (tx) => {
      await tx.nativeUpdate(WorkflowRow, { runId, status: 'pending' }, { status: run.cancelRequested ? 'cancelled' : 'failed', ...(run.cancelRequested ? {} : { error: { code: 'INTERNAL_ERROR', message: 'The row never ran', step: 'render' } }), updatedAt: now });
      await tx.nativeUpdate(WorkflowRow, { runId, status: 'running' }, { status: 'failed', error: { code: 'INTERNAL_ERROR', message: 'The row\'s job gave up (its worker was lost or the database was unavailable); rerun the run', step: 'render' }, updatedAt: now });
      const n = await tx.nativeUpdate(WorkflowRun, { id: runId, status: { $in: ['queued', 'running'] } }, { status, completedAt: now, startedAt: run.startedAt ?? now });
      if (!n) return false;
      const view = await runView(tx, { ...run, status, completedAt: now, startedAt: run.startedAt ?? now } as WorkflowRun);
      await writeEvent(tx, run.workspaceId, 'workflow.run.completed', { ...view }, { mode: run.mode });
      return true;
    });
    if (settled) log.log(`workflow run ${runId} ${status}`);
    return { status };
  }
}
