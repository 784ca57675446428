import type { MikroORM } from '@mikro-orm/core';
import Database from 'better-sqlite3';
import type { AppConfig, DialectSql, RowReader } from '#libs/core';

interface SqliteStatement {
  get(...params: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  close(): void;
}
interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Hot-path reads by key through statements prepared once per process (SQLite) or per connection
 * (PostgreSQL named statements), on the ORM's own connection. MikroORM's findOne builds, inlines
 * and re-prepares its SQL on every call, which costs more than the rest of a request; routes that
 * read one row per request use this instead. Writes always go through the ORM.
 */
export class PreparedReader implements RowReader {
  private readonly statements = new Map<string, SqliteStatement>();

  private constructor(
    private readonly sqlite: SqliteDatabase | null,
    private readonly pg: PgPool | null,
    private readonly owned = false,
  ) {}

  /** Closes the reader's own SQLite connection (the ORM closes what it owns). */
  close(): void {
    if (this.owned) this.sqlite?.close();
  }

  /**
   * SQLite: a read-only connection of its own (WAL lets it read beside the ORM's writer and it sees
   * only committed rows); PostgreSQL: the ORM's pool.
   */
  static async open(orm: MikroORM, database: AppConfig['database']): Promise<PreparedReader> {
    const conn = orm.em.getConnection() as unknown as { getNativeClient(): Promise<unknown> };
    if (database.kind === 'postgresql') return new PreparedReader(null, (await conn.getNativeClient()) as PgPool);
    if (database.file === ':memory:') return new PreparedReader((await conn.getNativeClient()) as SqliteDatabase, null);
    const db = new Database(database.file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    return new PreparedReader(db as unknown as SqliteDatabase, null, true);
  }

  /** The first row of a named statement, or undefined. */
  async one(name: string, sql: DialectSql, params: unknown[]): Promise<Record<string, unknown> | undefined> {
    if (this.sqlite) {
      let stmt = this.statements.get(name);
      if (!stmt) {
        stmt = this.sqlite.prepare(sql.sqlite);
        this.statements.set(name, stmt);
      }
      return stmt.get(...params) as Record<string, unknown> | undefined;
    }
    const res = await (this.pg as PgPool).query({ name, text: sql.postgresql, values: params });
    return res.rows[0];
  }
}
