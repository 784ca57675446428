import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/core';
import type { CreditsService } from '#libs/credits';
import { allWorkspaces, entityOf, forWorkspace, queries, retryBusy, type Tables } from '#libs/db';
import { writeEvent } from '#libs/events';
import { renderPrefix, type StorageDriver } from '#libs/storage';
import { lockWorkspace } from '#libs/workspaces';
import { Render, TERMINAL_STATUSES, type RenderStatus } from '../entities.js';
import { retentionMs } from '../lifecycle.js';
import { DuplicateClaim, type RenderEventType, type RenderHold, type RenderRepository, type RenderTx, type RenderWhere } from '../ports.js';

const renders = queries<Tables<typeof Render>>();

/** A render by its id, whatever its workspace: the worker settles the renders of every workspace by their job's id. */
const RENDER_BY_ID = renders.prepare((db, p: { id: string }) => db.selectFrom('render').selectAll().where('id', '=', p.id), { allWorkspaces: true });

/** A workspace's queued renders (§8 queue depth). */
const QUEUED = renders.prepare((db, p: { workspaceId: string }) => db
  .selectFrom('render').select((eb) => eb.fn.countAll().as('n')).where('workspace_id', '=', p.workspaceId).where('status', '=', 'queued'));

async function find(em: EntityManager, id: string): Promise<Render | null> {
  const found = await RENDER_BY_ID.one(em, { id });
  return found ? entityOf(em, Render, found) : null;
}

/**
 * One conditional update (a hand-written statement: the hot path of every render, libs/db queries),
 * compiled once per shape (`shaped`: the properties set and the conditions): built with Kysely per
 * call it cost as much as running it (~0.25 ms a settle on a 2-core VM). The values are the run's:
 * `set` under its column names, the conditions under `where.*` (one per status).
 */
async function update(em: EntityManager, id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean> {
  // No status to be in: nothing matches (as `status in ()` did, and as the in-memory repository).
  if (where.statusIn?.length === 0) return false;
  const values: Record<string, unknown> = renders.columns(em, Render, set);
  // As Kysely's `set` of an object: a property given as undefined is left as it is.
  const columns = Object.keys(values).filter((c) => values[c] !== undefined);
  const statuses = where.statusIn?.length ?? 0;
  const attempts = where.attemptsAtMost !== undefined;
  const progress = where.progressBelow !== undefined;
  const statement = renders.shaped(`update render:${columns.join(',')}|${statuses}|${attempts}|${progress}`, (db, p: Record<string, unknown>) => {
    let q = db.updateTable('render').set(Object.fromEntries(columns.map((c) => [c, p[`set.${c}`]]))).where('id', '=', p['where.id'] as string);
    if (statuses) q = q.where('status', 'in', Array.from({ length: statuses }, (_, i) => p[`where.status${i}`] as RenderStatus));
    if (attempts) q = q.where('attempts', '<=', p['where.attempts'] as number);
    if (progress) q = q.where('progress', '<', p['where.progress'] as number);
    return q;
  });
  const params: Record<string, unknown> = { 'where.id': id, 'where.attempts': where.attemptsAtMost, 'where.progress': where.progressBelow };
  for (const c of columns) params[`set.${c}`] = values[c];
  where.statusIn?.forEach((status, i) => { params[`where.status${i}`] = status; });
  return (await statement.run(em, params)) > 0;
}

/** A render's transaction on MikroORM: its events in the outbox table, its credits in the ledger. */
class OrmRenderTx implements RenderTx {
  constructor(readonly handle: EntityManager, private readonly credits: CreditsService) {}

  find(id: string): Promise<Render | null> {
    return find(this.handle, id);
  }

  async insert(row: Render): Promise<void> {
    try {
      await renders.insert(this.handle, Render, row);
    } catch (err) {
      throw err instanceof UniqueConstraintViolationException && row.idempotencyKey ? new DuplicateClaim(row.idempotencyKey) : err;
    }
  }

  update(id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean> {
    return update(this.handle, id, set, where);
  }

  /** Counted after the workspace's lock (PostgreSQL's row lock, SQLite's write lock). */
  async countQueued(workspaceId: string): Promise<number> {
    await lockWorkspace(this.handle, workspaceId);
    return Number((await QUEUED.one(this.handle, { workspaceId }))?.n ?? 0);
  }

  async event(row: Render, type: RenderEventType, data: Record<string, unknown>, target?: string | null): Promise<void> {
    await writeEvent(this.handle, row.workspaceId, type, data, { mode: row.mode, target });
  }

  async hold(renderId: string, workspaceId: string, hold: RenderHold): Promise<void> {
    await this.credits.holdIn(this.handle, { ...hold, workspaceId, renderId });
  }

  async settleCredits(renderId: string, how: 'capture' | 'release'): Promise<void> {
    await this.credits.settleIn(this.handle, renderId, how);
  }
}

/** Renders in the application's database (SQLite or PostgreSQL through MikroORM). */
export class OrmRenderRepository implements RenderRepository {
  constructor(private readonly orm: MikroORM, private readonly credits: CreditsService) {}

  transaction<T>(work: (tx: RenderTx) => Promise<T>, workspaceId?: string): Promise<T> {
    const em = workspaceId === undefined ? allWorkspaces(this.orm) : forWorkspace(this.orm, workspaceId);
    return retryBusy(() => em.fork().transactional((tx) => work(new OrmRenderTx(tx, this.credits))));
  }

  get(id: string): Promise<Render | null> {
    return find(allWorkspaces(this.orm), id);
  }

  byKey(workspaceId: string, idempotencyKey: string): Promise<Render | null> {
    return forWorkspace(this.orm, workspaceId).findOne(Render, { idempotencyKey });
  }

  update(id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean> {
    return retryBusy(() => update(allWorkspaces(this.orm), id, set, where));
  }

  async working(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await allWorkspaces(this.orm).find(Render, { id: { $in: [...ids] }, status: { $nin: [...TERMINAL_STATUSES] } }, { fields: ['id'] });
    return new Set(rows.map((r) => r.id));
  }

  /** Stills still working that were created before `before` (their worker and waiting API process died), oldest first. */
  staleStills(before: Date, batch: number): Promise<Render[]> {
    return allWorkspaces(this.orm).find(
      Render,
      { kind: 'image', status: { $in: ['queued', 'fetching', 'rendering', 'saving'] }, createdAt: { $lt: before } },
      { orderBy: { createdAt: 'asc' }, limit: batch },
    );
  }

  /**
   * Deletes the files of renders past `expiresAt` (at most `batch` per call); returns their ids. A
   * failed or cancelled render has no `expiresAt` (no output to hand out) but may have files all the
   * same (a still whose first run stored its file and died; a video that failed while saving): its
   * folder goes when it would have expired, the retention after it was settled. A dashboard preview's
   * record goes with its files: nothing refers to it (no event, no credits, not listed).
   */
  async purgeExpired(storage: Pick<StorageDriver, 'deletePrefix'>, now = new Date(), batch = 500): Promise<string[]> {
    const em = allWorkspaces(this.orm);
    const failedEnd = (kind: Pick<Render, 'mode' | 'preview'>) => ({
      expiresAt: null, ...kind, status: { $in: ['failed', 'cancelled'] as RenderStatus[] }, completedAt: { $lte: new Date(now.getTime() - retentionMs(kind)) },
    });
    const rows = await em.find(Render, {
      purgedAt: null,
      $or: [{ expiresAt: { $lte: now } }, failedEnd({ preview: false, mode: 'live' }), failedEnd({ preview: false, mode: 'test' }), failedEnd({ preview: true, mode: 'test' })],
    }, { orderBy: { completedAt: 'asc' }, limit: batch });
    for (const row of rows) await storage.deletePrefix(renderPrefix(row.id));
    const previews = rows.filter((r) => r.preview).map((r) => r.id);
    const kept = rows.filter((r) => !r.preview).map((r) => r.id);
    if (previews.length) await em.nativeDelete(Render, { id: { $in: previews } });
    if (kept.length) await em.nativeUpdate(Render, { id: { $in: kept } }, { purgedAt: now });
    return rows.map((r) => r.id);
  }
}
