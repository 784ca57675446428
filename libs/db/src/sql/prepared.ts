import type { MikroORM } from '@mikro-orm/core';
import type { Dialect } from './convert.js';

/*
 * How the layer's statements reach the database.
 *
 * Parsed once: the ORM inlines values into its SQL, so its drivers prepare every statement afresh
 * (better-sqlite3 compiles it, tens of µs, more than running it; PostgreSQL parses and plans it).
 * The layer's statements keep their values as parameters, so their text repeats: each text it runs
 * is registered here, and the ORM's own connections reuse it (SQLite keeps the compiled statement
 * per connection, PostgreSQL runs it as a named statement, parsed once per connection).
 *
 * Inside a transaction a statement goes through the transaction's Kysely executor (the ORM's
 * connection of that transaction). Outside one it goes straight to the driver, skipping the
 * executor's queue and promises (5–10 µs a statement, which on a keyed request's row read or a
 * webhook attempt is a tenth of the work): SQLite runs it synchronously on the connection's handle
 * when no transaction is open there (else it queues behind it through the executor), PostgreSQL on
 * the ORM's pool.
 */

/** Registered texts and their statement names; the registry stops growing at this size. */
const MAX_STATEMENTS = 2000;
const names = new Map<string, string>();

/** Registers a statement text for reuse (a no-op once the registry is full). */
export function registerStatement(sql: string): void {
  if (names.size < MAX_STATEMENTS && !names.has(sql)) names.set(sql, `s${names.size + 1}`);
}

/** A statement's outcome, as Kysely's executors answer it. */
export interface Outcome {
  rows: Record<string, unknown>[];
  numAffectedRows?: bigint;
}

interface SqliteStatement {
  readonly reader: boolean;
  all(params: readonly unknown[]): unknown[];
  run(params: readonly unknown[]): { changes: number };
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  transaction(fn: () => void): () => void;
  readonly inTransaction: boolean;
}
type PgQuery = (config: unknown, values?: unknown, callback?: unknown) => unknown;
interface PgClient {
  query: PgQuery;
}
interface PgPool {
  on(event: 'connect', listener: (client: PgClient) => void): void;
  query(text: string, values: readonly unknown[]): Promise<{ command: string; rowCount: number | null; rows: Record<string, unknown>[] }>;
}

/** A compiled SQLite statement, with whether it answers rows (read once: it is a native property). */
interface Compiled {
  stmt: SqliteStatement;
  reader: boolean;
}

/** SQLite: the connection's handle and its compiled statements by text. */
interface SqliteHandle {
  db: SqliteDatabase;
  statement(sql: string): Compiled;
}

/** The driver handle behind each ORM connection (set by `reuseStatementsOf`). */
const handles = new WeakMap<object, { sqlite: SqliteHandle } | { pg: PgPool }>();

/**
 * Runs a statement outside any transaction straight on the driver; undefined when it must go
 * through the executor instead (SQLite with a transaction open on the connection, or a connection
 * opened without `openDatabase`).
 */
export function runOutsideTransaction(connection: object, sql: string, params: readonly unknown[]): Outcome | Promise<Outcome> | undefined {
  const handle = handles.get(connection);
  if (!handle) return undefined;
  if ('pg' in handle) {
    return handle.pg.query(sql, params).then((res) => ({
      rows: res.rows,
      ...(res.command === 'SELECT' ? {} : { numAffectedRows: BigInt(res.rowCount ?? 0) }),
    }));
  }
  const { db, statement } = handle.sqlite;
  // A statement runs synchronously, so nothing else is half-way through the connection meanwhile.
  if (db.inTransaction) return undefined;
  const { stmt, reader } = statement(sql);
  if (reader) return { rows: stmt.all(params) as Record<string, unknown>[] };
  return { rows: [], numAffectedRows: BigInt(stmt.run(params).changes) };
}

/**
 * SQLite, outside a transaction: runs the writes as one transaction at once (synchronously: nothing
 * can interleave, one commit) when no transaction is open on the connection, answering the rows
 * each changed; undefined otherwise.
 */
export function writeOnIdleSqlite(connection: object, writes: readonly { sql: string; params: readonly unknown[] }[]): number[] | undefined {
  const handle = handles.get(connection);
  if (!handle || !('sqlite' in handle) || handle.sqlite.db.inTransaction) return undefined;
  const { db, statement } = handle.sqlite;
  const changed: number[] = [];
  db.transaction(() => {
    for (const w of writes) changed.push(statement(w.sql).stmt.run(w.params).changes);
  })();
  return changed;
}

/**
 * SQLite: the connection's `prepare` answers a registered text with the statement compiled the first
 * time (Kysely's executor prepares every statement it runs); answers the lookup for direct runs.
 */
export function reuseSqliteStatements(db: Pick<SqliteDatabase, 'prepare'>): (sql: string) => Compiled {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, Compiled>();
  const statement = (sql: string): Compiled => {
    let c = statements.get(sql);
    if (!c) {
      const stmt = prepare(sql);
      c = { stmt, reader: stmt.reader };
      if (names.has(sql)) statements.set(sql, c);
    }
    return c;
  };
  db.prepare = (sql: string) => (names.has(sql) ? statement(sql).stmt : prepare(sql));
  return statement;
}

/** PostgreSQL: every client of the pool runs a registered text as a named statement. */
export function reusePgStatements(pool: Pick<PgPool, 'on'>): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (config, values, callback) => {
      const name = typeof config === 'string' ? names.get(config) : undefined;
      return name === undefined ? query(config, values, callback) : query({ name, text: config }, values, callback);
    };
  });
}

/** The ORM options that install statement reuse on a new PostgreSQL pool (SQLite: see `reuseStatementsOf`). */
export function statementReuseOptions(dialect: Dialect): Record<string, unknown> {
  return dialect === 'postgresql' ? { driverOptions: { onPoolCreated: (pool: PgPool) => reusePgStatements(pool) } } : {};
}

/** Installs statement reuse on an opened ORM's SQLite connection, and notes the driver handle of either. */
export async function reuseStatementsOf(orm: MikroORM, dialect: Dialect): Promise<void> {
  const connection = orm.em.getConnection();
  const native = await (connection as unknown as { getNativeClient(): Promise<unknown> }).getNativeClient();
  if (dialect === 'sqlite') {
    const db = native as SqliteDatabase;
    handles.set(connection, { sqlite: { db, statement: reuseSqliteStatements(db) } });
  } else {
    handles.set(connection, { pg: native as PgPool });
  }
}
