import type { EntityMetadata } from '@mikro-orm/core';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import type { ColumnKind, TableInfo } from './convert.js';
import { resultColumns } from './results.js';

function table(name: string, columns: Record<string, ColumnKind | null>): [string, TableInfo] {
  const kinds = new Map(Object.entries(columns).filter(([, k]) => k !== null) as [string, ColumnKind][]);
  const meta = { tableName: name, className: name, props: Object.keys(columns).map((c) => ({ name: c, fieldNames: [c] })) } as unknown as EntityMetadata;
  return [name, { meta, kinds, columns: new Map(Object.keys(columns).map((c) => [c, c])) }];
}

const TABLES = new Map([
  table('delivery', { id: null, state: null, test: 'boolean', event: 'json', created_at: 'date', endpoint_id: null }),
  table('endpoint', { id: null, url: null, is_active: 'boolean', headers: 'json', created_at: 'date' }),
]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped tables: the shapes under test are the query trees.
const db = new Kysely<any>({
  dialect: { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new SqliteIntrospector(k), createQueryCompiler: () => new SqliteQueryCompiler() },
});

describe('result columns of a statement', () => {
  it('follows table aliases, column aliases and joins', () => {
    const q = db.selectFrom('delivery as d').leftJoin('endpoint as e', 'e.id', 'd.endpoint_id')
      .select(['d.state', 'd.test', 'd.event', 'e.id as e_id', 'e.is_active', 'e.created_at as endpoint_created', 'headers']);
    expect(new Map(resultColumns(q.toOperationNode(), TABLES))).toEqual(new Map([
      ['test', 'boolean'], ['event', 'json'], ['is_active', 'boolean'], ['endpoint_created', 'date'], ['headers', 'json'],
    ]));
  });

  it('expands * and t.* to the converted columns of the tables', () => {
    expect(new Map(resultColumns(db.selectFrom('endpoint').selectAll().toOperationNode(), TABLES)))
      .toEqual(new Map([['is_active', 'boolean'], ['headers', 'json'], ['created_at', 'date']]));
    expect(new Map(resultColumns(db.selectFrom('delivery as d').innerJoin('endpoint as e', 'e.id', 'd.endpoint_id').selectAll('e').toOperationNode(), TABLES)))
      .toEqual(new Map([['is_active', 'boolean'], ['headers', 'json'], ['created_at', 'date']]));
  });

  it('reads the returning clause of writes', () => {
    const u = db.updateTable('endpoint').set({ url: 'x' }).returning(['id', 'is_active', 'created_at']);
    expect(resultColumns(u.toOperationNode(), TABLES)).toEqual([['is_active', 'boolean'], ['created_at', 'date']]);
    const i = db.insertInto('delivery').values({ id: 'a' }).returning('test');
    expect(resultColumns(i.toOperationNode(), TABLES)).toEqual([['test', 'boolean']]);
    expect(resultColumns(db.deleteFrom('delivery').returning('event').toOperationNode(), TABLES)).toEqual([['event', 'json']]);
  });

  it('leaves computed values and unknown tables as the driver answers them', () => {
    const q = db.selectFrom('delivery').select((eb) => [eb.fn.countAll().as('n'), sql<Date>`max(created_at)`.as('last')]);
    expect(resultColumns(q.toOperationNode(), TABLES)).toEqual([]);
    expect(resultColumns(db.selectFrom('other').selectAll().toOperationNode(), TABLES)).toEqual([]);
    expect(resultColumns(sql`select 1`.toOperationNode(), TABLES)).toEqual([]);
  });
});
