import type { EntityManager, EntityName } from '@mikro-orm/core';
import { CompiledQuery, type QueryResult } from 'kysely';

export type SqlDialect = 'sqlite' | 'postgresql';

interface Executor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

type Row = Record<string, unknown>;

/** `?` placeholders as PostgreSQL's `$1…`, computed once per statement text. */
const pgTexts = new Map<string, string>();
function pgText(text: string): string {
  let out = pgTexts.get(text);
  if (out === undefined) {
    let n = 0;
    out = text.replace(/\?/g, () => `$${++n}`);
    pgTexts.set(text, out);
  }
  return out;
}

/** The dialect of an entity manager's driver (the two this product runs on). */
export function dialectOf(em: EntityManager): SqlDialect {
  const driver = em.getDriver().constructor.name;
  if (driver === 'PostgreSqlDriver') return 'postgresql';
  if (driver === 'SqliteDriver') return 'sqlite';
  throw new Error(`Unsupported database driver ${driver}`);
}

/**
 * Hand-written statements inside the caller's ORM transaction (`em` from `em.transactional`): they run
 * on the transaction's own connection, so they commit or roll back with whatever the ORM flushes in
 * it. For the hot paths of a render (the claim with its credit hold, the settle with its capture):
 * MikroORM spends ~0.2–0.5 ms building, inlining and hydrating each statement where the database
 * takes ~0.02 ms (docs/benchmarks.md, still-http).
 *
 * Statements use `?` placeholders (rewritten to `$n` for PostgreSQL). Parameters are converted to
 * what each dialect stores: dates as epoch milliseconds and booleans as 0/1 on SQLite (MikroORM's
 * own mapping), objects as JSON text. Rows come back with column names; `entity()` hydrates one.
 */
export class SqlTx {
  private constructor(
    private readonly em: EntityManager,
    private readonly trx: Executor,
    readonly dialect: SqlDialect,
  ) {}

  /** The statements of `em`'s open transaction; throws outside one (a lone statement needs no helper). */
  static of(em: EntityManager): SqlTx {
    const trx = em.getTransactionContext<Executor>();
    if (!trx || typeof trx.executeQuery !== 'function') throw new Error('SqlTx.of needs the entity manager of an open transaction');
    return new SqlTx(em, trx, dialectOf(em));
  }

  /** Single statements outside a transaction (each commits on its own), on the ORM's connection. */
  static auto(em: EntityManager): SqlTx {
    const client = (em.getConnection() as unknown as { getClient(): Executor }).getClient();
    return new SqlTx(em, client, dialectOf(em));
  }

  private param(value: unknown): unknown {
    if (value === undefined || value === null) return null;
    if (value instanceof Date) return this.dialect === 'sqlite' ? value.getTime() : value;
    if (typeof value === 'boolean') return this.dialect === 'sqlite' ? (value ? 1 : 0) : value;
    if (typeof value === 'object' && !Buffer.isBuffer(value)) return JSON.stringify(value);
    return value;
  }

  private async exec(text: string, params: readonly unknown[]): Promise<QueryResult<Row>> {
    const sql = this.dialect === 'postgresql' ? pgText(text) : text;
    try {
      return await this.trx.executeQuery(CompiledQuery.raw(sql, params.map((p) => this.param(p))) as CompiledQuery<Row>);
    } catch (err) {
      // The ORM's exception classes (UniqueConstraintViolationException, busy/lock errors), as its own statements throw.
      throw this.em.getDriver().convertException(err as Error);
    }
  }

  /** Rows of a query (or of a statement with `returning`). */
  async all(text: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.exec(text, params)).rows;
  }

  async one(text: string, params: readonly unknown[] = []): Promise<Row | undefined> {
    return (await this.exec(text, params)).rows[0];
  }

  /** Runs a write; answers the number of rows it changed. */
  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    const res = await this.exec(text, params);
    return Number(res.numAffectedRows ?? 0);
  }

  /** Inserts an entity's row from its properties (column names from the ORM's metadata). */
  async insert<T extends object>(entity: EntityName<T>, data: Partial<T>): Promise<void> {
    const columns: string[] = [];
    const values: unknown[] = [];
    for (const [prop, value] of Object.entries(data)) {
      columns.push(this.column(entity as EntityName<never>, prop));
      values.push(value);
    }
    await this.run(`insert into ${this.table(entity as EntityName<never>)} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`, values);
  }

  /** Updates the properties in `set` of the rows `where` (raw SQL with `?`) selects; answers the count. */
  async update<T extends object>(entity: EntityName<T>, set: Partial<T>, where: string, params: readonly unknown[]): Promise<number> {
    const entries = Object.entries(set);
    const assignments = entries.map(([prop]) => `${this.column(entity as EntityName<never>, prop)} = ?`).join(', ');
    return this.run(`update ${this.table(entity as EntityName<never>)} set ${assignments} where ${where}`, [...entries.map(([, v]) => v), ...params]);
  }

  /**
   * An entity built from a row of this transaction (column names as keys), unmanaged: changing it
   * writes nothing (the ORM's map on a throwaway fork, so the transaction's flush never sees it).
   */
  entity<T extends object>(entity: EntityName<T>, row: Row): T {
    return this.em.fork().map(entity, row as never) as T;
  }

  private table(entity: EntityName<never>): string {
    return this.em.getMetadata().get(entity as EntityName<object>).tableName;
  }

  private column(entity: EntityName<never>, prop: string): string {
    const meta = this.em.getMetadata().get(entity as EntityName<object>);
    const field = (meta.properties as Record<string, { fieldNames?: string[] } | undefined>)[prop]?.fieldNames?.[0];
    if (!field) throw new Error(`${meta.className} has no column for ${prop}`);
    return field;
  }
}
