/**
 * A1 notation (Sheets API v4 "A1 notation"), parsed by us so a bad range is refused with a clear 422
 * before Google is asked. Accepted forms, each optionally after a tab name and `!`:
 * `A1`, `A1:C9`, `A:C` (whole columns), `2:5` (whole rows), `B2:D` / `A5:C` (open-ended downwards),
 * and a bare tab name alone (the whole tab). Tab names with anything but letters, digits and `_`
 * are quoted (`'My tab'!A1`, a quote doubled: `'Bob''s'!A1`); an unquoted name that reads as a cell
 * (`A1`, `AB12`) is a cell, as Google reads it.
 */

/** Google's grid limits: 18,278 columns (ZZZ) and 10 million cells (so no row beyond 10,000,000). */
export const MAX_COLUMN = 18_278;
export const MAX_ROW = 10_000_000;
/** Longest range text taken (a tab title is at most 100 characters). */
export const MAX_RANGE_CHARS = 300;

export interface A1Range {
  /** The tab's title, or null: the first tab (Google's reading of a range without one). */
  sheet: string | null;
  /** The cells; null: the whole tab. Columns and rows are 1-based; null: open on that side. */
  cells: { startColumn: number | null; startRow: number | null; endColumn: number | null; endRow: number | null } | null;
}

export class A1Error extends Error {}

const CELL = /^([A-Za-z]{1,3})?(\d+)?$/;
const PLAIN_TAB = /^[A-Za-z0-9_]+$/;

/** Column letters → 1-based index (A = 1, Z = 26, AA = 27). */
export function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/** 1-based index → column letters. */
export function columnLetters(index: number): string {
  let s = '';
  for (let n = index; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

interface Ref {
  column: number | null;
  row: number | null;
}

function ref(text: string, whole: string): Ref {
  const m = CELL.exec(text);
  if (!text || !m || (!m[1] && !m[2])) throw new A1Error(`"${whole}" is not A1 notation ("${text}" is not a cell such as B2, a column such as B or a row such as 2)`);
  const column = m[1] ? columnIndex(m[1]) : null;
  const row = m[2] !== undefined ? Number(m[2]) : null;
  if (column !== null && column > MAX_COLUMN) throw new A1Error(`"${whole}": column ${m[1]!.toUpperCase()} is beyond ZZZ, the last column a sheet has`);
  if (row !== null && (row < 1 || row > MAX_ROW)) throw new A1Error(`"${whole}": row ${m[2]} is outside 1 to ${MAX_ROW.toLocaleString('en')}`);
  return { column, row };
}

function cells(text: string, whole: string): NonNullable<A1Range['cells']> {
  const parts = text.split(':');
  if (parts.length > 2) throw new A1Error(`"${whole}" has more than one ":"`);
  const start = ref(parts[0]!, whole);
  if (parts.length === 1) {
    if (start.column === null || start.row === null) throw new A1Error(`"${whole}": a single cell needs a column and a row (B2); write whole columns as B:B and rows as 2:2`);
    return { startColumn: start.column, startRow: start.row, endColumn: start.column, endRow: start.row };
  }
  const end = ref(parts[1]!, whole);
  // `2:5` rows, `A:C` columns, `B2:D` / `A5:C` open-ended downwards, `B2:D9` a box. `A:C5` and `2:C` are not ranges.
  if (start.column === null && (end.column !== null || end.row === null)) throw new A1Error(`"${whole}": a range of rows is written 2:5`);
  if (start.row === null && (end.row !== null || end.column === null)) throw new A1Error(`"${whole}": a range of columns is written A:C`);
  if (end.column === null && start.column !== null) throw new A1Error(`"${whole}": the end of a range starting at a cell needs its column (B2:D or B2:D9)`);
  if (start.column !== null && end.column !== null && end.column < start.column) throw new A1Error(`"${whole}": the range ends left of where it starts`);
  if (start.row !== null && end.row !== null && end.row < start.row) throw new A1Error(`"${whole}": the range ends above where it starts`);
  return { startColumn: start.column, startRow: start.row, endColumn: end.column, endRow: end.row };
}

function tabName(name: string, whole: string): string {
  if (!name.trim()) throw new A1Error(`"${whole}": the tab name is empty`);
  if (name.length > 100) throw new A1Error(`"${whole}": a tab name has at most 100 characters`);
  if (/\p{Cc}/u.test(name)) throw new A1Error(`"${whole}": the tab name holds control characters`);
  return name;
}

/** Parses A1 notation; throws A1Error with a message fit for a 422. */
export function parseA1(text: string): A1Range {
  const whole = text;
  if (typeof text !== 'string' || !text.trim()) throw new A1Error('the range is empty');
  if (text.length > MAX_RANGE_CHARS) throw new A1Error(`the range has more than ${MAX_RANGE_CHARS} characters`);
  if (text.startsWith("'")) {
    // 'Tab name' or 'Tab name'!cells, '' being a quote inside the name.
    let i = 1;
    let name = '';
    for (;;) {
      if (i >= text.length) throw new A1Error(`"${whole}": the quoted tab name is not closed`);
      if (text[i] === "'") {
        if (text[i + 1] === "'") {
          name += "'";
          i += 2;
          continue;
        }
        break;
      }
      name += text[i];
      i += 1;
    }
    const rest = text.slice(i + 1);
    tabName(name, whole);
    if (rest === '') return { sheet: name, cells: null };
    if (!rest.startsWith('!') || rest.length === 1) throw new A1Error(`"${whole}": after a quoted tab name comes nothing or !cells`);
    return { sheet: name, cells: cells(rest.slice(1), whole) };
  }
  const bang = text.lastIndexOf('!');
  if (bang >= 0) {
    const name = text.slice(0, bang);
    if (!PLAIN_TAB.test(name)) {
      throw new A1Error(name ? `"${whole}": quote a tab name holding spaces or punctuation ('${name.replace(/'/g, "''")}'!…)` : `"${whole}": the tab name before "!" is empty`);
    }
    if (bang === text.length - 1) throw new A1Error(`"${whole}": nothing after "!" (write the tab name alone for the whole tab)`);
    return { sheet: name, cells: cells(text.slice(bang + 1), whole) };
  }
  // No tab: cells (of the first tab) when it reads as cells, else a bare tab name.
  if (text.includes(':') || /^[A-Za-z]{1,3}\d+$/.test(text)) return { sheet: null, cells: cells(text, whole) };
  if (/['!]/.test(text)) throw new A1Error(`"${whole}" is not A1 notation`);
  return { sheet: tabName(text, whole), cells: null };
}

/** The message of a bad range, or null when it is A1 notation. */
export function a1Problem(text: unknown): string | null {
  if (typeof text !== 'string') return 'must be a string in A1 notation';
  try {
    parseA1(text);
    return null;
  } catch (err) {
    if (err instanceof A1Error) return err.message;
    throw err;
  }
}

/** A tab name as A1 writes it: quoted unless letters, digits and `_` that cannot read as a cell. */
export function quoteTab(name: string): string {
  return PLAIN_TAB.test(name) && !/^[A-Za-z]{1,3}\d+$/.test(name) ? name : `'${name.replace(/'/g, "''")}'`;
}

/** The canonical text Google is sent (`'My tab'!B2:D`). */
export function formatA1(range: A1Range): string {
  const c = range.cells;
  let cellText = '';
  if (c) {
    const start = `${c.startColumn ? columnLetters(c.startColumn) : ''}${c.startRow ?? ''}`;
    const end = `${c.endColumn ? columnLetters(c.endColumn) : ''}${c.endRow ?? ''}`;
    cellText = start === end && c.startColumn !== null && c.startRow !== null ? start : `${start}:${end}`;
  }
  if (range.sheet === null) return cellText;
  return c ? `${quoteTab(range.sheet)}!${cellText}` : quoteTab(range.sheet);
}
