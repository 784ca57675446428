import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsString, Matches, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import {
  a1Problem, cellGridProblem, MAX_CELL_CHARS, MAX_HEADERS, MAX_RANGE_CHARS, MAX_WRITE_CELLS, MAX_WRITE_COLUMNS, MAX_WRITE_ROWS, READ_AS, RENDER_OPTIONS, WRITE_MODES,
  type Cell, type ReadAs, type RenderOption, type WriteMode,
} from '#libs/suite';
import { MayOmit, Satisfies } from '../http/validation.js';

// The sheets rows of §4.5 and the §2 shapes (Spreadsheet file, Spreadsheet detail, Rows read); docs/suite.md.

const notBlank = (v: unknown) => typeof v === 'string' && v.trim().length > 0;

/** A1 notation (libs/suite a1.ts), the parser's own words in the 422. */
const A1Range = () => ValidateBy({ name: 'a1Range', validator: { validate: (v) => a1Problem(v) === null, defaultMessage: (args) => a1Problem(args?.value) ?? 'must be A1 notation' } });

/** Rows of cells within the write caps (libs/suite sheets.ts), the reason in the 422. */
const CellGrid = () => ValidateBy({ name: 'cellGrid', validator: { validate: (v) => cellGridProblem(v) === null, defaultMessage: (args) => `values ${cellGridProblem(args?.value) ?? ''}` } });

/** §4.5 List spreadsheets (query). */
export class ListSpreadsheetsQueryDto {
  @ApiPropertyOptional({ maxLength: 128, description: 'Substring of the name (case-insensitive)' })
  @MayOmit() @IsString() @MaxLength(128) search?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 25 })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;

  @ApiPropertyOptional({ description: 'nextPageToken of the previous page' })
  @MayOmit() @IsString() @MaxLength(1024) @Matches(/^[\x21-\x7e]+$/, { message: 'pageToken must be a nextPageToken of a previous page' }) pageToken?: string;
}

/** §4.5 Read rows (query). */
export class ReadRowsQueryDto {
  @ApiPropertyOptional({ default: 'Sheet1', maxLength: MAX_RANGE_CHARS, description: "A1 notation: a bare tab name reads the whole tab; `'My tab'!A1:C`, `A:C`, `2:5`, `Sheet1!B2:D`", example: 'Sheet1!A1:D' })
  @MayOmit() @A1Range() range?: string;

  @ApiPropertyOptional({ enum: READ_AS, default: 'records', description: '`records`: rows keyed by the header row (docs/suite.md); `values`: the raw grid' })
  @MayOmit() @IsIn(READ_AS) as?: ReadAs;

  @ApiPropertyOptional({ enum: RENDER_OPTIONS, default: 'FORMATTED_VALUE' })
  @MayOmit() @IsIn(RENDER_OPTIONS) renderOption?: RenderOption;
}

/** §4.5 Write rows (body). */
export class WriteRowsDto {
  @ApiProperty({ maxLength: MAX_RANGE_CHARS, description: 'A1 notation: append after the table found there, or overwrite from its top-left cell', example: 'Sheet1!A1' })
  @A1Range() range!: string;

  @ApiProperty({
    type: 'array', items: { type: 'array', items: { oneOf: [{ type: 'string', nullable: true }, { type: 'number' }, { type: 'boolean' }] } },
    description: `Rows of cell values; at most ${MAX_WRITE_ROWS} rows, ${MAX_WRITE_COLUMNS} cells a row, ${MAX_WRITE_CELLS} cells, ${MAX_CELL_CHARS} characters a cell`,
    example: [['Ada', 'ada@example.com', 36]],
  })
  @CellGrid() values!: Cell[][];

  @ApiPropertyOptional({ enum: WRITE_MODES, default: 'append', description: '`append` inserts new rows after the table; `overwrite` writes over the cells from the range\'s top-left' })
  @MayOmit() @IsIn(WRITE_MODES) mode?: WriteMode;

  @ApiPropertyOptional({ default: false, description: 'Store values verbatim (RAW) instead of as typed in the sheet (USER_ENTERED: numbers, dates, formulas)' })
  @MayOmit() @IsBoolean() raw?: boolean;
}

/** §4.5 Create spreadsheet (body). */
export class CreateSpreadsheetDto {
  @ApiProperty({ maxLength: 255, example: 'Spring campaign leads' })
  @IsString() @MaxLength(255) @Satisfies('notBlank', notBlank, 'title must not be empty') title!: string;

  @ApiPropertyOptional({ maxLength: 100, default: 'Sheet1' })
  @MayOmit() @IsString() @MaxLength(100) @Satisfies('notBlank', notBlank, 'sheetTitle must not be empty') sheetTitle?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_HEADERS, description: 'Written to the first row', example: ['Name', 'Email', 'Age'] })
  @MayOmit() @IsArray() @ArrayMaxSize(MAX_HEADERS) @IsString({ each: true }) @MaxLength(200, { each: true }) headers?: string[];
}

/** §2 Spreadsheet file. */
export class SpreadsheetFileDto {
  @ApiProperty({ example: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms' }) id!: string;
  @ApiProperty({ example: 'Spring campaign leads' }) name!: string;
  @ApiProperty({ example: 'https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit' }) url!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) modifiedAt!: string | null;
}

export class SheetTabDto {
  @ApiProperty({ example: 0, description: 'The tab\'s sheetId' }) id!: number;
  @ApiProperty({ example: 'Sheet1' }) title!: string;
  @ApiProperty({ example: 0 }) index!: number;
  @ApiProperty({ example: 1000 }) rowCount!: number;
  @ApiProperty({ example: 26 }) columnCount!: number;
}

/** §2 Spreadsheet detail (+ url). */
export class SpreadsheetDetailDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [SheetTabDto] }) sheets!: SheetTabDto[];
}

/** §2 Rows read; `as=values` answers `values` (the grid) instead of `headers` and `records`. */
export class RowsReadDto {
  @ApiProperty({ example: "'Sheet1'!A1:C3", description: 'The range read, as the provider states it' }) range!: string;
  @ApiPropertyOptional({ type: [String], description: 'as=records: the record keys (empty headers → the column letter, repeats → `_2`, `_3`)' }) headers?: string[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: 'as=records: rows keyed by header; missing and empty cells null; empty rows left out' }) records?: Record<string, Cell>[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'array', items: {} }, description: 'as=values: the grid (trailing empty cells and rows left out)' }) values?: Cell[][];
}

/** What a write changed. */
export class WriteResultDto {
  @ApiProperty() spreadsheetId!: string;
  @ApiProperty({ example: "'Sheet1'!A4:C5" }) updatedRange!: string;
  @ApiProperty() updatedRows!: number;
  @ApiProperty() updatedColumns!: number;
  @ApiProperty() updatedCells!: number;
}
