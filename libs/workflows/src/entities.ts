import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import { workspaceFilter } from '#libs/db';
import type { Cell, RowError, StepOutcome, WorkflowDefinition } from './definition.js';

/** A saved workflow: its source, template, mapping and steps (docs/workflows.md). */
export const Workflow = defineEntity({
  name: 'Workflow',
  tableName: 'workflow',
  filters: workspaceFilter(),
  indexes: [{ properties: ['workspaceId', 'createdAt'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    name: p.string().length(200),
    /** The name lower-cased: what `search` matches (likeTerm), alike on both databases. */
    searchText: p.string().length(200),
    definition: p.json<WorkflowDefinition>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** The definer's mode: a test caller may change or delete only test workflows (a run takes its caller's mode). */
    mode: p.string().length(8).$type<KeyMode>().default('live'),
  },
});
export type Workflow = InferEntity<typeof Workflow>;

/** `queued` → `running` → `completed` | `cancelled` (a rerun puts a settled run back to `queued`). */
export type RunStatus = 'queued' | 'running' | 'completed' | 'cancelled';
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'completed', 'cancelled'];

/** One run of a workflow over the rows read (or posted) when it was started. */
export const WorkflowRun = defineEntity({
  name: 'WorkflowRun',
  tableName: 'workflow_run',
  filters: workspaceFilter(),
  indexes: [{ properties: ['workspaceId', 'workflowId', 'createdAt'] }, { properties: ['workspaceId', 'createdAt'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    workflowId: p.string().length(32),
    status: p.string().length(16).$type<RunStatus>(),
    /** The definition as it was when the run started (a later PATCH does not change a running run). */
    definition: p.json<WorkflowDefinition>(),
    /** The key's mode and the plan when started: the renders' mode, the plan's ceilings. */
    mode: p.string().length(8).$type<'live' | 'test'>(),
    planCode: p.string().length(16),
    /** The sheet's header row as read (null: posted rows). */
    headers: p.json<string[]>().nullable(),
    totalRows: p.integer(),
    /** Each rerun adds one: the flow's job ids of that round. */
    round: p.integer(),
    cancelRequested: p.boolean(),
    createdAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  },
});
export type WorkflowRun = InferEntity<typeof WorkflowRun>;

/** `pending` → `running` → `done` | `failed`; `pending` → `cancelled` when the run is cancelled first. */
export type RowStatus = 'pending' | 'running' | 'done' | 'failed' | 'cancelled';
export const ROW_STATUSES: readonly RowStatus[] = ['pending', 'running', 'done', 'failed', 'cancelled'];

/** One row of a run: its values, its render and each step's outcome. */
export const WorkflowRow = defineEntity({
  name: 'WorkflowRow',
  tableName: 'workflow_row',
  filters: workspaceFilter(),
  indexes: [{ properties: ['workspaceId', 'runId', 'position'] }, { properties: ['runId', 'status'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    runId: p.string().length(32),
    /** 0-based order within the run. */
    position: p.integer(),
    /** The sheet's row number (1-based, as the sheet shows it); null for posted rows. */
    sheetRow: p.integer().nullable(),
    values: p.json<Record<string, Cell>>(),
    status: p.string().length(16).$type<RowStatus>(),
    renderId: p.string().length(32).nullable(),
    outputUrl: p.text().nullable(),
    steps: p.json<StepOutcome[]>(),
    error: p.json<RowError>().nullable(),
    attempts: p.integer(),
    updatedAt: p.datetime(),
  },
});
export type WorkflowRow = InferEntity<typeof WorkflowRow>;
