import type { MikroORM } from '@mikro-orm/core';
import type { Dialect } from './convert.js';

/*
 * Statements parsed once. The ORM inlines values into its SQL, so its drivers prepare every
 * statement afresh: better-sqlite3 compiles it (tens of µs, more than running it) and PostgreSQL
 * parses and plans it. The statements of this layer keep their values as parameters, so their text
 * repeats; each text the layer runs is registered here, and the ORM's own connection reuses it:
 * SQLite keeps the compiled statement per connection, PostgreSQL runs it as a named statement
 * (parsed once per connection). Statements still go through Kysely's executors, so they join the
 * ORM's transaction and queue behind it on SQLite's single connection as any other.
 */

/** Registered texts and their statement names; the registry stops growing at this size. */
const MAX_STATEMENTS = 2000;
const names = new Map<string, string>();

/** Registers a statement text for reuse (a no-op once the registry is full). */
export function registerStatement(sql: string): void {
  if (names.size < MAX_STATEMENTS && !names.has(sql)) names.set(sql, `s${names.size + 1}`);
}

interface SqliteStatement {
  readonly reader: boolean;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
}
type PgQuery = (config: unknown, values?: unknown, callback?: unknown) => unknown;
interface PgClient {
  query: PgQuery;
}
interface PgPool {
  on(event: 'connect', listener: (client: PgClient) => void): void;
}

/** SQLite: the connection's `prepare` answers a registered text with the statement compiled the first time. */
export function reuseSqliteStatements(db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, SqliteStatement>();
  db.prepare = (sql: string) => {
    if (!names.has(sql)) return prepare(sql);
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = prepare(sql);
      statements.set(sql, stmt);
    }
    return stmt;
  };
}

/** PostgreSQL: every client of the pool runs a registered text as a named statement. */
export function reusePgStatements(pool: PgPool): void {
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

/** Installs statement reuse on an opened SQLite ORM's connection. */
export async function reuseStatementsOf(orm: MikroORM, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  const db = await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<SqliteDatabase> }).getNativeClient();
  reuseSqliteStatements(db);
}
