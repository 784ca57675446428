import { a1Problem, columnIndex, columnLetters, formatA1, parseA1 } from './a1.js';

describe('A1 notation', () => {
  it.each([
    ['Sheet1', { sheet: 'Sheet1', cells: null }, 'Sheet1'],
    ['My budget 2025', { sheet: 'My budget 2025', cells: null }, "'My budget 2025'"],
    ["'My tab'", { sheet: 'My tab', cells: null }, "'My tab'"],
    ["'Bob''s list'!A1:B2", { sheet: "Bob's list", cells: { startColumn: 1, startRow: 1, endColumn: 2, endRow: 2 } }, "'Bob''s list'!A1:B2"],
    ["'a!b:c'!C3", { sheet: 'a!b:c', cells: { startColumn: 3, startRow: 3, endColumn: 3, endRow: 3 } }, "'a!b:c'!C3"],
    ['A:C', { sheet: null, cells: { startColumn: 1, startRow: null, endColumn: 3, endRow: null } }, 'A:C'],
    ['B:B', { sheet: null, cells: { startColumn: 2, startRow: null, endColumn: 2, endRow: null } }, 'B:B'],
    ['2:5', { sheet: null, cells: { startColumn: null, startRow: 2, endColumn: null, endRow: 5 } }, '2:5'],
    ['Sheet1!B2:D', { sheet: 'Sheet1', cells: { startColumn: 2, startRow: 2, endColumn: 4, endRow: null } }, 'Sheet1!B2:D'],
    ['sheet_2!b2:zz10', { sheet: 'sheet_2', cells: { startColumn: 2, startRow: 2, endColumn: 702, endRow: 10 } }, 'sheet_2!B2:ZZ10'],
    ['A1', { sheet: null, cells: { startColumn: 1, startRow: 1, endColumn: 1, endRow: 1 } }, 'A1'],
    ["'Q1'", { sheet: 'Q1', cells: null }, "'Q1'"],
  ])('%s', (text, parsed, formatted) => {
    expect(parseA1(text)).toEqual(parsed);
    expect(formatA1(parseA1(text))).toBe(formatted);
  });

  it.each([
    ['', 'empty'],
    ['A0', 'row 0'],
    ['Sheet1!', 'nothing after'],
    ['!A1', 'empty'],
    ['Sheet1!A1:B2:C3', 'more than one'],
    ['1:A', 'rows'],
    ['A:5', 'columns'],
    ['A:C5', 'columns'],
    ['B2:3', 'needs its column'],
    ['C1:A1', 'left of'],
    ['A9:B2', 'above'],
    ['AAAA1:B2', 'not A1'],
    ['A1:A10000001', 'outside'],
    ["'unclosed!A1", 'not closed'],
    ["'Tab'A1", 'after a quoted'],
    ['My tab!A1', 'quote a tab name'],
    ['Sheet1!A1:', 'not A1'],
    ['x'.repeat(301), 'more than 300'],
  ])('refuses %j', (text, words) => {
    expect(a1Problem(text)).toContain(words);
  });

  it('columns both ways', () => {
    for (const [letters, n] of [['A', 1], ['Z', 26], ['AA', 27], ['AZ', 52], ['ZZ', 702], ['ZZZ', 18278]] as const) {
      expect(columnIndex(letters)).toBe(n);
      expect(columnLetters(n)).toBe(letters);
    }
    expect(a1Problem('ZZZ1')).toBeNull();
  });
});
