import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsNotEmpty, IsObject, IsString, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested,
} from 'class-validator';
import { MAX_RUN_ROWS, MAX_STEPS, MESSAGE_CHANNELS, MESSAGE_KINDS, ROW_STATUSES, RUN_STATUSES, STEP_TYPES } from '#libs/workflows';
import { MaxJsonLength, MayOmit, Satisfies } from '../http/validation.js';

// Workflows (beyond the contract; §7 names their plan gates): docs/workflows.md.

const COLUMN_MAX = 200;
const columnMap = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v)
  && Object.entries(v).every(([k, c]) => k.length >= 1 && k.length <= 100 && typeof c === 'string' && c.trim().length >= 1 && c.length <= COLUMN_MAX);
const cellRows = (v: unknown) => Array.isArray(v) && v.every((r) => !!r && typeof r === 'object' && !Array.isArray(r)
  && Object.entries(r as object).every(([k, c]) => k.length <= COLUMN_MAX && (c === null || ['string', 'number', 'boolean'].includes(typeof c)) && (typeof c !== 'string' || c.length <= 50_000) && (typeof c !== 'number' || Number.isFinite(c))));

/** Where a workflow's rows come from. */
export class WorkflowSourceDto {
  @ApiProperty({ enum: ['sheet', 'rows'], description: 'sheet: a connected spreadsheet\'s tab, read at each run; rows: posted with each run' })
  @IsIn(['sheet', 'rows']) type!: 'sheet' | 'rows';

  @ApiPropertyOptional({ description: 'sheet: the spreadsheet\'s id (GET …/workspace-suite/sheets/spreadsheets)' })
  @ValidateIf((o: WorkflowSourceDto) => o.type === 'sheet') @IsString() @IsNotEmpty() @MaxLength(200) spreadsheetId?: string;

  @ApiPropertyOptional({ default: 'Sheet1', maxLength: 100, description: 'sheet: the tab\'s title' })
  @MayOmit() @IsString() @IsNotEmpty() @MaxLength(100) tab?: string;

  @ApiPropertyOptional({ default: 1, minimum: 1, description: 'sheet: the header row (1-based); the rows below it are the workflow\'s rows' })
  @MayOmit() @IsInt() @Min(1) @Max(1_000_000) headerRow?: number;
}

/** One step after the render; the fields each type uses are named in its description. */
export class WorkflowStepDto {
  @ApiProperty({ enum: STEP_TYPES, description: 'writeBack: the render\'s URL into `column` of the row\'s own line; message: sent to the address in column `to`; upload: the file into Drive folder `folderId`' })
  @IsIn(STEP_TYPES) type!: string;

  @ApiPropertyOptional({ maxLength: COLUMN_MAX, description: 'writeBack: the header of the column the URL is written into' })
  @MayOmit() @IsString() @MaxLength(COLUMN_MAX) column?: string;

  @ApiPropertyOptional({ enum: MESSAGE_CHANNELS, description: 'message: the channel' })
  @ValidateIf((o: WorkflowStepDto) => o.type === 'message') @IsIn(MESSAGE_CHANNELS) channel?: string;

  @ApiPropertyOptional({ maxLength: COLUMN_MAX, description: 'message: the column holding the recipient (phone number, or email address on email)' })
  @MayOmit() @IsString() @MaxLength(COLUMN_MAX) to?: string;

  @ApiPropertyOptional({ enum: MESSAGE_KINDS, description: 'message: default template on primary_chat (the render as its media header), image elsewhere' })
  @MayOmit() @IsIn(MESSAGE_KINDS) messageType?: string;

  @ApiPropertyOptional({ maxLength: 512, description: 'message: an APPROVED template (template messages)' }) @MayOmit() @IsString() @MaxLength(512) templateName?: string;
  @ApiPropertyOptional({ maxLength: 16, example: 'en_US' }) @MayOmit() @IsString() @MaxLength(16) languageCode?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 1: 'Name', 2: 'Code' }, description: 'message: body variables by slot number → the column that fills it' })
  @MayOmit() @IsObject() @Satisfies('columnMap', columnMap, 'variables must map slot numbers to column names') variables?: Record<string, string>;

  @ApiPropertyOptional({ maxLength: 998, description: 'message: required on email' }) @MayOmit() @IsString() @MaxLength(998) subject?: string;
  @ApiPropertyOptional({ maxLength: 1024 }) @MayOmit() @IsString() @MaxLength(1024) caption?: string;
  @ApiPropertyOptional({ maxLength: 4096, description: 'message: the body of a text message' }) @MayOmit() @IsString() @MaxLength(4096) text?: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'upload: the Drive folder (null or omitted: My Drive\'s top level)' })
  @ValidateIf((o: WorkflowStepDto) => o.folderId !== null && o.folderId !== undefined) @IsString() @MaxLength(200) folderId?: string | null;
}

/** Define a workflow. */
export class CreateWorkflowDto {
  @ApiProperty({ maxLength: 200, example: 'Spring cards' }) @IsString() @IsNotEmpty() @MaxLength(200) name!: string;
  @ApiProperty({ type: WorkflowSourceDto }) @IsObject() @ValidateNested() @Type(() => WorkflowSourceDto) source!: WorkflowSourceDto;
  @ApiProperty({ example: 'tpl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P', description: 'A published template of this workspace' }) @IsString() @Matches(/^tpl_[A-Za-z0-9_]{1,60}$/, { message: 'templateId must be a template id (tpl_…)' }) templateId!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { NAME: 'Name', PHOTO: 'Photo URL' }, description: 'Template field key → the column whose value fills it' })
  @IsObject() @Satisfies('columnMap', columnMap, 'mapping must map template field keys to column names (1 to 200 characters)') @MaxJsonLength(50_000) mapping!: Record<string, string>;
  @ApiProperty({ type: [WorkflowStepDto], maxItems: MAX_STEPS, description: 'After the render, in order; the render and each step count against the plan\'s ceiling (402 LIMIT_WORKFLOWMAXSTEPS)' })
  @IsArray() @ArrayMaxSize(MAX_STEPS) @ValidateNested({ each: true }) @Type(() => WorkflowStepDto) steps!: WorkflowStepDto[];
}

/** Change a workflow: the fields given replace the stored ones (every rule is checked again). */
export class UpdateWorkflowDto {
  @ApiPropertyOptional({ maxLength: 200 }) @MayOmit() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: WorkflowSourceDto }) @MayOmit() @IsObject() @ValidateNested() @Type(() => WorkflowSourceDto) source?: WorkflowSourceDto;
  @ApiPropertyOptional() @MayOmit() @IsString() @Matches(/^tpl_[A-Za-z0-9_]{1,60}$/, { message: 'templateId must be a template id (tpl_…)' }) templateId?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @MayOmit() @IsObject() @Satisfies('columnMap', columnMap, 'mapping must map template field keys to column names (1 to 200 characters)') @MaxJsonLength(50_000) mapping?: Record<string, string>;
  @ApiPropertyOptional({ type: [WorkflowStepDto], maxItems: MAX_STEPS })
  @MayOmit() @IsArray() @ArrayMaxSize(MAX_STEPS) @ValidateNested({ each: true }) @Type(() => WorkflowStepDto) steps?: WorkflowStepDto[];
}

/** Start a run. */
export class RunWorkflowDto {
  @ApiPropertyOptional({
    type: 'array', items: { type: 'object', additionalProperties: { oneOf: [{ type: 'string', nullable: true }, { type: 'number' }, { type: 'boolean' }] } }, maxItems: MAX_RUN_ROWS,
    example: [{ Name: 'Ada', Phone: '+44 7700 900123' }], description: 'A posted-rows workflow\'s rows, each keyed by column; a sheet workflow takes none (it reads its sheet)',
  })
  @MayOmit() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_RUN_ROWS) @Satisfies('cellRows', cellRows, 'rows must be objects of cells (string, number, boolean or null)') rows?: Record<string, string | number | boolean | null>[];
}

export class WorkflowDto {
  @ApiProperty({ example: 'wfl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: WorkflowSourceDto }) source!: WorkflowSourceDto;
  @ApiProperty() templateId!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) mapping!: Record<string, string>;
  @ApiProperty({ type: [WorkflowStepDto] }) steps!: WorkflowStepDto[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiProperty({ enum: ['live', 'test'], description: 'The mode of the key (or session) that defined it: a test caller may change or delete only test workflows' }) mode!: string;
}

export class RunProgressDto {
  @ApiProperty() pending!: number;
  @ApiProperty() running!: number;
  @ApiProperty() done!: number;
  @ApiProperty() failed!: number;
  @ApiProperty() cancelled!: number;
}

export class WorkflowRunDto {
  @ApiProperty({ example: 'wfr_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' }) id!: string;
  @ApiProperty() workflowId!: string;
  @ApiProperty({ enum: RUN_STATUSES }) status!: string;
  @ApiProperty({ enum: ['live', 'test'], description: 'The mode of the key that started it: its renders\' mode' }) mode!: string;
  @ApiProperty() cancelRequested!: boolean;
  @ApiProperty({ description: '1, then one more at each rerun' }) round!: number;
  @ApiProperty() totalRows!: number;
  @ApiProperty({ type: RunProgressDto, description: 'Rows by status' }) progress!: RunProgressDto;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) startedAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) completedAt!: string | null;
}

export class StepOutcomeDto {
  @ApiProperty({ enum: STEP_TYPES }) type!: string;
  @ApiProperty({ enum: ['started', 'done', 'failed', 'skipped'] }) status!: string;
  @ApiPropertyOptional({ type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } }) error?: { code: string; message: string };
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'writeBack: range; message: messageId, status; upload: fileId, name' }) result?: Record<string, string>;
}

export class RowErrorDto {
  @ApiProperty() code!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ example: 'steps[1]', description: 'render, or the failing step' }) step!: string;
}

export class WorkflowRowDto {
  @ApiProperty() id!: string;
  @ApiProperty() position!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'The row\'s line in the sheet; null for posted rows' }) sheetRow!: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) values!: Record<string, unknown>;
  @ApiProperty({ enum: ROW_STATUSES }) status!: string;
  @ApiProperty({ nullable: true, type: String }) renderId!: string | null;
  @ApiProperty({ nullable: true, type: String }) outputUrl!: string | null;
  @ApiProperty({ type: [StepOutcomeDto] }) steps!: StepOutcomeDto[];
  @ApiProperty({ nullable: true, type: RowErrorDto }) error!: RowErrorDto | null;
  @ApiProperty() attempts!: number;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}
