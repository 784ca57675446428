/** One statement in each dialect: `?` placeholders for SQLite, `$1…` for PostgreSQL. */
export interface DialectSql {
  sqlite: string;
  postgresql: string;
}

/** Reads one row by a prepared statement (implemented in libs/db for the hot paths). */
export interface RowReader {
  one(name: string, sql: DialectSql, params: unknown[]): Promise<Record<string, unknown> | undefined>;
}

/** A datetime column as stored by either dialect (SQLite: epoch ms; PostgreSQL: Date). */
export function columnDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  return new Date(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : (value as number | string));
}

/** A JSON column as stored by either dialect (SQLite: text; PostgreSQL: parsed). */
export function columnJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
