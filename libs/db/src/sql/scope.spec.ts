import type { EntityMetadata } from '@mikro-orm/core';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import { workspaceFilter } from '../workspace.js';
import type { TableInfo } from './convert.js';
import { checkWorkspaceScope } from './scope.js';

function table(name: string, props: string[], filters: object = {}): [string, TableInfo] {
  const column = (p: string) => p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const meta = { tableName: name, className: name, primaryKeys: ['id'], filters, props: props.map((p) => ({ name: p, fieldNames: [column(p)] })) } as unknown as EntityMetadata;
  return [name, { meta, kinds: new Map(), columns: new Map(props.map((p) => [p, column(p)])) }];
}

const TABLES = new Map([
  table('delivery', ['id', 'workspaceId', 'endpointId', 'state'], workspaceFilter()),
  table('endpoint', ['id', 'workspaceId', 'url'], workspaceFilter()),
  table('workspace', ['id', 'plan']),
]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped tables: the shapes under test are the query trees.
const db = new Kysely<any>({
  dialect: { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new SqliteIntrospector(k), createQueryCompiler: () => new SqliteQueryCompiler() },
});

const check = (q: { toOperationNode(): unknown }) => () => checkWorkspaceScope(q.toOperationNode() as never, TABLES);

describe('the workspace rule of hand-written statements', () => {
  it('lets reads through that name the workspace, alone or among other conditions', () => {
    expect(check(db.selectFrom('delivery').select('id').where('workspace_id', '=', 'w'))).not.toThrow();
    expect(check(db.selectFrom('delivery as d').select('d.id').where('d.state', '=', 'pending').where('d.workspace_id', 'in', ['w', 'v']))).not.toThrow();
    expect(check(db.selectFrom('delivery').select('id').where((eb) => eb.and([eb('state', '=', 'x'), eb('workspace_id', '=', 'w')])))).not.toThrow();
  });

  it('refuses reads by anything else, the primary key included, naming the table', () => {
    expect(check(db.selectFrom('delivery').select('id').where('state', '=', 'pending'))).toThrow(/reads delivery without naming the workspace/);
    expect(check(db.selectFrom('delivery').select('id').where('id', '=', 'd'))).toThrow(/allWorkspaces/);
    // Named only on one side of an OR: not every row read is the workspace's.
    expect(check(db.selectFrom('delivery').select('id').where((eb) => eb.or([eb('workspace_id', '=', 'w'), eb('state', '=', 'x')])))).toThrow();
    // Another table's workspace column does not pin this one.
    expect(check(db.selectFrom('delivery as d').innerJoin('endpoint as e', 'e.id', 'd.endpoint_id').select('d.id').where('e.workspace_id', '=', 'w'))).toThrow(/reads delivery/);
    expect(check(db.selectFrom('delivery').select('id').where(sql<boolean>`workspace_id = ${'w'}`))).toThrow();
  });

  it('lets updates and deletes through by the workspace or the row\'s key', () => {
    expect(check(db.updateTable('delivery').set({ state: 'x' }).where('id', '=', 'd').where(sql<boolean>`1 = 1`))).not.toThrow();
    expect(check(db.updateTable('delivery').set({ state: 'x' }).where('id', 'in', ['a', 'b']))).not.toThrow();
    expect(check(db.deleteFrom('endpoint').where('workspace_id', '=', 'w'))).not.toThrow();
    expect(check(db.updateTable('delivery').set({ state: 'x' }).where('state', '=', 'pending'))).toThrow(/changes delivery without naming the workspace \(`workspace_id = …` or its primary key\)/);
    expect(check(db.deleteFrom('endpoint').where('url', '=', 'u'))).toThrow(/changes endpoint/);
  });

  it('follows a joined table by its key from a pinned row, and statements nested in others', () => {
    expect(check(db.selectFrom('delivery as d').leftJoin('endpoint as e', 'e.id', 'd.endpoint_id').select('d.id').where('d.workspace_id', '=', 'w'))).not.toThrow();
    expect(check(db.selectFrom('delivery as d').leftJoin('endpoint as e', 'd.endpoint_id', 'e.id').select('d.id').where('d.workspace_id', '=', 'w'))).not.toThrow();
    expect(check(db.selectFrom('delivery as d').leftJoin('endpoint as e', 'e.url', 'd.state').select('d.id').where('d.workspace_id', '=', 'w'))).toThrow(/reads endpoint/);
    const cte = db.with('x', (qc) => qc.updateTable('delivery').set({ state: 'x' }).where('state', '=', 'y')).selectFrom('workspace').select('id');
    expect(check(cte)).toThrow(/changes delivery/);
    const sub = db.selectFrom('workspace').select('id').where('id', 'in', db.selectFrom('endpoint').select('workspace_id').where('url', '=', 'u'));
    expect(check(sub)).toThrow(/reads endpoint/);
  });

  it('leaves inserts and tables no workspace owns alone', () => {
    expect(check(db.insertInto('delivery').values({ id: 'd', workspace_id: 'w' }))).not.toThrow();
    expect(check(db.selectFrom('workspace').select('plan').where('id', '=', 'w'))).not.toThrow();
  });
});
