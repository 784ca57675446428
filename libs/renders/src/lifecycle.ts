import { Logger } from '@nestjs/common';
import { ApiError, metrics } from '#libs/core';
import type { StorageDriver } from '#libs/storage';
import { RENDER_STATUSES, TERMINAL_STATUSES, type Render, type RenderErrorInfo, type RenderStatus } from './entities.js';
import { STILL_TIMEOUT_MS } from '#libs/queue';
import { renderFailure } from './errors.js';
import { DuplicateClaim, type RenderEventType, type RenderHold, type RenderRepository, type RenderTx } from './ports.js';

/** Output retention (decisions.md "Plans"): 30 days for live renders, 7 for test renders. */
export const RETENTION_DAYS = { live: 30, test: 7 } as const;

/**
 * A dashboard preview's output and record are kept an hour after it settles: long enough for the form it
 * was drawn for, short enough that a preview per pause in typing does not pile up (decisions.md "Test
 * mode (issue 28): dashboard previews and the mode switch").
 */
export const PREVIEW_RETENTION_MS = 60 * 60_000;

/** How long a settled render's files are kept. */
export const retentionMs = (row: Pick<Render, 'mode' | 'preview'>) => (row.preview ? PREVIEW_RETENTION_MS : RETENTION_DAYS[row.mode] * 86_400_000);

/** The statuses of a render still working. */
const WORKING: readonly RenderStatus[] = RENDER_STATUSES.filter((s) => !TERMINAL_STATUSES.includes(s));

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

/**
 * The one owner of a render's status (§3, decisions.md "Render record"): every change — created
 * (the claim), fetching, rendering with progress, saving, back to queued, cancel requested, and the
 * three settled ends — is a method here, and each writes its event (in the same transaction; none
 * for a dashboard preview, which is no part of the workspace's history) and moves its credits (hold
 * at the claim, capture or release at the settle). The rules only: where renders are kept is the
 * RenderRepository port (MikroORM in production, memory in whole-life.spec.ts).
 * The API and the workers call it; neither writes render rows itself. Settled renders never change.
 */
export class RenderLifecycle {
  constructor(
    private readonly renders: RenderRepository,
    private readonly storage: Pick<StorageDriver, 'url'>,
  ) {}

  /**
   * Creates a render (a still `rendering`, a video `queued` with `render.queued`) and holds its
   * credits, in one transaction with `also` (the template's usage count, given the store's
   * transaction handle). The insert claims the idempotency key before anything else: a concurrent
   * duplicate waits on the unique index, then fails without touching the balance (on PostgreSQL, a
   * duplicate holding the balance row while waiting on the key deadlocks) and answers with the
   * winner's render (`replayed`, §1.4).
   *
   * `queueDepth` (a queued video): the count of the workspace's queued renders and this insert are
   * one step: counted after the insert under the workspace's lock, so parallel claims at the last
   * place cannot both see it free; over the depth, 402 LIMIT_QUEUE_DEPTH and nothing is kept (the
   * transaction rolls back).
   */
  async claim(row: Render, hold: RenderHold | null, also?: (handle: unknown) => Promise<void>, queueDepth?: QueueDepth): Promise<{ render: Render; replayed: boolean }> {
    try {
      return { render: await this.insert(row, hold, also, queueDepth), replayed: false };
    } catch (err) {
      // The same key claimed by a concurrent request: its render is the answer (§1.4).
      const winner = err instanceof DuplicateClaim ? await this.renders.byKey(row.workspaceId, err.idempotencyKey) : null;
      if (!winner) throw err;
      return { render: await this.replay(winner, row.requestHash), replayed: true };
    }
  }

  /**
   * The answer to a retry (§1.4) with an idempotency key already claimed, or null when it is not: the
   * original render, after it settles when a still is still being drawn; 422 IDEMPOTENCY_KEY_REUSED
   * when the key came with another body (`hash`, the request's).
   */
  async replayed(workspaceId: string, idempotencyKey: string, hash: string): Promise<Render | null> {
    const prior = await this.renders.byKey(workspaceId, idempotencyKey);
    return prior ? this.replay(prior, hash) : null;
  }

  private async replay(prior: Render, hash: string | null | undefined): Promise<Render> {
    if (prior.requestHash !== hash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', `Idempotency key already used for another request (render ${prior.id}); use a new key for a new render`, { data: { id: prior.id } });
    }
    let row = prior;
    const deadline = Date.now() + STILL_TIMEOUT_MS + 5_000;
    while (row.kind === 'image' && !TERMINAL_STATUSES.includes(row.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      row = await this.read(row.id);
    }
    if (row.status === 'failed') throw renderFailure(row);
    return row;
  }

  private insert(row: Render, hold: RenderHold | null, also?: (handle: unknown) => Promise<void>, queueDepth?: QueueDepth): Promise<Render> {
    return this.renders.transaction(async (tx) => {
      await tx.insert(row);
      if (queueDepth && row.status === 'queued') {
        const queued = await tx.countQueued(row.workspaceId);
        if (queued > queueDepth.max) {
          throw new ApiError('LIMIT_QUEUE_DEPTH', `${queued - 1} renders are already waiting; the ${queueDepth.planName} plan queues up to ${queueDepth.max}`);
        }
      }
      if (hold) await tx.hold(row.id, row.workspaceId, hold);
      if (also) await also(tx.handle);
      if (row.status === 'queued') await this.event(tx, row, 'render.queued');
      return row;
    }, row.workspaceId);
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
    await this.renders.update(id, { cancelRequested: true, updatedAt: new Date() }, { statusIn: WORKING });
    const row = await this.read(id);
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
   */
  private settle(
    id: string, credit: 'capture' | 'release', type: 'render.completed' | 'render.failed' | 'render.cancelled',
    change: (row: Render, now: Date) => Partial<Render>, extra: Record<string, unknown> = {},
    scope: { workspaceId?: string; onlyFrom?: readonly RenderStatus[] } = {},
  ): Promise<{ row: Render; changed: boolean } | null> {
    return this.renders.transaction(async (tx) => {
      const now = new Date();
      const row = await tx.find(id);
      if (!row || (scope.workspaceId !== undefined && row.workspaceId !== scope.workspaceId)) return null;
      const from = scope.onlyFrom ?? WORKING;
      if (!from.includes(row.status)) return { row, changed: false };
      const set = { ...change(row, now), updatedAt: now };
      if (!(await tx.update(id, set, { statusIn: from }))) {
        const found = await tx.find(id);
        if (!found) throw new Error(`Render ${id} does not exist`);
        return { row: found, changed: false };
      }
      Object.assign(row, set);
      await this.event(tx, row, type, extra, row.callback);
      await tx.settleCredits(id, credit);
      return { row, changed: true };
    }, scope.workspaceId).then((settled) => {
      if (settled?.changed) countSettled(settled.row);
      return settled;
    });
  }

  /**
   * A render's event, in the caller's transaction, in the render's mode (its `livemode`); `target` is its
   * callback. None for a dashboard preview: it is no part of the workspace's history.
   */
  private async event(tx: RenderTx, row: Render, type: RenderEventType, extra: Record<string, unknown> = {}, target?: string | null): Promise<void> {
    if (row.preview) return;
    await tx.event(row, type, { ...this.eventData(row), ...extra }, target);
  }

  private async read(id: string): Promise<Render> {
    const found = await this.renders.get(id);
    if (!found) throw new Error(`Render ${id} does not exist`);
    return found;
  }

  /** A worker takes a queued render: `fetching`, `startedAt`, `render.started` (only from queued). */
  async start(id: string, attempt: number): Promise<Render | null> {
    return this.renders.transaction(async (tx) => {
      const row = await tx.find(id);
      if (!row) throw new Error(`Render ${id} does not exist`);
      if (TERMINAL_STATUSES.includes(row.status)) return null;
      const first = row.startedAt === null || row.startedAt === undefined;
      const set: Partial<Render> = { status: 'fetching', startedAt: row.startedAt ?? new Date(), attempts: attempt, progress: 0, updatedAt: new Date() };
      if (!(await tx.update(id, set, { statusIn: WORKING }))) return null;
      Object.assign(row, set);
      if (first) await this.event(tx, row, 'render.started');
      return row;
    });
  }

  /**
   * The edit as the worker resolved it before drawing (captions transcribed into files): stored so
   * every chunk and every later run reads the same one. Only while the render is working.
   */
  async resolvedEdit(id: string, edit: Record<string, unknown>): Promise<void> {
    await this.renders.update(id, { edit, updatedAt: new Date() }, { statusIn: WORKING });
  }

  /** A render by id as the workers read it, whatever its workspace (null when it does not exist). */
  get(id: string): Promise<Render | null> {
    return this.renders.get(id);
  }

  /** Whether a working render should stop: its cancel was requested, or it was settled elsewhere. */
  async shouldStop(id: string): Promise<boolean> {
    const row = await this.renders.get(id);
    return !row || row.cancelRequested || TERMINAL_STATUSES.includes(row.status);
  }

  /** `rendering` with progress 0..1, rising only (a late, lower figure of another chunk changes nothing); true when it moved. */
  progress(id: string, progress: number): Promise<boolean> {
    return this.renders.update(
      id,
      { status: 'rendering', progress: Math.round(progress * 1000) / 1000, updatedAt: new Date() },
      { statusIn: ['fetching', 'rendering'], progressBelow: progress },
    );
  }

  /** `saving`: the renderer is done and the files are being stored (only while working). */
  async saving(id: string): Promise<void> {
    await this.renders.update(id, { status: 'saving', progress: 1, updatedAt: new Date() }, { statusIn: WORKING });
  }

  /**
   * Back to `queued` (progress 0): run `ended` died with its worker or failed, and another run will
   * take it. Only while the record still shows that run: the next run may already have started
   * (a stalled job is handed to a worker in the same step that reports it stalled), and its
   * `fetching`/`rendering` must not be overwritten by the news of the run before.
   */
  async requeue(id: string, ended: number): Promise<void> {
    await this.renders.update(id, { status: 'queued', progress: 0, updatedAt: new Date() }, { statusIn: WORKING, attemptsAtMost: ended });
  }

  /**
   * The renders of stills whose worker and waiting API process both died (`stale`: still working long
   * after creation), settled failed WORKER_LOST with their credits released. Video renders are
   * retried by their queue instead.
   */
  async failLostStills(stale: readonly Render[]): Promise<string[]> {
    for (const row of stale) await this.lost(row.id, 'The worker drawing this still stopped; the credit was released', row.status);
    return stale.map((r) => r.id);
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

const log = new Logger('renders');

/** A settled render in the process's metrics (issue 30): its outcome and its time from acceptance, by kind and format. */
function countSettled(row: Render): void {
  log.log(`render ${row.id} ${row.status}${row.error ? ` (${row.error.code} at ${row.error.stage}: ${row.error.message})` : ''}`);
  const labels = { kind: row.kind, format: row.format, outcome: row.status };
  const m = metrics();
  m.renders.inc(labels);
  if (row.completedAt) m.renderDuration.observe(labels, Math.max(0, (row.completedAt.getTime() - row.createdAt.getTime()) / 1000));
}
