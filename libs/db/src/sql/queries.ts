import { ReferenceKind, type EntityManager, type EntityName } from '@mikro-orm/core';
import type { InferKyselyDB, SnakeCase, SqlEntityManager } from '@mikro-orm/sql';
import {
  CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector,
  SqliteQueryCompiler, type Compilable, type QueryResult, type RawBuilder,
} from 'kysely';
import { dialectOf, fromDb, tablesOf, toDb, type Dialect, type TableInfo } from './convert.js';
import { registerStatement, runOutsideTransaction, writeOnIdleSqlite } from './prepared.js';
import { resultColumns, type ResultColumn } from './results.js';
import { checkWorkspaceScope } from './scope.js';

/**
 * The tables of some entities as Kysely types them: the table names and snake_case column names
 * the ORM maps them to, each column with its property's type (Date, boolean, the JSON's type).
 * Inferred from the entity definitions, so a column added to an entity is known here at once.
 */
export type Tables<E extends { name: string }> = InferKyselyDB<E>;

/** An entity's properties under their column names (the ORM's default naming). */
export type Columns<T> = { [K in keyof T as K extends string ? SnakeCase<K> : never]: T[K] };

type Row = Record<string, unknown>;

/** What a builder callback answers: a query builder, or raw SQL (Kysely's `sql` tag). */
export type Statement<R> = Compilable<R> | RawBuilder<R>;

function compile(statement: Statement<unknown>, db: Kysely<never>): CompiledQuery {
  // Raw SQL compiles on the instance that will run it; the builders know theirs.
  return (statement as RawBuilder<unknown>).compile(db);
}

/**
 * How a statement treats workspaces. Every statement on a workspace's table names the workspace
 * (its reads `workspace_id = …`; its updates and deletes the workspace or the row's key), checked
 * when it is first compiled; `allWorkspaces` declares one that must see every workspace (sweepers,
 * the dispatcher, the worker's reads by a job's id), the SQL twin of the ORM's `allWorkspaces(orm)`.
 */
export interface StatementOptions {
  allWorkspaces?: true;
}

/** A statement compiled once per dialect, run with new values each time. */
export interface Prepared<P, R> {
  /** Its rows (of a query, or of a write with `returning`). */
  all(em: EntityManager, params: P): Promise<R[]>;
  one(em: EntityManager, params: P): Promise<R | undefined>;
  /** Runs a write; answers the number of rows it changed. */
  run(em: EntityManager, params: P): Promise<number>;
  /** The statement with the values of one run, for `writeTogether`. */
  with(params: P): Write;
}

/** A prepared write and the values of one run. */
export interface Write {
  readonly statement: Prepared<never, unknown>;
  readonly params: unknown;
}

/** Statements only compile through this layer's builders: they run through `Queries`, converted. */
class CompileOnlyDriver extends DummyDriver {
  override acquireConnection(): Promise<never> {
    return Promise.reject(new Error('Run statements through the Queries of #libs/db (one, all, run), not Kysely\'s execute()'));
  }
}

const builders = new Map<Dialect, Kysely<never>>();

function builder(dialect: Dialect): Kysely<never> {
  let db = builders.get(dialect);
  if (!db) {
    db = new Kysely<never>({
      dialect: dialect === 'sqlite'
        ? { createAdapter: () => new SqliteAdapter(), createDriver: () => new CompileOnlyDriver(), createIntrospector: (k) => new SqliteIntrospector(k), createQueryCompiler: () => new SqliteQueryCompiler() }
        : { createAdapter: () => new PostgresAdapter(), createDriver: () => new CompileOnlyDriver(), createIntrospector: (k) => new PostgresIntrospector(k), createQueryCompiler: () => new PostgresQueryCompiler() },
    });
    builders.set(dialect, db);
  }
  return db;
}

/**
 * Runs one statement on `em`'s transaction when one is open (`em` of `em.transactional`: it commits or
 * rolls back with everything else the transaction does), else on its own (straight on the driver,
 * see prepared.ts). Failures are the ORM's exception classes (UniqueConstraintViolationException, …),
 * as its own statements throw them; result columns are read back by `fromDb`.
 */
async function execute(em: EntityManager, dialect: Dialect, sql: string, params: unknown[], results: readonly ResultColumn[]): Promise<QueryResult<Row>> {
  let res: QueryResult<Row> | undefined;
  try {
    const trx = em.getTransactionContext<Kysely<never>>();
    if (!trx) {
      const direct = runOutsideTransaction(em.getConnection(), sql, params);
      res = direct instanceof Promise ? await direct : direct;
    }
    res ??= await (trx ?? (em as SqlEntityManager).getKysely()).executeQuery<Row>(CompiledQuery.raw(sql, params));
  } catch (err) {
    throw em.getDriver().convertException(err as Error);
  }
  for (const row of res.rows) {
    for (let i = 0; i < results.length; i++) {
      const [name, kind] = results[i] as ResultColumn;
      if (name in row) row[name] = fromDb(dialect, kind, row[name]);
    }
  }
  return res;
}

function affected(res: QueryResult<Row>): number {
  return Number(res.numAffectedRows ?? 0);
}

/** A parameter's place in a prepared statement: it stands in the builder for the value given at each run. */
class Param {
  constructor(readonly name: string) {}
}

const placeholders = new Proxy({}, { get: (_target, key) => (typeof key === 'string' ? new Param(key) : undefined) });

interface Compiled {
  sql: string;
  /** Per parameter: the name of the run's value, or null for a constant of the statement (`constants`). */
  names: (string | null)[];
  constants: unknown[];
  results: readonly ResultColumn[];
}

class PreparedStatement<P, R> implements Prepared<P, R> {
  private readonly compiled = new Map<Dialect, Compiled>();

  constructor(
    private readonly build: (db: Kysely<never>, p: P) => Statement<unknown>,
    private readonly options: StatementOptions = {},
  ) {}

  private compile(em: EntityManager, dialect: Dialect): Compiled {
    let c = this.compiled.get(dialect);
    if (!c) {
      const db = builder(dialect);
      const q = compile(this.build(db, placeholders as P), db);
      if (!this.options.allWorkspaces) checkWorkspaceScope(q.query, tablesOf(em));
      const names: (string | null)[] = [];
      const constants: unknown[] = [];
      // PostgreSQL numbers its parameters: a value used in several places is sent once ($n reused).
      const slots = new Map<string, number>();
      const slotOf = q.parameters.map((v) => {
        const reused = dialect === 'postgresql' && v instanceof Param ? slots.get(v.name) : undefined;
        if (reused !== undefined) return reused;
        if (v instanceof Param) slots.set(v.name, names.length);
        names.push(v instanceof Param ? v.name : null);
        constants.push(v instanceof Param ? undefined : toDb(dialect, v));
        return names.length - 1;
      });
      const sql = dialect === 'postgresql' ? q.sql.replace(/\$(\d+)/g, (_, n: string) => `$${(slotOf[Number(n) - 1] as number) + 1}`) : q.sql;
      c = { sql, names, constants, results: resultColumns(q.query, tablesOf(em)) };
      registerStatement(c.sql);
      this.compiled.set(dialect, c);
    }
    return c;
  }

  /** The statement's text and the values of one run, converted for `dialect`. */
  bind(em: EntityManager, dialect: Dialect, params: P): { sql: string; params: unknown[]; results: readonly ResultColumn[] } {
    const c = this.compile(em, dialect);
    const values = new Array<unknown>(c.names.length);
    for (let i = 0; i < values.length; i++) {
      const name = c.names[i];
      values[i] = name === null ? c.constants[i] : toDb(dialect, (params as Row)[name as string]);
    }
    return { sql: c.sql, params: values, results: c.results };
  }

  private exec(em: EntityManager, params: P): Promise<QueryResult<Row>> {
    const dialect = dialectOf(em);
    const b = this.bind(em, dialect, params);
    return execute(em, dialect, b.sql, b.params, b.results);
  }

  with(params: P): Write {
    return { statement: this as unknown as Prepared<never, unknown>, params };
  }

  async all(em: EntityManager, params: P): Promise<R[]> {
    return (await this.exec(em, params)).rows as R[];
  }

  async one(em: EntityManager, params: P): Promise<R | undefined> {
    return (await this.exec(em, params)).rows[0] as R | undefined;
  }

  async run(em: EntityManager, params: P): Promise<number> {
    return affected(await this.exec(em, params));
  }
}

/**
 * Runs prepared writes as one transaction of their own (`em` must not be in one); answers the rows
 * each changed. On SQLite with no transaction open on the connection they run at once, synchronously
 * (one commit, none of the executor's queueing per statement); otherwise in `em.transactional`.
 */
export async function writeTogether(em: EntityManager, writes: readonly Write[]): Promise<number[]> {
  if (!writes.length) return [];
  const dialect = dialectOf(em);
  if (dialect === 'sqlite' && !em.getTransactionContext()) {
    const bound = writes.map((w) => (w.statement as unknown as PreparedStatement<unknown, unknown>).bind(em, dialect, w.params));
    try {
      const changed = writeOnIdleSqlite(em.getConnection(), bound);
      if (changed) return changed;
    } catch (err) {
      throw em.getDriver().convertException(err as Error);
    }
  }
  return em.fork().transactional(async (tx) => {
    const changed: number[] = [];
    for (const w of writes) changed.push(await w.statement.run(tx, w.params as never));
    return changed;
  });
}

/** Result columns by statement text, for statements built per call (bounded like the statement registry). */
const MAX_TEXTS = 2000;
const resultsByText = new Map<string, readonly ResultColumn[]>();

/**
 * The typed SQL of some tables, for the statements that bypass the ORM for speed: Kysely's query
 * builder typed by `Tables<…>` of the entities, run through the ORM's connection or transaction.
 *
 * - `prepare` compiles a statement once per dialect (its `p` argument hands out placeholders for the
 *   values of each run): for statements on hot paths, whose building and compiling would otherwise
 *   cost as much as running them.
 * - `one`, `all`, `run` build and compile a statement per call, for those whose shape changes.
 *
 * Parameters and rows are converted by `toDb` / `fromDb`; every statement text is prepared once per
 * connection (prepared.ts).
 */
export class Queries<DB> {
  private readonly shapes = new Map<string, Prepared<never, unknown>>();

  /** A statement compiled once; `p`'s properties are placeholders for the values given to each run. */
  prepare<P = Record<never, never>, R = unknown>(build: (db: Kysely<DB>, p: P) => Statement<R>, options?: StatementOptions): Prepared<P, R> {
    return new PreparedStatement<P, R>(build as unknown as (db: Kysely<never>, p: P) => Statement<unknown>, options);
  }

  /**
   * `prepare` for statements whose shape varies (the columns an update sets, the number of ids): one
   * statement per `shape`, made by `build` the first time that shape is asked for, kept for the life of
   * the process. The shapes must be few (a code path's, never a value's); `build` should capture no
   * more than the shape itself, since it is kept with its statement.
   */
  shaped<P, R>(shape: string, build: (db: Kysely<DB>, p: P) => Statement<R>, options?: StatementOptions): Prepared<P, R> {
    let statement = this.shapes.get(shape) as Prepared<P, R> | undefined;
    if (!statement) {
      statement = this.prepare(build, options);
      this.shapes.set(shape, statement as Prepared<never, unknown>);
    }
    return statement;
  }

  async all<R>(em: EntityManager, build: (db: Kysely<DB>) => Statement<R>, options?: StatementOptions): Promise<R[]> {
    return (await this.exec(em, build, options)).rows as R[];
  }

  async one<R>(em: EntityManager, build: (db: Kysely<DB>) => Statement<R>, options?: StatementOptions): Promise<R | undefined> {
    return (await this.exec(em, build, options)).rows[0] as R | undefined;
  }

  /** Runs a write built now; answers the number of rows it changed. */
  async run(em: EntityManager, build: (db: Kysely<DB>) => Statement<unknown>, options?: StatementOptions): Promise<number> {
    return affected(await this.exec(em, build, options));
  }

  /** Inserts an entity's row from its properties (statement compiled once per entity and set of properties). */
  async insert<T extends object>(em: EntityManager, entity: EntityName<T>, data: Partial<T>): Promise<void> {
    const keys = Object.keys(data);
    const info = tableOf(em, entity);
    const table = info.meta.tableName;
    const stmt = this.shaped<Row, unknown>(`insert ${table}:${keys.join(',')}`, (db, p) => (db as unknown as Kysely<Record<string, Row>>)
      .insertInto(table)
      .values(Object.fromEntries(keys.map((k) => [columnOf(info, k), p[k]]))));
    await stmt.run(em, data as Row);
  }

  /** An entity's properties under their column names, for `set` and `values` (names from the ORM's metadata). */
  columns<T extends object, D extends Partial<T>>(em: EntityManager, entity: EntityName<T>, data: D): Columns<D> {
    const info = tableOf(em, entity);
    const out: Row = {};
    for (const [k, v] of Object.entries(data)) out[columnOf(info, k)] = v;
    return out as Columns<D>;
  }

  private exec(em: EntityManager, build: (db: Kysely<DB>) => Statement<unknown>, options: StatementOptions = {}): Promise<QueryResult<Row>> {
    const dialect = dialectOf(em);
    const db = builder(dialect);
    const q = compile(build(db as unknown as Kysely<DB>), db);
    // Checked texts only: one declared allWorkspaces does not let the same text through unchecked elsewhere.
    const key = options.allWorkspaces ? `*${q.sql}` : q.sql;
    let results = resultsByText.get(key);
    if (!results) {
      if (!options.allWorkspaces) checkWorkspaceScope(q.query, tablesOf(em));
      results = resultColumns(q.query, tablesOf(em));
      if (resultsByText.size < MAX_TEXTS) resultsByText.set(key, results);
      registerStatement(q.sql);
    }
    return execute(em, dialect, q.sql, q.parameters.map((v) => toDb(dialect, v)), results);
  }
}

/** The typed SQL of `DB`'s tables (`Tables<typeof EntityA | typeof EntityB>`). */
export function queries<DB>(): Queries<DB> {
  return new Queries<DB>();
}

function tableOf<T extends object>(em: EntityManager, entity: EntityName<T>): TableInfo {
  const tableName = em.getMetadata().get(entity).tableName;
  const info = tablesOf(em).get(tableName);
  if (!info) throw new Error(`No table ${tableName}`);
  return info;
}

function columnOf(info: TableInfo, prop: string): string {
  const column = info.columns.get(prop);
  if (!column) throw new Error(`${info.meta.className} has no column for ${prop}`);
  return column;
}

/** Per table: its entity's prototype and each column's property, for entityOf. */
const builds = new WeakMap<TableInfo, { prototype: object; props: readonly (readonly [column: string, prop: string])[] }>();

/**
 * An entity built from a row this layer read (column names as keys, values already converted by
 * `fromDb`), unmanaged: in no identity map, so changing it writes nothing. What the ORM's own mapping
 * (`em.fork().map`) builds, property for property and with its prototype (test/sql.e2e-spec.ts),
 * without its cost: that merged the row into a new fork's identity map, ~0.5 ms a render read on a
 * 2-core VM, twice on every still's trip (the worker's settle, the API's read). Entities of plain
 * columns only.
 */
export function entityOf<T extends object>(em: EntityManager, entity: EntityName<T>, row: Row): T {
  const info = tableOf(em, entity);
  let build = builds.get(info);
  if (!build) {
    // Plain columns only: a relation or an embedded value would come back as its raw column.
    const other = info.meta.props.find((p) => p.kind !== ReferenceKind.SCALAR);
    if (other) throw new Error(`entityOf: ${info.meta.className}.${other.name} is not a plain column (${other.kind}); read it through the ORM`);
    build = { prototype: info.meta.prototype as object, props: [...info.columns].map(([prop, column]) => [column, prop] as const) };
    builds.set(info, build);
  }
  const out = Object.create(build.prototype) as Row;
  for (const [column, prop] of build.props) if (column in row) out[prop] = row[column];
  return out as T;
}
