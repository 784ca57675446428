import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { cursorPage, ok } from '#libs/core';
import type { UsableConnection } from '#libs/integrations';
import { SheetsService } from '#libs/suite';
import { ApiEnvelope, ApiErrors, Integration, Scopes } from '../http/decorators.js';
import { Connection } from '../http/principal.js';
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
  @ApiErrors('VALIDATION_FAILED', ...PROVIDER_ERRORS)
  async create(@Connection() use: UsableConnection, @Body() body: CreateSpreadsheetDto) {
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
  @ApiErrors('VALIDATION_FAILED', 'SPREADSHEET_NOT_FOUND', ...PROVIDER_ERRORS)
  async read(@Connection() use: UsableConnection, @Param('spreadsheetId') id: string, @Query() q: ReadRowsQueryDto) {
    return ok(await this.sheets.read(use, id, { range: q.range ?? 'Sheet1', as: q.as ?? 'records', renderOption: q.renderOption ?? 'FORMATTED_VALUE' }));
  }

  @Post(':spreadsheetId/values')
  @HttpCode(200)
  @Scopes('integrations:write')
  @Integration('workspace-suite')
  @ApiOperation({ summary: 'Write rows: append after the table (default) or overwrite from the range\'s top-left cell' })
  @ApiEnvelope(WriteResultDto)
  @ApiErrors('VALIDATION_FAILED', 'SPREADSHEET_NOT_FOUND', ...PROVIDER_ERRORS)
  async write(@Connection() use: UsableConnection, @Param('spreadsheetId') id: string, @Body() body: WriteRowsDto) {
    const result = await this.sheets.write(use, id, { range: body.range, values: body.values, mode: body.mode ?? 'append', raw: body.raw ?? false });
    return ok(result, `Wrote ${result.updatedCells} cells to ${result.updatedRange}`);
  }
}
