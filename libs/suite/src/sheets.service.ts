import { ApiError, validationFailed } from '#libs/core';
import { bufferPassed } from '#libs/outbound';
import { OffloadFailed, OffloadTaskError, offloadTask, type OffloadPool } from './offload.js';
import type { ProviderAnswer, ProviderError, UsableConnection } from '#libs/integrations';
import { formatA1, parseA1 } from './a1.js';
import { garbled, googleCall, googleSend, type GoogleDeps, type GoogleRequest, type GoogleTokens } from './google.js';
import {
  readValues, valuesAnswer, type Cell, type ReadAs, type RenderOption, type RowsRead, type SheetTab, type SpreadsheetDetail,
  type SpreadsheetFile, type ValuesAnswerArgs, type ValuesRead, type WriteMode, type WriteResult,
} from './sheets.js';

const SPREADSHEET_MIME = 'application/vnd.google-apps.spreadsheet';
/** A read of a whole tab may be large (10,000 rows × 20 columns is ~3 MB of JSON). */
const MAX_READ_BYTES = 64 * 1024 * 1024;
/**
 * A values.get answer this large is parsed, reshaped and serialized on an offload thread (a 10,000-row
 * tab is ~0.8 MB and ~12 ms of CPU): the event loop keeps serving meanwhile and a second core helps.
 * Smaller ones are cheaper inline than a trip to a thread.
 */
export const OFFLOAD_MIN_BYTES = 256 * 1024;
const VALUES_ANSWER = offloadTask(new URL('./sheets.js', import.meta.url).href, valuesAnswer);
const DETAIL_FIELDS = 'spreadsheetId,spreadsheetUrl,properties.title,sheets.properties(sheetId,title,index,gridProperties(rowCount,columnCount))';

export interface ListSpreadsheets {
  search: string | null;
  limit: number;
  pageToken: string | null;
}

export interface ReadRows {
  range: string;
  as: ReadAs;
  renderOption: RenderOption;
}

export interface WriteRows {
  range: string;
  values: Cell[][];
  mode: WriteMode;
  raw: boolean;
}

export interface CreateSpreadsheet {
  title: string;
  sheetTitle: string;
  headers: string[];
}

interface GoogleSheetProps {
  sheetId?: number;
  title?: string;
  index?: number;
  gridProperties?: { rowCount?: number; columnCount?: number };
}

interface GoogleSpreadsheet {
  spreadsheetId?: string;
  spreadsheetUrl?: string;
  properties?: { title?: string };
  sheets?: { properties?: GoogleSheetProps }[];
}

interface DriveFileList {
  files?: { id?: string; name?: string; webViewLink?: string; modifiedTime?: string }[];
  nextPageToken?: unknown;
}

interface GoogleUpdate {
  spreadsheetId?: string;
  updatedRange?: string;
  updatedRows?: number;
  updatedColumns?: number;
  updatedCells?: number;
}

export interface SheetsDeps extends GoogleDeps {
  tokens: GoogleTokens;
}

/** A Drive query string literal: `'…'` with `\` and `'` escaped (Drive v3 "Search for files"). */
export function driveLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The sheets routes of workspace-suite (§4.5; docs/suite.md): Drive v3 `files.list` for spreadsheets,
 * Sheets v4 `spreadsheets.get`, `values.get`, `values.append` / `values.update`, `spreadsheets.create`.
 * Failures become house codes once, in `guard`.
 */
export class SheetsService {
  constructor(private readonly deps: SheetsDeps & { offload: OffloadPool }) {}

  async list(use: UsableConnection, q: ListSpreadsheets): Promise<{ files: SpreadsheetFile[]; nextPageToken: string | null }> {
    const clauses = [`mimeType = ${driveLiteral(SPREADSHEET_MIME)}`, 'trashed = false'];
    if (q.search) clauses.push(`name contains ${driveLiteral(q.search)}`);
    const query = new URLSearchParams({
      q: clauses.join(' and '), pageSize: String(q.limit), orderBy: 'modifiedTime desc,name',
      fields: 'nextPageToken,files(id,name,webViewLink,modifiedTime)', supportsAllDrives: 'true', includeItemsFromAllDrives: 'true',
      ...(q.pageToken ? { pageToken: q.pageToken } : {}),
    });
    const answer = await this.guard<DriveFileList>(use, { api: 'drive', path: '/drive/v3/files', query, retry: 'all' }, (err) => this.rejected(err, 'query.pageToken'));
    if (!Array.isArray(answer.files)) throw garbled('the file list without files');
    return {
      files: answer.files.flatMap((f) => (f.id ? [{
        id: f.id, name: f.name ?? '', url: f.webViewLink ?? `https://docs.google.com/spreadsheets/d/${f.id}/edit`, modifiedAt: f.modifiedTime ?? null,
      }] : [])),
      nextPageToken: typeof answer.nextPageToken === 'string' && answer.nextPageToken ? answer.nextPageToken : null,
    };
  }

  async tabs(use: UsableConnection, spreadsheetId: string): Promise<SpreadsheetDetail> {
    checkId(spreadsheetId);
    const answer = await this.guard<GoogleSpreadsheet>(use, {
      api: 'sheets', path: `/v4/spreadsheets/${encodeURIComponent(spreadsheetId)}`, query: new URLSearchParams({ fields: DETAIL_FIELDS }), retry: 'all',
    }, (err) => this.rejected(err, 'spreadsheetId', spreadsheetId));
    return detail(answer, spreadsheetId);
  }

  /** Rows read as objects (a workflow's source rows). */
  async read(use: UsableConnection, spreadsheetId: string, q: ReadRows): Promise<RowsRead | ValuesRead> {
    const { answer, range } = await this.values(use, spreadsheetId, q);
    const read = readValues(answer.body, { range, as: q.as });
    if ('garbled' in read) throw garbled(read.garbled);
    return read;
  }

  /**
   * The read route's whole answer, `envelope` around the read, as JSON bytes: what `read` makes,
   * serialized, and for an answer of OFFLOAD_MIN_BYTES or more made on an offload thread.
   */
  async readAnswer(use: UsableConnection, spreadsheetId: string, q: ReadRows, envelope: Record<string, unknown>): Promise<Buffer> {
    const { answer, range } = await this.values(use, spreadsheetId, q);
    const args: ValuesAnswerArgs = { range, as: q.as, envelope };
    let made;
    try {
      made = answer.body.length >= OFFLOAD_MIN_BYTES ? await this.deps.offload.run(VALUES_ANSWER, answer.body, args) : valuesAnswer(answer.body, args);
    } catch (err) {
      // Too large to hold as objects (the thread's heap, or a string past V8's longest): 502, read fewer rows.
      if ((err instanceof OffloadFailed && err.outOfMemory) || (err instanceof OffloadTaskError && err.taskErrorName === 'RangeError')) {
        throw garbled('a range too large to read here; read fewer rows at a time');
      }
      if (err instanceof OffloadFailed) throw new ApiError('NOT_READY', 'The service could not read this answer right now; try again shortly', { headers: { 'Retry-After': '5' } });
      throw err;
    }
    if ('garbled' in made) throw garbled(made.garbled);
    bufferPassed(answer.body.length + made.body.byteLength);
    return Buffer.from(made.body.buffer, made.body.byteOffset, made.body.byteLength);
  }

  /** values.get of the range, its answer unread. */
  private async values(use: UsableConnection, spreadsheetId: string, q: ReadRows): Promise<{ answer: ProviderAnswer; range: string }> {
    checkId(spreadsheetId);
    const range = formatA1(parseA1(q.range));
    const answer = await googleSend(this.deps, use, {
      api: 'sheets', path: `/v4/spreadsheets/${encodeURIComponent(spreadsheetId)}/values/${encodeURIComponent(range)}`,
      query: new URLSearchParams({ majorDimension: 'ROWS', valueRenderOption: q.renderOption, dateTimeRenderOption: 'FORMATTED_STRING' }),
      retry: 'all', maxResponseBytes: MAX_READ_BYTES,
    }, (err) => this.rejected(err, 'query.range', spreadsheetId));
    return { answer, range };
  }

  /**
   * `append`: values.append (INSERT_ROWS after the table the range finds), retried only after 429 so a
   * row is never written twice; `overwrite`: values.update from the range's top-left cell (idempotent,
   * retried). `raw`: valueInputOption RAW, else USER_ENTERED (formulas and dates interpreted).
   */
  async write(use: UsableConnection, spreadsheetId: string, input: WriteRows): Promise<WriteResult> {
    checkId(spreadsheetId);
    const range = formatA1(parseA1(input.range));
    const base = `/v4/spreadsheets/${encodeURIComponent(spreadsheetId)}/values/${encodeURIComponent(range)}`;
    const valueInputOption = input.raw ? 'RAW' : 'USER_ENTERED';
    const body = { range, majorDimension: 'ROWS', values: input.values };
    const onRejected = (err: ProviderError) => this.rejected(err, /values|cell/i.test(err.message) ? 'values' : 'range', spreadsheetId);
    if (input.mode === 'append') {
      const answer = await this.guard<{ updates?: GoogleUpdate }>(use, {
        api: 'sheets', method: 'POST', path: `${base}:append`, query: new URLSearchParams({ valueInputOption, insertDataOption: 'INSERT_ROWS' }), json: body, retry: 'refused',
      }, onRejected);
      return update(answer.updates, spreadsheetId);
    }
    const answer = await this.guard<GoogleUpdate>(use, {
      api: 'sheets', method: 'PUT', path: base, query: new URLSearchParams({ valueInputOption }), json: body, retry: 'all',
    }, onRejected);
    return update(answer, spreadsheetId);
  }

  /**
   * One `spreadsheets.create` carrying the first tab and its header row (GridData), so a spreadsheet
   * exists with its headers or not at all; retried only after 429 (a retried create could make two).
   */
  async create(use: UsableConnection, input: CreateSpreadsheet): Promise<SpreadsheetDetail> {
    const sheet = {
      properties: { title: input.sheetTitle, index: 0 },
      ...(input.headers.length ? { data: [{ startRow: 0, startColumn: 0, rowData: [{ values: input.headers.map((h) => ({ userEnteredValue: { stringValue: h } })) }] }] } : {}),
    };
    const answer = await this.guard<GoogleSpreadsheet>(use, {
      api: 'sheets', method: 'POST', path: '/v4/spreadsheets', query: new URLSearchParams({ fields: DETAIL_FIELDS }),
      json: { properties: { title: input.title }, sheets: [sheet] }, retry: 'refused',
    }, (err) => this.rejected(err, 'title'));
    return detail(answer, null);
  }

  private guard<T>(use: UsableConnection, req: GoogleRequest, onRejected: (err: ProviderError) => ApiError): Promise<T> {
    return googleCall<T>(this.deps, use, req, onRejected);
  }

  /** Google refused the request itself: an unknown or unshared spreadsheet (404/403) or a bad value (400 → 422). */
  private rejected(err: ProviderError, field: string, spreadsheetId?: string): ApiError {
    if (spreadsheetId !== undefined && (err.status === 404 || err.status === 403)) {
      return new ApiError('SPREADSHEET_NOT_FOUND', `No spreadsheet ${spreadsheetId} that the connected account can open (${err.message})`);
    }
    if (err.status === 400) return validationFailed({ [field]: [err.message] }, 'The spreadsheet provider refused the request');
    return new ApiError('PROVIDER_ERROR', err.message);
  }
}

/** Google's spreadsheet ids are letters, digits, `-` and `_`: anything else is no spreadsheet (asked of no one). */
function checkId(id: string): void {
  if (!/^[\w-]{1,200}$/.test(id)) throw new ApiError('SPREADSHEET_NOT_FOUND', 'No spreadsheet has this id');
}

function detail(answer: GoogleSpreadsheet, asked: string | null): SpreadsheetDetail {
  const id = answer.spreadsheetId ?? asked;
  if (!id || !Array.isArray(answer.sheets)) throw garbled('a spreadsheet without its id or tabs');
  return {
    id,
    name: answer.properties?.title ?? '',
    url: answer.spreadsheetUrl ?? `https://docs.google.com/spreadsheets/d/${id}/edit`,
    sheets: answer.sheets.map((s): SheetTab => ({
      id: s.properties?.sheetId ?? 0,
      title: s.properties?.title ?? '',
      index: s.properties?.index ?? 0,
      rowCount: s.properties?.gridProperties?.rowCount ?? 0,
      columnCount: s.properties?.gridProperties?.columnCount ?? 0,
    })),
  };
}

function update(u: GoogleUpdate | undefined, spreadsheetId: string): WriteResult {
  if (!u?.updatedRange) throw garbled('a write without its updated range');
  return {
    spreadsheetId: u.spreadsheetId ?? spreadsheetId,
    updatedRange: u.updatedRange,
    updatedRows: u.updatedRows ?? 0,
    updatedColumns: u.updatedColumns ?? 0,
    updatedCells: u.updatedCells ?? 0,
  };
}
