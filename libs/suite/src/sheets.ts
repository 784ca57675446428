import { columnLetters } from './a1.js';

/**
 * The Sheets shapes of contract §2 ("Other shapes") and what a read becomes: Google's grid → records.
 * Pure: no I/O here (sheets.service.ts calls Google), and nothing imported but a1.ts, so a worker
 * thread can load `valuesAnswer` on its own (offload.ts).
 */

/** §2 Spreadsheet file. */
export interface SpreadsheetFile {
  id: string;
  name: string;
  url: string;
  modifiedAt: string | null;
}

/** §2 Spreadsheet detail's tab. */
export interface SheetTab {
  id: number;
  title: string;
  index: number;
  rowCount: number;
  columnCount: number;
}

/** §2 Spreadsheet detail (+ url). */
export interface SpreadsheetDetail {
  id: string;
  name: string;
  url: string;
  sheets: SheetTab[];
}

export type Cell = string | number | boolean | null;

/** §2 Rows read (`as=records`). */
export interface RowsRead {
  range: string;
  headers: string[];
  records: Record<string, Cell>[];
}

/** `as=values`: the grid as Google holds it (trailing empty cells and rows left out, as Google leaves them). */
export interface ValuesRead {
  range: string;
  values: Cell[][];
}

/** What a write changed (Google's UpdateValuesResponse). */
export interface WriteResult {
  spreadsheetId: string;
  updatedRange: string;
  updatedRows: number;
  updatedColumns: number;
  updatedCells: number;
}

export const READ_AS = ['records', 'values'] as const;
export const RENDER_OPTIONS = ['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'] as const;
export const WRITE_MODES = ['append', 'overwrite'] as const;
export type ReadAs = (typeof READ_AS)[number];
export type RenderOption = (typeof RENDER_OPTIONS)[number];
export type WriteMode = (typeof WRITE_MODES)[number];

/** §8 (ours): one write holds at most 10,000 rows, 1,000 columns, 100,000 cells, 50,000 characters a cell (Google's own cell limit). */
export const MAX_WRITE_ROWS = 10_000;
export const MAX_WRITE_COLUMNS = 1_000;
export const MAX_WRITE_CELLS = 100_000;
export const MAX_CELL_CHARS = 50_000;
/** Headers of a new spreadsheet: at most this many, each at most 200 characters. */
export const MAX_HEADERS = 1_000;

/** Why `values` is not an array of arrays of cells within the caps, or null. */
export function cellGridProblem(values: unknown): string | null {
  if (!Array.isArray(values)) return 'must be an array of rows, each an array of cell values';
  if (values.length === 0) return 'must hold at least one row';
  if (values.length > MAX_WRITE_ROWS) return `holds ${values.length} rows; at most ${MAX_WRITE_ROWS.toLocaleString('en')} a request`;
  let cells = 0;
  for (const [i, row] of values.entries()) {
    if (!Array.isArray(row)) return `row ${i} is not an array of cell values`;
    if (row.length > MAX_WRITE_COLUMNS) return `row ${i} holds ${row.length} cells; at most ${MAX_WRITE_COLUMNS} a row`;
    cells += row.length;
    for (const [j, cell] of row.entries()) {
      if (cell !== null && !['string', 'number', 'boolean'].includes(typeof cell)) return `values[${i}][${j}] must be a string, number, boolean or null`;
      if (typeof cell === 'number' && !Number.isFinite(cell)) return `values[${i}][${j}] must be a finite number`;
      if (typeof cell === 'string' && cell.length > MAX_CELL_CHARS) return `values[${i}][${j}] has more than ${MAX_CELL_CHARS.toLocaleString('en')} characters`;
    }
  }
  if (cells > MAX_WRITE_CELLS) return `holds ${cells} cells; at most ${MAX_WRITE_CELLS.toLocaleString('en')} a request`;
  return null;
}

/**
 * The header row as record keys. An empty header is named after its column (`C`), a repeated one
 * gets `_2`, `_3` (`Name`, `Name_2`), so every key is unique and non-empty; a row wider than the
 * header row adds keys named after their columns.
 */
export function recordKeys(header: Cell[], width: number): string[] {
  const keys: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < Math.max(header.length, width); i++) {
    const raw = header[i];
    const base = raw === null || raw === undefined || String(raw).trim() === '' ? columnLetters(i + 1) : String(raw).trim();
    let key = base;
    for (let n = 2; seen.has(key); n++) key = `${base}_${n}`;
    seen.add(key);
    keys.push(key);
  }
  return keys;
}

/**
 * Rows keyed by the first row (docs/suite.md "Reading rows"): a short (ragged) row's missing cells are
 * `null`, as are empty cells; rows with no value at all are left out.
 */
export function toRecords(range: string, grid: Cell[][]): RowsRead {
  const [header = [], ...rows] = grid;
  const width = rows.reduce((w, r) => Math.max(w, r.length), header.length);
  const headers = recordKeys(header, width);
  const records: Record<string, Cell>[] = [];
  for (const row of rows) {
    if (!row.some((c) => c !== null && c !== '')) continue;
    const record: Record<string, Cell> = {};
    for (let i = 0; i < headers.length; i++) {
      const cell = row[i];
      record[headers[i]!] = cell === undefined || cell === '' ? null : cell;
    }
    records.push(record);
  }
  return { range, headers, records };
}

function isGrid(values: unknown): values is Cell[][] {
  return Array.isArray(values) && values.every((row) => Array.isArray(row));
}

/** What a values.get answer is read as: the range asked (when Google's answer names none) and the shape. */
export interface ValuesReadArgs {
  range: string;
  as: ReadAs;
}

/** Why Google's answer is not the ValueRange it documents (502 PROVIDER_ERROR, worded by the caller). */
export interface GarbledValues {
  garbled: string;
}

/** Google's values.get answer (its bytes) as a read: records keyed by the header row, or the grid. */
export function readValues(input: Uint8Array, args: ValuesReadArgs): RowsRead | ValuesRead | GarbledValues {
  let answer: unknown;
  try {
    answer = JSON.parse(Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('utf8'));
  } catch {
    answer = undefined;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return { garbled: 'something that is not JSON' };
  const { values = [], range } = answer as { values?: unknown; range?: unknown };
  if (!isGrid(values)) return { garbled: 'values that are not rows of cells' };
  const read = typeof range === 'string' ? range : args.range;
  return args.as === 'values' ? { range: read, values } : toRecords(read, values);
}

/** The read route's answer: `readValues` serialized inside the envelope (its fields before `data`). */
export interface ValuesAnswerArgs extends ValuesReadArgs {
  envelope: Record<string, unknown>;
}

/**
 * The read route's whole answer, serialized (UTF-8 JSON bytes): parse, reshape and serialize in one
 * pure step, which a large read runs on an offload thread (sheets.service.ts).
 */
export function valuesAnswer(input: Uint8Array, args: ValuesAnswerArgs): { body: Uint8Array } | GarbledValues {
  const read = readValues(input, args);
  if ('garbled' in read) return read;
  const bytes = Buffer.from(JSON.stringify({ ...args.envelope, data: read }));
  return { body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
