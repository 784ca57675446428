import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { ApiError, type KeyMode } from '#libs/core';
import type { CreditKind, CreditsService } from '#libs/credits';
import { allWorkspaces, entityOf, forWorkspace, queries, retryBusy, type Tables } from '#libs/db';
import { writeEvent } from '#libs/events';
import { renderPrefix, type StorageDriver } from '#libs/storage';
import { lockWorkspace, type PlanCode } from '#libs/workspaces';
import { Render, RENDER_STATUSES, TERMINAL_STATUSES, type RenderErrorInfo, type RenderStatus } from './entities.js';

const renders = queries<Tables<typeof Render>>();

/** A render by its id, whatever its workspace: the worker settles the renders of every workspace by their job's id. */
const RENDER_BY_ID = renders.prepare((db, p: { id: string }) => db.selectFrom('render').selectAll().where('id', '=', p.id), { allWorkspaces: true });

/** A workspace's queued renders (§8 queue depth). */
const QUEUED = renders.prepare((db, p: { workspaceId: string }) => db
  .selectFrom('render').select((eb) => eb.fn.countAll().as('n')).where('workspace_id', '=', p.workspaceId).where('status', '=', 'queued'));

/** Output retention (decisions.md "Plans"): 30 days for live renders, 7 for test renders. */
export const RETENTION_DAYS = { live: 30, test: 7 } as const;

/**
 * A dashboard preview's output and record are kept an hour after it settles: long enough for the form it
 * was drawn for, short enough that a preview per pause in typing does not pile up (decisions.md "Test
 * mode (issue 28): dashboard previews and the mode switch").
 */
export const PREVIEW_RETENTION_MS = 60 * 60_000;

/** How long a settled render's files are kept. */
const retentionMs = (row: Pick<Render, 'mode' | 'preview'>) => (row.preview ? PREVIEW_RETENTION_MS : RETENTION_DAYS[row.mode] * 86_400_000);

/** What a finished render stored (a still's job result satisfies it). */
export interface CompletedOutput {
  key: string;
  width: number;
  height: number;
  sizeBytes: number;
  duration?: number;
  fps?: number;
  posterKey?: string;
  thumbnailKey?: string;
}

/** §8 queue depth of a queued render's claim: at most `max` queued renders in the workspace, this one included. */
export interface QueueDepth {
  max: number;
  /** Named in the 402's message. */
  planName: string;
}

/** A render's credit hold, taken in the transaction that creates it. */
export interface RenderHold {
  plan: PlanCode;
  kind: CreditKind;
  amount: number;
  mode: KeyMode;
}

/**
 * The one owner of a render's status (§3, decisions.md "Render record"): every change — created
 * (the claim), fetching, rendering with progress, saving, back to queued, cancel requested, and the
 * three settled ends — is a method here, and each writes its event (one outbox function, in the
 * same transaction; none for a dashboard preview, which is no part of the workspace's history) and
 * moves its credits (hold at the claim, capture or release at the settle).
 * The API and the workers call it; neither writes render rows itself. Settled renders never change.
 */
export class RenderLifecycle {
  constructor(
    private readonly orm: MikroORM,
    private readonly credits: CreditsService,
    private readonly storage: Pick<StorageDriver, 'url'>,
  ) {}

  /**
   * Creates a render (a still `rendering`, a video `queued` with `render.queued`) and holds its
   * credits, in one transaction with `also` (the template's usage count). The insert claims the
   * idempotency key before anything else: a concurrent duplicate waits on the unique index, then
   * fails (UniqueConstraintViolationException, the caller replays) without touching the balance (on
   * PostgreSQL, a duplicate holding the balance row while waiting on the key deadlocks).
   *
   * `queueDepth` (a queued video): the count of the workspace's queued renders and this insert are
   * one step: counted after the insert under the workspace's lock (`lockWorkspace`: PostgreSQL's row
   * lock, SQLite's write lock), so parallel claims at the last place cannot both see it free; over
   * the depth, 402 LIMIT_QUEUE_DEPTH and nothing is kept (the transaction rolls back).
   */
  claim(row: Render, hold: RenderHold | null, also?: (em: EntityManager) => Promise<void>, queueDepth?: QueueDepth): Promise<Render> {
    return retryBusy(() => forWorkspace(this.orm, row.workspaceId).transactional(async (em) => {
      await renders.insert(em, Render, row);
      if (queueDepth && row.status === 'queued') await this.checkQueueDepth(em, row.workspaceId, queueDepth);
      if (hold) await this.credits.holdIn(em, { ...hold, workspaceId: row.workspaceId, renderId: row.id });
      if (also) await also(em);
      if (row.status === 'queued') await this.event(em, row, 'render.queued');
      return row;
    }));
  }

  private async checkQueueDepth(em: EntityManager, workspaceId: string, depth: QueueDepth): Promise<void> {
    await lockWorkspace(em, workspaceId);
    const queued = Number((await QUEUED.one(em, { workspaceId }))?.n ?? 0);
    if (queued > depth.max) {
      throw new ApiError('LIMIT_QUEUE_DEPTH', `${queued - 1} renders are already waiting; the ${depth.planName} plan queues up to ${depth.max}`);
    }
  }

  /**
   * §3 cancel, asked by the caller: a queued render is cancelled at once (credits released,
   * `render.cancelled`); a working one is flagged `cancelRequested` and its worker settles it at the
   * next stage; a settled one is 409 ALREADY_SETTLED.
   */
  async cancel(workspaceId: string, id: string): Promise<{ render: Render; immediate: boolean }> {
    const settled = (row: Render) => new ApiError('ALREADY_SETTLED', `Render ${id} is already ${row.status}`, { data: { id, status: row.status } });
    const cancelled = await this.settle(id, 'release', 'render.cancelled', (_row, now) => ({ status: 'cancelled', cancelRequested: true, completedAt: now }), { stage: 'queued' }, { workspaceId, onlyFrom: ['queued'] });
    if (!cancelled) throw new ApiError('RENDER_NOT_FOUND', `Render ${id} does not exist`);
    if (cancelled.changed) return { render: cancelled.row, immediate: true };
    if (TERMINAL_STATUSES.includes(cancelled.row.status)) throw settled(cancelled.row);
    await forWorkspace(this.orm, workspaceId).nativeUpdate(Render, { id, status: { $nin: [...TERMINAL_STATUSES] } }, { cancelRequested: true, updatedAt: new Date() });
    const row = await forWorkspace(this.orm, workspaceId).findOneOrFail(Render, { id });
    // Settled in between: by this cancel's worker (answered as cancelled) or otherwise (409).
    if (TERMINAL_STATUSES.includes(row.status) && !row.cancelRequested) throw settled(row);
    return { render: row, immediate: TERMINAL_STATUSES.includes(row.status) };
  }

  /** Settles a render as done: output recorded, credits captured and `render.completed` written together. */
  complete(id: string, out: CompletedOutput): Promise<Render> {
    return this.settleWorking(id, 'capture', 'render.completed', (row, now) => {
      const set: Partial<Render> = {
        status: 'done', outputKey: out.key, width: out.width, height: out.height, fileSizeBytes: out.sizeBytes,
        renderTime: now.getTime() - row.createdAt.getTime(), progress: 1, completedAt: now,
        expiresAt: new Date(now.getTime() + retentionMs(row)),
      };
      if (out.duration !== undefined) set.duration = out.duration;
      if (out.fps !== undefined) set.fps = out.fps;
      if (out.posterKey !== undefined) set.posterKey = out.posterKey;
      if (out.thumbnailKey !== undefined) set.thumbnailKey = out.thumbnailKey;
      return set;
    });
  }

  /** Settles a render as failed: error recorded, credits released and `render.failed` written together. */
  fail(id: string, error: RenderErrorInfo): Promise<Render> {
    return this.settleWorking(id, 'release', 'render.failed', (_row, now) => ({ status: 'failed', error, completedAt: now }));
  }

  /**
   * Settles a render whose job could not be added (Redis went away between the claim and the
   * enqueue): failed, credits released and `render.failed` written together, as `fail`, and its
   * idempotency key freed, so that the caller's retry with the same key renders afresh.
   */
  notQueued(id: string, error: RenderErrorInfo): Promise<Render> {
    return this.settleWorking(id, 'release', 'render.failed', (_row, now) => ({ status: 'failed', error, completedAt: now, idempotencyKey: null, requestHash: null }));
  }

  /** Settles a render its worker stopped on its cancel request: credits released and `render.cancelled` written together. */
  settleCancelled(id: string, stage: string): Promise<Render> {
    return this.settleWorking(id, 'release', 'render.cancelled', (_row, now) => ({ status: 'cancelled', cancelRequested: true, completedAt: now }), { stage });
  }

  /** Fails a render whose worker died for good (WORKER_LOST): credits released, `render.failed`. */
  lost(id: string, message: string, stage: string): Promise<Render> {
    return this.fail(id, { code: 'WORKER_LOST', message, stage });
  }

  private async settleWorking(...args: Parameters<RenderLifecycle['settle']>): Promise<Render> {
    const settled = await this.settle(...args);
    if (!settled) throw new Error(`Render ${args[0]} does not exist`);
    return settled.row;
  }

  /**
   * One settle: the record's change, its event and the credits' capture or release commit together,
   * once. The change is a conditional update that locks the row: of two settles at once (chunks of
   * one render on two workers; PostgreSQL runs their transactions side by side) the second waits,
   * finds the render settled and returns it as it is, writing nothing (`changed` false). `scope`
   * limits it to a workspace's render and to some statuses (a cancel settles only a queued render).
   * Hand-written statements: the hot path of every render (libs/db queries).
   */
  private settle(
    id: string, credit: 'capture' | 'release', type: 'render.completed' | 'render.failed' | 'render.cancelled',
    change: (row: Render, now: Date) => Partial<Render>, extra: Record<string, unknown> = {},
    scope: { workspaceId?: string; onlyFrom?: readonly RenderStatus[] } = {},
  ): Promise<{ row: Render; changed: boolean } | null> {
    const em0 = scope.workspaceId === undefined ? allWorkspaces(this.orm) : forWorkspace(this.orm, scope.workspaceId);
    return retryBusy(() => em0.fork().transactional(async (em) => {
      const now = new Date();
      const row = await this.find(em, id);
      if (!row || (scope.workspaceId !== undefined && row.workspaceId !== scope.workspaceId)) return null;
      const from = scope.onlyFrom ?? RENDER_STATUSES.filter((s) => !TERMINAL_STATUSES.includes(s));
      if (!from.includes(row.status)) return { row, changed: false };
      const set = { ...change(row, now), updatedAt: now };
      const won = await renders.run(em, (db) => db.updateTable('render').set(renders.columns(em, Render, set)).where('id', '=', id).where('status', 'in', from));
      if (won === 0) return { row: await this.read(em, id), changed: false };
      Object.assign(row, set);
      await this.event(em, row, type, extra, row.callback);
      await this.credits.settleIn(em, id, credit);
      return { row, changed: true };
    }));
  }

  /**
   * A render's event, in the caller's transaction, in the render's mode (its `livemode`); `target` is its
   * callback. None for a dashboard preview: it is no part of the workspace's history.
   */
  private async event(
    em: EntityManager, row: Render, type: 'render.queued' | 'render.started' | 'render.completed' | 'render.failed' | 'render.cancelled',
    extra: Record<string, unknown> = {}, target?: string | null,
  ): Promise<void> {
    if (row.preview) return;
    await writeEvent(em, row.workspaceId, type, { ...this.eventData(row), ...extra }, { mode: row.mode, target });
  }

  private async read(em: EntityManager, id: string): Promise<Render> {
    const found = await this.find(em, id);
    if (!found) throw new Error(`Render ${id} does not exist`);
    return found;
  }

  /** A render by id, unmanaged (one statement). */
  async find(em: EntityManager, id: string): Promise<Render | null> {
    const found = await RENDER_BY_ID.one(em, { id });
    return found ? entityOf(em, Render, found) : null;
  }

  /** A worker takes a queued render: `fetching`, `startedAt`, `render.started` (only from queued). */
  async start(id: string, attempt: number): Promise<Render | null> {
    return retryBusy(() => allWorkspaces(this.orm).transactional(async (em) => {
      const row = await em.findOneOrFail(Render, { id });
      if (TERMINAL_STATUSES.includes(row.status)) return null;
      const first = row.startedAt === null || row.startedAt === undefined;
      Object.assign(row, { status: 'fetching' satisfies RenderStatus, startedAt: row.startedAt ?? new Date(), attempts: attempt, progress: 0 });
      await em.flush();
      if (first) await this.event(em, row, 'render.started');
      return row;
    }));
  }

  /**
   * The edit as the worker resolved it before drawing (captions transcribed into files): stored so
   * every chunk and every later run reads the same one. Only while the render is working.
   */
  async resolvedEdit(id: string, edit: Record<string, unknown>): Promise<void> {
    await retryBusy(() => allWorkspaces(this.orm).nativeUpdate(Render, { id, status: { $nin: [...TERMINAL_STATUSES] } }, { edit, updatedAt: new Date() }));
  }

  /** A render by id as the worker reads it, whatever its workspace (null when it does not exist). */
  async get(id: string): Promise<Render | null> {
    return allWorkspaces(this.orm).findOne(Render, { id });
  }

  /** Whether a working render should stop: its cancel was requested, or it was settled elsewhere. */
  async shouldStop(id: string): Promise<boolean> {
    const row = await allWorkspaces(this.orm).findOne(Render, { id }, { fields: ['cancelRequested', 'status'] });
    return !row || row.cancelRequested || TERMINAL_STATUSES.includes(row.status);
  }

  /** `rendering` with progress 0..1, rising only (a late, lower figure of another chunk changes nothing); true when it moved. */
  async progress(id: string, progress: number): Promise<boolean> {
    const moved = await allWorkspaces(this.orm).nativeUpdate(
      Render,
      { id, status: { $in: ['fetching', 'rendering'] }, progress: { $lt: progress } },
      { status: 'rendering', progress: Math.round(progress * 1000) / 1000, updatedAt: new Date() },
    );
    return moved > 0;
  }

  /** `saving`: the renderer is done and the files are being stored (only while working). */
  async saving(id: string): Promise<void> {
    await retryBusy(() => allWorkspaces(this.orm).nativeUpdate(Render, { id, status: { $nin: [...TERMINAL_STATUSES] } }, { status: 'saving', progress: 1, updatedAt: new Date() }));
  }

  /**
   * Back to `queued` (progress 0): run `ended` died with its worker or failed, and another run will
   * take it. Only while the record still shows that run: the next run may already have started
   * (a stalled job is handed to a worker in the same step that reports it stalled), and its
   * `fetching`/`rendering` must not be overwritten by the news of the run before.
   */
  async requeue(id: string, ended: number): Promise<void> {
    await retryBusy(() => allWorkspaces(this.orm).nativeUpdate(
      Render,
      { id, status: { $nin: [...TERMINAL_STATUSES] }, attempts: { $lte: ended } },
      { status: 'queued', progress: 0, updatedAt: new Date() },
    ));
  }

  private url(key: string | null | undefined, row: Render): string | null {
    return key && !row.purgedAt ? this.storage.url(key) : null;
  }

  /** §6 default payload of render events. */
  eventData(row: Render): Record<string, unknown> {
    const data: Record<string, unknown> = {
      id: row.id, status: row.status, kind: row.kind, templateId: row.templateId, url: this.url(row.outputKey, row),
      posterUrl: this.url(row.posterKey, row), thumbnailUrl: this.url(row.thumbnailKey, row), format: row.format,
      width: row.width, height: row.height, duration: row.duration, fileSizeBytes: row.fileSizeBytes, renderTime: row.renderTime,
      credits: row.status === 'done' ? row.credits : 0, watermarked: row.watermarked,
    };
    if (row.expiresAt) data.expiresAt = row.expiresAt.toISOString();
    if (row.error) data.error = row.error;
    return data;
  }
}

/**
 * Deletes the files of renders past `expiresAt` (at most `batch` per call); returns their ids. A
 * failed or cancelled render has no `expiresAt` (no output to hand out) but may have files all the
 * same (a still whose first run stored its file and died; a video that failed while saving): its
 * folder goes when it would have expired, the retention after it was settled. A dashboard preview's
 * record goes with its files: nothing refers to it (no event, no credits, not listed).
 */
export async function purgeExpired(orm: MikroORM, storage: Pick<StorageDriver, 'deletePrefix'>, now = new Date(), batch = 500): Promise<string[]> {
  const em = allWorkspaces(orm);
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

/** A chunked render's folder of chunk files in storage: `work/chunks/<renderId>-<token>/` (apps/worker video-jobs.ts `chunkFolder`). */
const CHUNK_FOLDER = /^work\/chunks\/([^/-]+)-[^/]+\//;

/**
 * Removes the chunk folders in storage of renders that are settled (or gone): a chunked render's
 * files are deleted when it settles, but a worker killed while storing a chunk, or a chunk finishing
 * after its render was cancelled, leaves them behind. A render still working keeps its folder, on any
 * machine. Answers the folders removed.
 */
export async function sweepChunkFolders(orm: MikroORM, storage: Pick<StorageDriver, 'list' | 'deletePrefix'>): Promise<string[]> {
  const folders = new Map<string, string>();
  for await (const file of storage.list('work/chunks/')) {
    const m = CHUNK_FOLDER.exec(file.key);
    if (m) folders.set(m[0], m[1]!);
  }
  if (!folders.size) return [];
  const ids = [...new Set(folders.values())];
  const working = new Set((await allWorkspaces(orm).find(Render, { id: { $in: ids }, status: { $nin: [...TERMINAL_STATUSES] } }, { fields: ['id'] })).map((r) => r.id));
  const removed: string[] = [];
  for (const [folder, renderId] of folders) {
    if (working.has(renderId)) continue;
    await storage.deletePrefix(folder);
    removed.push(folder);
  }
  return removed;
}

/** A still still working after this long lost its worker (a still takes well under a minute). */
export const LOST_STILL_AFTER_MS = 5 * 60_000;

/**
 * Settles stills whose worker and waiting API process both died (status still working long after
 * creation) as failed `WORKER_LOST`, releasing their credits. Video renders are retried by their
 * queue instead.
 */
export async function failLostStills(orm: MikroORM, lifecycle: RenderLifecycle, now = new Date(), batch = 500): Promise<string[]> {
  const rows = await allWorkspaces(orm).find(
    Render,
    { kind: 'image', status: { $in: ['queued', 'fetching', 'rendering', 'saving'] }, createdAt: { $lt: new Date(now.getTime() - LOST_STILL_AFTER_MS) } },
    { orderBy: { createdAt: 'asc' }, limit: batch },
  );
  for (const row of rows) {
    await lifecycle.lost(row.id, 'The worker drawing this still stopped; the credit was released', row.status);
  }
  return rows.map((r) => r.id);
}
