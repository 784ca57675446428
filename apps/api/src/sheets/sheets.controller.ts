import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { cursorPage, ok } from '#libs/core';
import { release } from '#libs/outbound';
import type { UsableConnection } from '#libs/integrations';
import { SheetsService } from '#libs/suite';
import { ApiEnvelope, ApiErrors, Integration, Scopes } from '../http/decorators.js';
import { assertLiveAccountWrite } from '../http/account-writes.js';
import { Connection, Principal, type KeyPrincipal } from '../http/principal.js';
import {
  CreateSpreadsheetDto, ListSpreadsheetsQueryDto, ReadRowsQueryDto, RowsReadDto, SpreadsheetDetailDto, SpreadsheetFileDto, WriteResultDto, WriteRowsDto,
} from './sheets.dto.js';

const PROVIDER_ERRORS = ['PROVIDER_UNAVAILABLE', 'PROVIDER_ERROR'] as const;

/** §4.5 the workspace-suite sheets rows (docs/suite.md): Drive v3's spreadsheet list and Sheets v4. */
@ApiTags('sheets')
@Controller('v1/integrations/workspace-suite/sheets/spreadsheets')
export class SheetsController {
  constructor(private readonly sheets: SheetsService) {}

  @Get()
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'The connected account\'s spreadsheets, most recently modified first (a cursor: nextPageToken)' })
  @ApiEnvelope(SpreadsheetFileDto, { isArray: true, paged: false })
  @ApiErrors('VALIDATION_FAILED', ...PROVIDER_ERRORS)
  async list(@Connection() use: UsableConnection, @Query() q: ListSpreadsheetsQueryDto) {
    const page = await this.sheets.list(use, { search: q.search?.trim() || null, limit: q.limit ?? 25, pageToken: q.pageToken ?? null });
    return cursorPage(page.files, page.nextPageToken);
  }

  @Post()
  @Scopes('integrations:write')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Create a spreadsheet with one tab and, optionally, its header row (one call: it exists with its headers or not at all)' })
  @ApiEnvelope(SpreadsheetDetailDto, { status: 201 })
  @ApiErrors('VALIDATION_FAILED', 'LIVE_MODE_REQUIRED', ...PROVIDER_ERRORS)
  async create(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Body() body: CreateSpreadsheetDto) {
    assertLiveAccountWrite(p, 'workspace-suite');
    const created = await this.sheets.create(use, { title: body.title.trim(), sheetTitle: body.sheetTitle?.trim() ?? 'Sheet1', headers: body.headers ?? [] });
    return ok(created, `Created ${created.id}`);
  }

  @Get(':spreadsheetId')
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'A spreadsheet\'s tabs' })
  @ApiEnvelope(SpreadsheetDetailDto)
  @ApiErrors('SPREADSHEET_NOT_FOUND', ...PROVIDER_ERRORS)
  async tabs(@Connection() use: UsableConnection, @Param('spreadsheetId') id: string) {
    return ok(await this.sheets.tabs(use, id));
  }

  @Get(':spreadsheetId/values')
  @Scopes('integrations:read')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Read rows: records keyed by the header row, or the raw grid' })
  @ApiEnvelope(RowsReadDto)
  @ApiErrors('VALIDATION_FAILED', 'SPREADSHEET_NOT_FOUND', 'NOT_READY', ...PROVIDER_ERRORS)
  async read(@Connection() use: UsableConnection, @Param('spreadsheetId') id: string, @Query() q: ReadRowsQueryDto, @Res({ passthrough: true }) reply: FastifyReply) {
    // Serialized by the service (a large read off the event loop): the envelope `ok` makes, as bytes.
    const { data: _none, ...envelope } = ok(null);
    const body = await this.sheets.readAnswer(use, id, { range: q.range ?? 'Sheet1', as: q.as ?? 'records', renderOption: q.renderOption ?? 'FORMATTED_VALUE' }, envelope);
    void reply.type('application/json; charset=utf-8');
    // Sent: its memory is freed now, not at the next mark-compact (libs/outbound scavenge.ts `release`).
    reply.raw.once('finish', () => release([body]));
    return body;
  }

  @Post(':spreadsheetId/values')
  @HttpCode(200)
  @Scopes('integrations:write')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Write rows: append after the table (default) or overwrite from the range\'s top-left cell' })
  @ApiEnvelope(WriteResultDto)
  @ApiErrors('VALIDATION_FAILED', 'LIVE_MODE_REQUIRED', 'SPREADSHEET_NOT_FOUND', ...PROVIDER_ERRORS)
  async write(@Principal() p: KeyPrincipal, @Connection() use: UsableConnection, @Param('spreadsheetId') id: string, @Body() body: WriteRowsDto) {
    assertLiveAccountWrite(p, 'workspace-suite');
    const result = await this.sheets.write(use, id, { range: body.range, values: body.values, mode: body.mode ?? 'append', raw: body.raw ?? false });
    return ok(result, `Wrote ${result.updatedCells} cells to ${result.updatedRange}`);
  }
}
