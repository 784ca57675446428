import { dirname } from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { SqliteDriver } from '@mikro-orm/sqlite';
import { privateDir, privateFile, type AppConfig } from '#libs/core';
import { postgresqlMigrations } from './migrations/postgresql/index.js';
import { sqliteMigrations } from './migrations/sqlite/index.js';
import { reuseStatementsOf, statementReuseOptions } from './sql/prepared.js';

export type Orm = MikroORM;

/** The entities an ORM maps (the app's list is in libs/app: this lib knows no feature). */
export type Entities = Readonly<Options['entities']>;

export function ormOptions(database: AppConfig['database'], entities: Entities): Partial<Options> {
  const common = {
    entities: [...entities],
    extensions: [Migrator],
    allowGlobalContext: false,
    debug: false,
    forceUtcTimezone: true,
  } satisfies Partial<Options>;
  if (database.kind === 'postgresql') {
    return {
      ...common,
      driver: PostgreSqlDriver,
      clientUrl: database.url,
      ...statementReuseOptions('postgresql'),
      migrations: { migrationsList: postgresqlMigrations, transactional: true, snapshot: false, silent: true },
    } as Partial<Options>;
  }
  if (database.file !== ':memory:') {
    // Every workspace's data: this user's alone (issue 28). SQLite gives its WAL and SHM files the
    // database file's mode, so the file is made 0600 before SQLite opens it.
    privateDir(dirname(database.file));
    privateFile(database.file);
    for (const suffix of ['-wal', '-shm']) privateFile(`${database.file}${suffix}`, { create: false });
  }
  return {
    ...common,
    driver: SqliteDriver,
    dbName: database.file,
    migrations: { migrationsList: sqliteMigrations, transactional: true, snapshot: false, silent: true },
  } as Partial<Options>;
}

/**
 * Connects, tunes SQLite for several processes (WAL, busy timeout), has the connection reuse the
 * statements of libs/db's queries (sql/prepared.ts), and applies pending migrations.
 */
export async function openDatabase(database: AppConfig['database'], entities: Entities, opts: { migrate?: boolean } = {}): Promise<Orm> {
  const orm = await MikroORM.init(ormOptions(database, entities));
  await reuseStatementsOf(orm, database.kind);
  if (database.kind === 'sqlite') {
    const conn = orm.em.getConnection();
    await conn.execute('PRAGMA busy_timeout = 5000');
    if (database.file !== ':memory:') await conn.execute('PRAGMA journal_mode = WAL');
    await conn.execute('PRAGMA synchronous = NORMAL');
    await conn.execute('PRAGMA foreign_keys = ON');
  }
  if (opts.migrate !== false) await migrate(orm, database);
  return orm;
}

interface PgClient {
  query(sql: string): Promise<unknown>;
  release(): void;
}

/** Applies pending migrations; on PostgreSQL under an advisory lock, so API and workers starting together take turns. */
async function migrate(orm: Orm, database: AppConfig['database']): Promise<void> {
  if (database.kind !== 'postgresql') {
    await orm.migrator.up();
    return;
  }
  const pool = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<{ connect(): Promise<PgClient> }> }).getNativeClient());
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock(727365)');
    await orm.migrator.up();
  } finally {
    await client.query('select pg_advisory_unlock(727365)').catch(() => undefined);
    client.release();
  }
}
