import { UniqueConstraintViolationException, type EntityName } from '@mikro-orm/core';
import type { Kysely } from 'kysely';
import { openAppDatabase } from '#libs/app';
import { newId } from '#libs/core';
import { dialectOf, entityOf, forWorkspace, queries, sql, type Orm, type Tables } from '#libs/db';
import { CreditsService } from '#libs/credits';
import { OrmRenderRepository, Render } from '#libs/renders';
import { WebhookEndpoint } from '#libs/webhooks';
import type { Workspace } from '#libs/workspaces';
import { testContext, type TestContext } from './harness.js';

// libs/db's query layer against the real database of this run (SQLite or PostgreSQL): what it
// writes reads the same through the ORM and back, failures are the ORM's exceptions, and a
// statement run with a transaction's entity manager commits or rolls back with it.
type T = Tables<typeof WebhookEndpoint | typeof Workspace | typeof Render>;
const q = queries<T>();

const ENDPOINT_BY_ID = q.prepare((db, p: { id: string; workspaceId: string }) => db
  .selectFrom('webhook_endpoint').select(['id', 'events', 'headers', 'is_active', 'consecutive_failures', 'disabled_at', 'last_success_at', 'created_at'])
  .where('id', '=', p.id).where('workspace_id', '=', p.workspaceId));

const SET_ACTIVE = q.prepare((db, p: { id: string; active: boolean; at: Date | null }) =>
  db.updateTable('webhook_endpoint').set({ is_active: p.active, disabled_at: p.at }).where('id', '=', p.id));

describe('libs/db queries', () => {
  let ctx: TestContext;
  let orm: Orm;

  beforeAll(async () => {
    ctx = await testContext();
    orm = await openAppDatabase(ctx.config.database);
  });
  afterAll(async () => {
    await orm.close(true);
    await ctx.cleanup();
  });

  const endpoint = (over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    return {
      id: newId('webhook'), workspaceId: newId('workspace'), kind: 'endpoint', url: 'https://example.com/hook', description: null,
      events: ['render.completed', 'render.failed'], mode: 'live', modes: ['live', 'test'], method: 'POST', bodyFormat: 'json', payloadMode: 'default', payloadTemplate: null,
      headers: [{ key: 'X-A', value: 'b' }], secretSealed: 'sealed', secretHint: 'whsec_...abcd', isActive: true, disabledAt: null,
      consecutiveFailures: 3, lastSuccessAt: at, lastFailureAt: null, createdAt: at, updatedAt: at, ...over,
    };
  };

  it('writes rows the ORM reads as it wrote them, and reads the ORM\'s rows back converted', async () => {
    const mine = endpoint();
    await q.insert(orm.em, WebhookEndpoint, mine);
    const viaOrm = await forWorkspace(orm, mine.workspaceId).findOneOrFail(WebhookEndpoint, { id: mine.id });
    expect({ ...viaOrm }).toEqual(mine);

    const theirs = endpoint({ isActive: false, disabledAt: new Date('2026-11-23T01:02:03.004Z'), events: [] });
    const em = orm.em.fork();
    em.create(WebhookEndpoint, theirs);
    await em.flush();
    expect(await ENDPOINT_BY_ID.one(orm.em, { id: theirs.id, workspaceId: theirs.workspaceId })).toEqual({
      id: theirs.id, events: [], headers: [{ key: 'X-A', value: 'b' }], is_active: false, consecutive_failures: 3,
      disabled_at: new Date('2026-11-23T01:02:03.004Z'), last_success_at: new Date('2026-11-22T10:00:00.123Z'), created_at: theirs.createdAt,
    });
  });

  it('binds booleans and dates as the dialect stores them in conditions and updates', async () => {
    const row = endpoint();
    await q.insert(orm.em, WebhookEndpoint, row);
    const at = new Date('2026-12-01T00:00:00.500Z');
    expect(await SET_ACTIVE.run(orm.em, { id: row.id, active: false, at })).toBe(1);
    const found = await q.all(orm.em, (db) => db.selectFrom('webhook_endpoint').select(['id', 'disabled_at'])
      .where('workspace_id', '=', row.workspaceId).where('is_active', '=', false).where('disabled_at', '=', at));
    expect(found).toEqual([{ id: row.id, disabled_at: at }]);
    expect((await forWorkspace(orm, row.workspaceId).findOneOrFail(WebhookEndpoint, { id: row.id })).isActive).toBe(false);
  });

  it('fails with the ORM\'s exception classes', async () => {
    const row = endpoint();
    await q.insert(orm.em, WebhookEndpoint, row);
    await expect(q.insert(orm.em, WebhookEndpoint, row)).rejects.toBeInstanceOf(UniqueConstraintViolationException);
  });

  it('runs inside em.transactional: rolls back with it and sees its uncommitted rows', async () => {
    const row = endpoint();
    await expect(forWorkspace(orm, row.workspaceId).transactional(async (em) => {
      await q.insert(em, WebhookEndpoint, row);
      // The ORM's own statement in the same transaction sees the row.
      expect(await em.count(WebhookEndpoint, { id: row.id })).toBe(1);
      throw new Error('abort');
    })).rejects.toThrow('abort');
    expect(await ENDPOINT_BY_ID.one(orm.em, { id: row.id, workspaceId: row.workspaceId })).toBeUndefined();

    const kept = endpoint();
    await orm.em.fork().transactional(async (em) => {
      em.create(WebhookEndpoint, kept);
      await em.flush();
      expect((await ENDPOINT_BY_ID.one(em, { id: kept.id, workspaceId: kept.workspaceId }))?.id).toBe(kept.id);
      expect(await SET_ACTIVE.run(em, { id: kept.id, active: false, at: null })).toBe(1);
    });
    expect((await forWorkspace(orm, kept.workspaceId).findOneOrFail(WebhookEndpoint, { id: kept.id })).isActive).toBe(false);
  });

  it('a statement outside the transaction neither joins it nor is lost with it', async () => {
    const inside = endpoint();
    const outside = endpoint();
    let inserted!: () => void;
    let release!: () => void;
    const insertedP = new Promise<void>((r) => { inserted = r; });
    const gate = new Promise<void>((r) => { release = r; });
    const trx = orm.em.fork().transactional(async (em) => {
      await q.insert(em, WebhookEndpoint, inside);
      inserted();
      await gate;
      throw new Error('abort');
    });
    await insertedP;
    // SQLite has one connection: this statement waits for the transaction to end instead of joining it.
    const alone = q.insert(orm.em, WebhookEndpoint, outside);
    release();
    await expect(trx).rejects.toThrow('abort');
    await alone;
    expect(await ENDPOINT_BY_ID.one(orm.em, { id: inside.id, workspaceId: inside.workspaceId })).toBeUndefined();
    expect((await ENDPOINT_BY_ID.one(orm.em, { id: outside.id, workspaceId: outside.workspaceId }))?.id).toBe(outside.id);
  });

  it('binds a value used in several places of a prepared statement', async () => {
    const workspaceId = newId('workspace');
    for (const n of [1, 2, 3]) await q.insert(orm.em, WebhookEndpoint, endpoint({ workspaceId, consecutiveFailures: n }));
    const BETWEEN = q.prepare((db, p: { workspaceId: string; n: number }) => db.selectFrom('webhook_endpoint').select('consecutive_failures')
      .where('workspace_id', '=', p.workspaceId).where('consecutive_failures', '>=', p.n).where('consecutive_failures', '<=', p.n));
    expect(await BETWEEN.all(orm.em, { workspaceId, n: 2 })).toEqual([{ consecutive_failures: 2 }]);
  });

  it('a unique violation inside a transaction rolls the whole transaction back', async () => {
    const row = endpoint();
    await q.insert(orm.em, WebhookEndpoint, row);
    const other = endpoint();
    await expect(orm.em.fork().transactional(async (em) => {
      await q.insert(em, WebhookEndpoint, other);
      await q.insert(em, WebhookEndpoint, row);
    })).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    expect(await ENDPOINT_BY_ID.one(orm.em, { id: other.id, workspaceId: other.workspaceId })).toBeUndefined();
  });

  it('reads computed columns as the driver answers them and counts changed rows', async () => {
    const workspaceId = newId('workspace');
    for (let i = 0; i < 3; i++) await q.insert(orm.em, WebhookEndpoint, endpoint({ workspaceId }));
    const ids = (await q.all(orm.em, (db) => db.selectFrom('webhook_endpoint').select('id').where('workspace_id', '=', workspaceId))).map((r) => r.id);
    expect(await q.run(orm.em, (db) => db.updateTable('webhook_endpoint').set({ consecutive_failures: 0 }).where('id', 'in', ids))).toBe(3);
    const counted = await q.one(orm.em, (db) => db.selectFrom('webhook_endpoint').select((eb) => eb.fn.countAll().as('n')).where('workspace_id', '=', workspaceId));
    expect(Number(counted?.n)).toBe(3);
  });

  it('entityOf builds from a read row what the ORM\'s own mapping builds', async () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    const endpoints = [endpoint(), endpoint({ isActive: false, disabledAt: at, headers: [], events: [], description: 'x' })];
    const renders: Render[] = [false, true].map((done) => ({
      id: newId('render'), workspaceId: newId('workspace'), status: done ? 'done' : 'rendering', kind: 'image', mode: done ? 'test' : 'live', preview: done,
      templateId: done ? 'tpl_1' : null, templateVersion: done ? 3 : null, format: 'png', width: 100, height: 80, duration: done ? 1.5 : null, fps: null, scale: 1,
      fileSizeBytes: done ? 3_000_000_000 : null, renderTime: done ? 12 : null, credits: 2, watermarked: done, outputKey: done ? 'r/x/out.png' : null,
      posterKey: null, thumbnailKey: null, expiresAt: done ? at : null, purgedAt: null, error: done ? null : { code: 'X', message: 'y', stage: 'z' },
      progress: done ? 1 : 0.25, cancelRequested: !done, metadata: done ? { a: [1, 'b'] } : null, callback: null, edit: { timeline: { tracks: [] }, output: { format: 'png' } },
      idempotencyKey: done ? 'key-1' : null, requestHash: null, attempts: 1, createdAt: at, updatedAt: at, startedAt: at, completedAt: done ? at : null,
    }));
    for (const e of endpoints) await q.insert(orm.em, WebhookEndpoint, e);
    for (const r of renders) await q.insert(orm.em, Render, r);
    // The row as this layer reads it (converted); the ORM's mapping and entityOf each get a copy.
    const check = async <E extends object>(entity: EntityName<E>, row: Record<string, unknown>, written: E): Promise<E> => {
      const mine = entityOf<E>(orm.em, entity, { ...row });
      const theirs = orm.em.fork().map(entity, { ...row } as never) as E;
      expect({ ...mine }).toEqual({ ...theirs });
      expect({ ...mine }).toEqual(written);
      expect(Object.getPrototypeOf(mine)).toBe(Object.getPrototypeOf(theirs));
      return mine;
    };
    for (const e of endpoints) {
      const row = await q.one(orm.em, (db) => db.selectFrom('webhook_endpoint').selectAll().where('id', '=', e.id), { allWorkspaces: true });
      await check(WebhookEndpoint, row!, e);
    }
    for (const r of renders) {
      const row = await q.one(orm.em, (db) => db.selectFrom('render').selectAll().where('id', '=', r.id), { allWorkspaces: true });
      await check(Render, row!, r);
    }
  });

  it('a render\'s conditional update (compiled once per shape) sets what it is given, under its conditions, and leaves undefined alone', async () => {
    const repo = new OrmRenderRepository(orm, new CreditsService(orm));
    const at = new Date('2026-11-22T10:00:00.123Z');
    const row = {
      id: newId('render'), workspaceId: newId('workspace'), status: 'rendering', kind: 'video', mode: 'live', preview: false, templateId: null, templateVersion: null,
      format: 'mp4', width: 100, height: 80, duration: 2, fps: 30, scale: 1, fileSizeBytes: null, renderTime: null, credits: 2, watermarked: false, outputKey: null,
      posterKey: null, thumbnailKey: null, expiresAt: null, purgedAt: null, error: { code: 'X', message: 'kept', stage: 'z' }, progress: 0.25, cancelRequested: false,
      metadata: null, callback: null, edit: { a: 1 }, idempotencyKey: null, requestHash: null, attempts: 2, createdAt: at, updatedAt: at, startedAt: at, completedAt: null,
    } satisfies Render as Render;
    await q.insert(orm.em, Render, row);
    const later = new Date('2026-11-22T10:00:05.000Z');
    // Each condition refuses on its own; the same shapes run again with other values.
    expect(await repo.update(row.id, { progress: 0.5 }, { statusIn: ['queued', 'fetching'] })).toBe(false);
    expect(await repo.update(row.id, { progress: 0.5 }, { attemptsAtMost: 1 })).toBe(false);
    expect(await repo.update(row.id, { progress: 0.5 }, { progressBelow: 0.25 })).toBe(false);
    expect(await repo.update(row.id, { progress: 0.5, updatedAt: later, error: undefined }, { statusIn: ['queued', 'rendering'], attemptsAtMost: 2, progressBelow: 0.5 })).toBe(true);
    expect(await repo.update(row.id, { progress: 0.75 }, { statusIn: ['rendering', 'saving'] })).toBe(true);
    expect(await repo.update(newId('render'), { progress: 0.9 }, {})).toBe(false);
    // No status to be in matches nothing; the same properties in another order are the same update.
    expect(await repo.update(row.id, { progress: 0.9 }, { statusIn: [] })).toBe(false);
    expect(await repo.update(row.id, { updatedAt: later, progress: 0.75 }, { statusIn: ['queued', 'rendering'], attemptsAtMost: 2, progressBelow: 0.9 })).toBe(true);
    expect(await repo.get(row.id)).toMatchObject({ progress: 0.75, updatedAt: later, error: { code: 'X', message: 'kept', stage: 'z' }, status: 'rendering', attempts: 2 });
    expect(await repo.update(row.id, { status: 'done', edit: { b: [2] }, completedAt: later, cancelRequested: true }, { statusIn: ['rendering'] })).toBe(true);
    expect(await repo.get(row.id)).toMatchObject({ status: 'done', edit: { b: [2] }, completedAt: later, cancelRequested: true, progress: 0.75 });
  });

  it('refuses Kysely\'s own execute() on its builders (rows would skip the conversion)', async () => {
    let builder: Kysely<T> | undefined;
    await q.all(orm.em, (db) => {
      builder = db;
      return db.selectFrom('workspace').select('id').where('id', '=', 'none');
    });
    await expect(builder!.selectFrom('workspace').selectAll().execute()).rejects.toThrow(/Queries of #libs\/db/);
  });

  it('parses each of its statements once per connection (PostgreSQL: a named statement; SQLite: one compiled statement)', async () => {
    const row = endpoint();
    await q.insert(orm.em, WebhookEndpoint, row);
    const params = { id: row.id, workspaceId: row.workspaceId };
    if (dialectOf(orm.em) === 'postgresql') {
      const names = await orm.em.fork().transactional(async (em) => {
        // One connection for the transaction: the statement is parsed there and listed by name.
        await ENDPOINT_BY_ID.one(em, params);
        return q.all(em, () => sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`);
      });
      expect(names.some((n) => /^s\d+$/.test(n.name) && n.statement.includes('from "webhook_endpoint"') && n.statement.includes('"consecutive_failures"'))).toBe(true);
      return;
    }
    expect(dialectOf(orm.em)).toBe('sqlite');
    // Inside a transaction the statement goes through Kysely's executor, which prepares what it runs.
    await orm.em.fork().transactional((em) => ENDPOINT_BY_ID.one(em, params));
    const text = (ENDPOINT_BY_ID as unknown as { bind(em: unknown, dialect: string, p: unknown): { sql: string } }).bind(orm.em, 'sqlite', params).sql;
    const db = await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<{ prepare(sql: string): object }> }).getNativeClient();
    expect(db.prepare(text)).toBe(db.prepare(text));
    // A text the layer never ran is compiled afresh each time (the ORM's own, values inlined).
    expect(db.prepare('select 1')).not.toBe(db.prepare('select 1'));
  });
});
