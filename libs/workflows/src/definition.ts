import { ApiError, validationFailed, type FieldErrors } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import { formatA1, MAX_COLUMN, recordKeys } from '#libs/suite';

/**
 * A workflow's definition and its rules (docs/workflows.md). Pure: what can be told without the
 * template, the sheet or the providers; the service adds those checks.
 */

export type Cell = string | number | boolean | null;

/** Rows of a connected spreadsheet's tab, keyed by its header row. */
export interface SheetSource {
  type: 'sheet';
  spreadsheetId: string;
  tab: string;
  /** 1-based; the rows below it are the workflow's rows. */
  headerRow: number;
}

/** Rows posted with each run (`rows` of POST …/runs). */
export interface RowsSource {
  type: 'rows';
}

export type WorkflowSource = SheetSource | RowsSource;

export const STEP_TYPES = ['writeBack', 'message', 'upload'] as const;
export type StepType = (typeof STEP_TYPES)[number];
export const MESSAGE_CHANNELS = ['primary_chat', 'sms', 'email'] as const;
export const MESSAGE_KINDS = ['template', 'image', 'video', 'document', 'text'] as const;

/** Writes the render's URL into `column` of the row's own line of the sheet. */
export interface WriteBackStep {
  type: 'writeBack';
  column: string;
}

/** Sends the render to the address in column `to` through libs/messaging (the one send path). */
export interface MessageStep {
  type: 'message';
  channel: (typeof MESSAGE_CHANNELS)[number];
  /** The column holding the recipient (a phone number, or an email address on `email`). */
  to: string;
  /** Default: `template` on primary_chat (the render as its media header), `image` elsewhere. */
  messageType?: (typeof MESSAGE_KINDS)[number];
  templateName?: string;
  languageCode?: string;
  /** Body variables by slot number → the column whose value fills it. */
  variables?: Record<string, string>;
  subject?: string;
  caption?: string;
  text?: string;
}

/** Uploads the render's file into a Drive folder (null: My Drive's top level). */
export interface UploadStep {
  type: 'upload';
  folderId: string | null;
}

export type WorkflowStep = WriteBackStep | MessageStep | UploadStep;

export interface WorkflowDefinition {
  source: WorkflowSource;
  templateId: string;
  /** Template field key → the column whose value fills it. */
  mapping: Record<string, string>;
  steps: WorkflowStep[];
}

/** A step's outcome on one row. `started`: its side effect was begun (an upload looks for its file before trying again). */
export interface StepOutcome {
  type: StepType;
  status: 'started' | 'done' | 'failed' | 'skipped';
  error?: { code: string; message: string };
  /** writeBack: the cell written; message: the stored message's id; upload: the Drive file's id and name. */
  result?: Record<string, string>;
}

export interface RowError {
  code: string;
  message: string;
  /** `render` or the failing step's `steps[i]`. */
  step: string;
}

/** The fields each step type takes (besides `type`). */
const STEP_FIELDS: Record<StepType, readonly string[]> = {
  writeBack: ['column'],
  message: ['channel', 'to', 'messageType', 'templateName', 'languageCode', 'variables', 'subject', 'caption', 'text'],
  upload: ['folderId'],
};

/** Steps as given → as stored: only their type's fields; another type's field is 422 by path (never stored silently). */
export function normaliseSteps(steps: readonly object[]): WorkflowStep[] {
  const errors: FieldErrors = {};
  const out = steps.map((step, i) => {
    const raw = step as Record<string, unknown>;
    const type = raw.type as StepType;
    const fields = STEP_FIELDS[type] ?? [];
    const picked: Record<string, unknown> = { type };
    for (const [key, value] of Object.entries(raw)) {
      if (key === 'type' || value === undefined) continue;
      if (fields.includes(key)) picked[key] = value;
      else (errors[`steps[${i}].${key}`] ??= []).push(`is not a field of a ${type} step (its fields: ${fields.join(', ')})`);
    }
    if (type === 'upload') picked.folderId ??= null;
    return picked as unknown as WorkflowStep;
  });
  if (Object.keys(errors).length) throw validationFailed(errors, 'A step holds fields of another type');
  return out;
}

/** Rows a run may hold (one sheet read, one flow). */
export const MAX_RUN_ROWS = 10_000;
/** Steps a definition may hold at all (the plan's ceiling is lower: 402 LIMIT_WORKFLOWMAXSTEPS). */
export const MAX_STEPS = 200;
const DRIVE_ID = /^[\w-]{1,200}$/;

/** The steps a workflow counts against the plan's `workflowMaxSteps`: its render and each step after it. */
export function stepCount(def: Pick<WorkflowDefinition, 'steps'>): number {
  return def.steps.length + 1;
}

/** §7 402 LIMIT_WORKFLOWMAXSTEPS unless the plan allows this many steps. */
export function checkStepCeiling(plan: Plan, def: Pick<WorkflowDefinition, 'steps'>): void {
  const n = stepCount(def);
  if (n > plan.workflowMaxSteps) {
    throw new ApiError('LIMIT_WORKFLOWMAXSTEPS', `The workflow has ${n} steps (its render and ${def.steps.length} more); the ${plan.name} plan allows ${plan.workflowMaxSteps}`);
  }
}

/** The columns a definition reads from each row (mapping, recipients, variables) or writes (write-back), by path. */
export function namedColumns(def: WorkflowDefinition): { path: string; column: string }[] {
  const out: { path: string; column: string }[] = Object.entries(def.mapping).map(([field, column]) => ({ path: `mapping.${field}`, column }));
  def.steps.forEach((s, i) => {
    if (s.type === 'writeBack') out.push({ path: `steps[${i}].column`, column: s.column });
    if (s.type === 'message') {
      out.push({ path: `steps[${i}].to`, column: s.to });
      for (const [slot, column] of Object.entries(s.variables ?? {})) out.push({ path: `steps[${i}].variables.${slot}`, column });
    }
  });
  return out;
}

/**
 * The rules of a definition that need no context (422 by path): the source, each step's fields by
 * its type, and the mapping against the template's fields (`fields`: its keys and which are required
 * without a default).
 */
export function checkDefinition(def: WorkflowDefinition, fields: { key: string; required: boolean; hasDefault: boolean }[]): void {
  const errors: FieldErrors = {};
  const fail = (path: string, why: string) => { (errors[path] ??= []).push(why); };
  const src = def.source;
  if (src.type === 'sheet') {
    if (!DRIVE_ID.test(src.spreadsheetId ?? '')) fail('source.spreadsheetId', 'must be a spreadsheet id (letters, digits, - and _)');
    if (/\p{Cc}/u.test(src.tab)) fail('source.tab', 'holds control characters');
  }
  const keys = new Set(fields.map((f) => f.key));
  for (const [field, column] of Object.entries(def.mapping)) {
    if (!keys.has(field)) fail(`mapping.${field}`, `is not a field of template ${def.templateId} (its fields: ${[...keys].join(', ') || 'none'})`);
    if (!column.trim()) fail(`mapping.${field}`, 'must name a column');
  }
  for (const f of fields) {
    if (f.required && !f.hasDefault && !(f.key in def.mapping)) fail(`mapping.${f.key}`, 'is a required field of the template without a default: map a column to it');
  }
  def.steps.forEach((s, i) => {
    const at = `steps[${i}]`;
    if (s.type === 'writeBack') {
      if (src.type !== 'sheet') fail(`${at}.type`, 'writeBack writes into the source sheet: the workflow\'s source must be a sheet');
      if (!s.column?.trim()) fail(`${at}.column`, 'is required: the header of the column the URL is written into');
    } else if (s.type === 'message') {
      if (!s.to?.trim()) fail(`${at}.to`, 'is required: the column holding each row\'s recipient');
      const kind = s.messageType ?? (s.channel === 'primary_chat' ? 'template' : 'image');
      if (kind === 'template' && !s.templateName?.trim()) fail(`${at}.templateName`, 'is required for template messages');
      if (kind === 'text' && !s.text?.trim()) fail(`${at}.text`, 'is required for text messages');
      if (s.channel === 'email' && !s.subject?.trim()) fail(`${at}.subject`, 'is required on the email channel');
      for (const [slot, column] of Object.entries(s.variables ?? {})) {
        if (!/^[1-9]\d{0,2}$/.test(slot)) fail(`${at}.variables.${slot}`, 'variables are keyed by slot number (1, 2, …)');
        if (typeof column !== 'string' || !column.trim()) fail(`${at}.variables.${slot}`, 'must name a column');
      }
    } else if (s.type === 'upload') {
      if (s.folderId !== null && s.folderId !== undefined && !DRIVE_ID.test(s.folderId)) fail(`${at}.folderId`, 'must be a Drive folder id (letters, digits, - and _)');
    }
  });
  if (Object.keys(errors).length) throw validationFailed(errors, 'The workflow breaks its rules; see errors');
}

/** A row to run: its values by column, and its line in the sheet (null for posted rows). */
export interface SourceRow {
  sheetRow: number | null;
  values: Record<string, Cell>;
}

/**
 * A tab's grid (read from its header row down) → the header keys and its rows: empty rows are left
 * out, each row keeps its line number in the sheet (the write-back cell).
 */
export function sheetRows(grid: Cell[][], headerRow: number): { headers: string[]; rows: SourceRow[] } {
  const [header = [], ...lines] = grid;
  const width = lines.reduce((w, r) => Math.max(w, r.length), header.length);
  const headers = recordKeys(header, width);
  const rows: SourceRow[] = [];
  lines.forEach((line, i) => {
    if (!line.some((c) => c !== null && c !== '')) return;
    const values: Record<string, Cell> = {};
    headers.forEach((h, j) => { values[h] = line[j] === undefined || line[j] === '' ? null : line[j]!; });
    rows.push({ sheetRow: headerRow + 1 + i, values });
  });
  return { headers, rows };
}

/**
 * The run-time check against the live header row (or the posted rows' keys): every column the
 * definition names must exist, or the run is refused (422 by path) before anything is rendered.
 */
export function checkColumns(def: WorkflowDefinition, headers: readonly string[], where: string): void {
  const known = new Set(headers);
  const errors: FieldErrors = {};
  for (const { path, column } of namedColumns(def)) {
    if (!known.has(column)) (errors[path] ??= []).push(`column "${column}" is not in ${where} (${headers.map((h) => `"${h}"`).join(', ') || 'no columns'})`);
  }
  if (Object.keys(errors).length) throw validationFailed(errors, `The workflow names columns that ${where} does not have; nothing was rendered`);
}

/** The A1 range of a tab from its header row down (every column), or (`headerOnly`) its header row alone. */
export function sourceRange(src: SheetSource, headerOnly = false): string {
  return formatA1({ sheet: src.tab, cells: { startColumn: 1, startRow: src.headerRow, endColumn: MAX_COLUMN, endRow: headerOnly ? src.headerRow : null } });
}

/** The A1 cell of `column` on a row's line. */
export function cellRange(src: SheetSource, headers: readonly string[], column: string, sheetRow: number): string {
  const index = headers.indexOf(column) + 1;
  return formatA1({ sheet: src.tab, cells: { startColumn: index, startRow: sheetRow, endColumn: index, endRow: sheetRow } });
}

/** A cell as text (a message variable, a template value). */
export function cellText(cell: Cell | undefined): string {
  return cell === null || cell === undefined ? '' : String(cell);
}
