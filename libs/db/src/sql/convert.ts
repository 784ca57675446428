import { JsonType, type EntityManager, type EntityMetadata, type EntityProperty, type MetadataStorage } from '@mikro-orm/core';

/**
 * Dialect conversion, in one place: what a value becomes as a statement parameter (`toDb`) and what
 * a column's value becomes when read (`fromDb`), for the two databases this product runs on. The
 * rules are MikroORM's own mapping, so rows written here and rows written by the ORM read the same:
 * SQLite stores dates as epoch milliseconds, booleans as 0/1 and JSON as text; PostgreSQL answers
 * timestamps as text (the ORM's type parsers keep them raw), bigints as text and JSON parsed.
 */
export type Dialect = 'sqlite' | 'postgresql';

/** How a column's stored value is read back (columns of other types are read as they come). */
export type ColumnKind = 'date' | 'boolean' | 'json' | 'number';

const dialects = new WeakMap<object, Dialect>();

/** The dialect of an entity manager's driver. */
export function dialectOf(em: EntityManager): Dialect {
  const driver = em.getDriver();
  let dialect = dialects.get(driver);
  if (dialect === undefined) {
    const name = driver.constructor.name;
    if (name === 'PostgreSqlDriver') dialect = 'postgresql';
    else if (name === 'SqliteDriver') dialect = 'sqlite';
    else throw new Error(`Unsupported database driver ${name}`);
    dialects.set(driver, dialect);
  }
  return dialect;
}

/** A list bound as one array parameter (PostgreSQL: `unnest(?::text[])`, `= any(?)`), not as JSON text. */
export class DbArray {
  constructor(readonly values: readonly unknown[]) {}
}

/** `values` as one PostgreSQL array parameter (see DbArray). */
export function dbArray(values: readonly unknown[]): DbArray {
  return new DbArray(values);
}

/** A JavaScript value as a parameter of `dialect` (undefined is NULL; objects and arrays are JSON text). */
export function toDb(dialect: Dialect, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return dialect === 'sqlite' ? (value ? 1 : 0) : value;
  if (typeof value !== 'object') return value;
  if (value instanceof Date) return dialect === 'sqlite' ? value.getTime() : value;
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof DbArray) return value.values;
  return JSON.stringify(value);
}

/** A stored value of a column of `kind`, as the entity's property holds it. */
export function fromDb(dialect: Dialect, kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'date':
      if (value instanceof Date) return value;
      return new Date(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : (value as number | string));
    case 'boolean':
      return Boolean(value);
    case 'json':
      // PostgreSQL's driver parses json/jsonb itself (a JSON string value stays a string).
      return dialect === 'sqlite' && typeof value === 'string' ? JSON.parse(value) : value;
    case 'number':
      return typeof value === 'string' ? Number(value) : value;
  }
}

/** The read conversion a property's column needs, or undefined when the driver's value is already right. */
export function columnKind(prop: EntityProperty): ColumnKind | undefined {
  if (prop.customType instanceof JsonType) return 'json';
  if (prop.runtimeType === 'Date') return 'date';
  if (prop.runtimeType === 'boolean') return 'boolean';
  // bigint columns mapped to numbers come back as text from PostgreSQL.
  if (prop.runtimeType === 'number') return 'number';
  return undefined;
}

/** Per table: its entity's metadata and the kind of each converted column (built once per ORM). */
export interface TableInfo {
  meta: EntityMetadata;
  kinds: Map<string, ColumnKind>;
  /** Property name → column name. */
  columns: Map<string, string>;
}

const tableInfos = new WeakMap<MetadataStorage, Map<string, TableInfo>>();

/** The tables of the ORM's entities, by table name. */
export function tablesOf(em: EntityManager): Map<string, TableInfo> {
  const storage = em.getMetadata();
  let tables = tableInfos.get(storage);
  if (!tables) {
    tables = new Map();
    for (const meta of storage) {
      if (!meta.tableName) continue;
      const kinds = new Map<string, ColumnKind>();
      const columns = new Map<string, string>();
      for (const prop of meta.props) {
        const field = prop.fieldNames?.[0];
        if (!field || prop.fieldNames.length !== 1) continue;
        columns.set(prop.name, field);
        const kind = columnKind(prop);
        if (kind) kinds.set(field, kind);
      }
      tables.set(meta.tableName, { meta, kinds, columns });
    }
    tableInfos.set(storage, tables);
  }
  return tables;
}
