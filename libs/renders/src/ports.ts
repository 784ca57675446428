import type { KeyMode } from '#libs/core';
import type { Plan, PlanCode } from '#libs/workspaces';
import type { CreditKind } from '#libs/credits';
import type { EditSpec } from '#libs/edit-spec';
import type { StillOutput, StillRenderOptions } from '#libs/still';
import type { VideoChunk, VideoOutput, VideoRenderOptions, ChunkOptions } from '#libs/video';
import type { Render, RenderStatus } from './entities.js';

/*
 * What a render's rules need from the world, in the rules' words (docs/architecture.md "A render's
 * life"). Each port has one production adapter (libs/renders/src/adapters: MikroORM, Redis, BullMQ;
 * the engines of libs/still and libs/video) and one in memory (test/fakes/renders.ts), with which
 * whole-life.spec.ts runs a render's whole life in milliseconds.
 */

/** The render events a lifecycle step writes. */
export type RenderEventType = 'render.queued' | 'render.started' | 'render.completed' | 'render.failed' | 'render.cancelled';

/** Which rows a conditional update may change: all of the given conditions hold. */
export interface RenderWhere {
  /** Only a render in one of these statuses. */
  statusIn?: readonly RenderStatus[];
  /** Only while the record shows at most this run. */
  attemptsAtMost?: number;
  /** Only when the stored progress is below this. */
  progressBelow?: number;
}

/** A render's credit hold, taken in the transaction that creates it. */
export interface RenderHold {
  plan: PlanCode;
  kind: CreditKind;
  amount: number;
  mode: KeyMode;
}

/** One transaction over a render and what moves with it: its events and its credits. */
export interface RenderTx {
  find(id: string): Promise<Render | null>;
  /** Claims the row's idempotency key: a duplicate (same workspace and key) rejects with DuplicateClaim. */
  insert(row: Render): Promise<void>;
  /** A conditional update: true when the row changed. */
  update(id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean>;
  /** The workspace's queued renders, counted under the workspace's lock (parallel claims at the last place see each other). */
  countQueued(workspaceId: string): Promise<number>;
  /** Writes the event to the workspace's outbox, in the render's mode; `target` is the render's callback. */
  event(row: Render, type: RenderEventType, data: Record<string, unknown>, target?: string | null): Promise<void>;
  hold(renderId: string, workspaceId: string, hold: RenderHold): Promise<void>;
  /** Captures or releases the render's held credits, once. */
  settleCredits(renderId: string, how: 'capture' | 'release'): Promise<void>;
  /** The store's own handle (an EntityManager for MikroORM), for a caller's work in the same transaction. */
  readonly handle: unknown;
}

/** A claim whose idempotency key another render of the workspace already holds (the store's unique index). */
export class DuplicateClaim extends Error {
  constructor(readonly idempotencyKey: string) {
    super(`Idempotency key ${idempotencyKey} is already claimed`);
    this.name = 'DuplicateClaim';
  }
}

/** Where renders are kept (libs/renders adapters/orm-renders.ts). */
export interface RenderRepository {
  /** The workspace's render that claimed the idempotency key, if any. */
  byKey(workspaceId: string, idempotencyKey: string): Promise<Render | null>;
  /** Runs `work` in one transaction (retried whole while the database is busy); `workspaceId` scopes it. */
  transaction<T>(work: (tx: RenderTx) => Promise<T>, workspaceId?: string): Promise<T>;
  /** A render by id, whatever its workspace (the workers settle every workspace's renders by their job's id). */
  get(id: string): Promise<Render | null>;
  /** A conditional update outside any transaction: true when the row changed. */
  update(id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean>;
  /** Of these renders, the ids still working (not settled). */
  working(ids: readonly string[]): Promise<Set<string>>;
}

/** The workspace's concurrent-render slots (§8: over the plan's allowance a render waits, never fails). */
export interface SlotLeases {
  /** Takes (or keeps) the render's slot when fewer than `limit` renders of the workspace hold one. */
  take(workspaceId: string, renderId: string, limit: number): Promise<boolean>;
  /** Renews the lease of a running render (a dead worker's lapses and frees the slot). */
  renew(workspaceId: string, renderId: string): Promise<void>;
  release(workspaceId: string, renderId: string): Promise<void>;
}

/** A chunk job of a chunked render: its frames of the whole. */
export interface ChunkJob {
  index: number;
  from: number;
  to: number;
  totalFrames: number;
}

/** The video queue as the rules use it: the chunk flow of a long render, and its chunks' shared state. */
export interface JobQueue {
  /**
   * Adds the flow: a combine job that starts once every chunk job is done. Job ids derive from the
   * render, so a rerun after a crash adds nothing twice.
   */
  startChunks(renderId: string, token: string, chunks: readonly ChunkJob[]): Promise<void>;
  /** The render's chunk token (the unguessable part of its chunk folder): made once, the same on every rerun. */
  chunkToken(renderId: string): Promise<string>;
  /** Records a chunk's frames drawn; answers the frames drawn by all chunks of the render. */
  chunkFrames(renderId: string, index: number, frames: number): Promise<number>;
  /** Forgets a render's chunk progress and token. */
  forgetChunks(renderId: string): Promise<void>;
}

/** Where outputs and chunk files are kept (libs/storage), as files of this machine. */
export interface Storage {
  putFile(key: string, file: string, contentType?: string): Promise<void>;
  putBytes(key: string, bytes: Buffer, contentType: string): Promise<{ key: string; sizeBytes: number }>;
  getFile(key: string, file: string): Promise<void>;
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
  list(prefix: string): AsyncIterable<{ key: string }>;
  url(key: string): string;
}

/** A job's own folder of this machine for its files (a killed worker's are swept). */
export interface Scratch {
  folder(prefix: string): Promise<string>;
  remove(paths: readonly string[]): Promise<void>;
}

/** The still renderer (libs/still). */
export interface StillEngine {
  render(edit: EditSpec, opts: StillRenderOptions): Promise<StillOutput>;
}

/** The video renderer (libs/video: Remotion and Chromium). */
export interface VideoEngine {
  render(edit: EditSpec, opts: VideoRenderOptions): Promise<VideoOutput>;
  renderChunk(edit: EditSpec, opts: ChunkOptions): Promise<VideoChunk>;
  combine(edit: EditSpec, chunks: readonly VideoChunk[], opts: Omit<VideoRenderOptions, 'frameRange' | 'scale'>): Promise<VideoOutput>;
}

/** The only read of a workspace's plan (libs/workspaces). */
export interface WorkspacePlans {
  planOf(workspaceId: string): Promise<Plan>;
}

/** Time, as the rules see it: the test's clock moves only when the test says. */
export interface Clock {
  now(): number;
  /** Calls `tick` every `ms` until the returned stop is called. */
  every(ms: number, tick: () => void): () => void;
}

/** The clock of a running process. */
export const systemClock: Clock = {
  now: () => Date.now(),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    return () => clearInterval(timer);
  },
};
