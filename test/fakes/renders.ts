/**
 * The render pipeline's ports in memory (libs/renders ports.ts): a render's whole life runs on these
 * in milliseconds (libs/renders whole-life.spec.ts). Each keeps what a test asserts on: the rows, the
 * events written, the credit ledger, the slots, the chunk flows, the files stored and removed.
 */
import { VideoRenderCancelled, type ChunkOptions, type VideoChunk, type VideoOutput, type VideoRenderOptions } from '#libs/video';
import type { StillOutput } from '#libs/still';
import type { EditSpec } from '#libs/edit-spec';
import {
  DuplicateClaim, TERMINAL_STATUSES,
  type ChunkJob, type Clock, type JobQueue, type Render, type RenderEventType, type RenderHold, type RenderRepository, type RenderTx,
  type RenderWhere, type Scratch, type SlotLeases, type StillEngine, type Storage, type VideoEngine,
} from '#libs/renders';

/** An event as the outbox would hold it. */
export interface WrittenEvent {
  renderId: string;
  type: RenderEventType;
  mode: Render['mode'];
  target: string | null | undefined;
  data: Record<string, unknown>;
}

/** A line of the credit ledger: a hold, or its capture or release. */
export type LedgerLine = { renderId: string; phase: 'hold'; amount: number; kind: string } | { renderId: string; phase: 'capture' | 'release'; amount: number };

interface State {
  rows: Map<string, Render>;
  events: WrittenEvent[];
  ledger: LedgerLine[];
}

const copy = (state: State): State => ({ rows: new Map([...state.rows].map(([id, r]) => [id, structuredClone(r)])), events: [...state.events], ledger: [...state.ledger] });

function matches(row: Render, where: RenderWhere): boolean {
  if (where.statusIn && !where.statusIn.includes(row.status)) return false;
  if (where.attemptsAtMost !== undefined && row.attempts > where.attemptsAtMost) return false;
  if (where.progressBelow !== undefined && !(Number(row.progress) < where.progressBelow)) return false;
  return true;
}

/**
 * Renders, their events and credits in memory. A transaction works on a copy and commits it whole,
 * or leaves nothing when it throws (a claim over the queue depth keeps no row, hold or event).
 */
export class MemoryRenders implements RenderRepository {
  private state: State = { rows: new Map(), events: [], ledger: [] };

  get events(): readonly WrittenEvent[] {
    return this.state.events;
  }

  get ledger(): readonly LedgerLine[] {
    return this.state.ledger;
  }

  /** The events of one render, by type, in order. */
  eventsOf(renderId: string): RenderEventType[] {
    return this.state.events.filter((e) => e.renderId === renderId).map((e) => e.type);
  }

  /** The credit lines of one render. */
  creditsOf(renderId: string): string[] {
    return this.state.ledger.filter((l) => l.renderId === renderId).map((l) => `${l.phase} ${l.amount}`);
  }

  row(id: string): Render {
    const row = this.state.rows.get(id);
    if (!row) throw new Error(`no render ${id}`);
    return structuredClone(row);
  }

  async transaction<T>(work: (tx: RenderTx) => Promise<T>, workspaceId?: string): Promise<T> {
    const draft = copy(this.state);
    const result = await work(new MemoryTx(draft, workspaceId));
    this.state = draft;
    return result;
  }

  async get(id: string): Promise<Render | null> {
    const row = this.state.rows.get(id);
    return row ? structuredClone(row) : null;
  }

  async byKey(workspaceId: string, idempotencyKey: string): Promise<Render | null> {
    const row = [...this.state.rows.values()].find((r) => r.workspaceId === workspaceId && r.idempotencyKey === idempotencyKey);
    return row ? structuredClone(row) : null;
  }

  async update(id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean> {
    return update(this.state, id, set, where);
  }

  async working(ids: readonly string[]): Promise<Set<string>> {
    return new Set(ids.filter((id) => {
      const row = this.state.rows.get(id);
      return row && !TERMINAL_STATUSES.includes(row.status);
    }));
  }
}

function update(state: State, id: string, set: Partial<Render>, where: RenderWhere): boolean {
  const row = state.rows.get(id);
  if (!row || !matches(row, where)) return false;
  Object.assign(row, structuredClone(set));
  return true;
}

class MemoryTx implements RenderTx {
  readonly handle = undefined;

  private readonly state: State;
  private readonly workspaceId: string | undefined;

  constructor(state: State, workspaceId?: string) {
    this.state = state;
    this.workspaceId = workspaceId;
  }

  async find(id: string): Promise<Render | null> {
    const row = this.state.rows.get(id);
    return row && (this.workspaceId === undefined || row.workspaceId === this.workspaceId) ? structuredClone(row) : null;
  }

  async insert(row: Render): Promise<void> {
    const taken = row.idempotencyKey !== null && [...this.state.rows.values()].some((r) => r.workspaceId === row.workspaceId && r.idempotencyKey === row.idempotencyKey);
    if (taken) throw new DuplicateClaim(row.idempotencyKey!);
    this.state.rows.set(row.id, structuredClone(row));
  }

  async update(id: string, set: Partial<Render>, where: RenderWhere): Promise<boolean> {
    return update(this.state, id, set, where);
  }

  async countQueued(workspaceId: string): Promise<number> {
    return [...this.state.rows.values()].filter((r) => r.workspaceId === workspaceId && r.status === 'queued').length;
  }

  async event(row: Render, type: RenderEventType, data: Record<string, unknown>, target?: string | null): Promise<void> {
    this.state.events.push({ renderId: row.id, type, mode: row.mode, target, data });
  }

  async hold(renderId: string, _workspaceId: string, hold: RenderHold): Promise<void> {
    if (hold.mode === 'test') return;
    this.state.ledger.push({ renderId, phase: 'hold', amount: hold.amount, kind: hold.kind });
  }

  /** Once per render: a second settle finds nothing held. */
  async settleCredits(renderId: string, how: 'capture' | 'release'): Promise<void> {
    const lines = this.state.ledger.filter((l) => l.renderId === renderId);
    const held = lines.find((l) => l.phase === 'hold');
    if (!held || lines.some((l) => l.phase !== 'hold')) return;
    this.state.ledger.push({ renderId, phase: how, amount: held.amount });
  }
}

/** A clock that moves only when the test says: `advance` runs the ticks that fall due. */
export class ManualClock implements Clock {
  private time = Date.UTC(2026, 10, 28, 12);
  private readonly timers = new Set<{ every: number; next: number; tick: () => void }>();

  now(): number {
    return this.time;
  }

  every(ms: number, tick: () => void): () => void {
    const timer = { every: ms, next: this.time + ms, tick };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  /** Moves time on by `ms`, running each tick as it falls due, then lets the promises it started settle. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers].filter((t) => t.next <= end).sort((a, b) => a.next - b.next)[0];
      if (!due) break;
      this.time = due.next;
      due.next += due.every;
      due.tick();
      await settle();
    }
    this.time = end;
    await settle();
  }

  /** Timers still running (a finished run leaves none). */
  get pending(): number {
    return this.timers.size;
  }
}

/** Lets every promise chain started so far run to its end (no I/O here: a few turns of the microtask queue). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The workspaces' concurrent-render slots, with leases that lapse on the clock. */
export class MemorySlots implements SlotLeases {
  readonly held = new Map<string, Map<string, number>>();
  private readonly clock: Clock;
  private readonly leaseMs: number;

  constructor(clock: Clock, leaseMs = 60_000) {
    this.clock = clock;
    this.leaseMs = leaseMs;
  }

  async take(workspaceId: string, renderId: string, limit: number): Promise<boolean> {
    const slots = this.of(workspaceId);
    for (const [id, until] of slots) if (until <= this.clock.now()) slots.delete(id);
    if (!slots.has(renderId) && slots.size >= limit) return false;
    slots.set(renderId, this.clock.now() + this.leaseMs);
    return true;
  }

  async renew(workspaceId: string, renderId: string): Promise<void> {
    this.of(workspaceId).set(renderId, this.clock.now() + this.leaseMs);
  }

  async release(workspaceId: string, renderId: string): Promise<void> {
    this.of(workspaceId).delete(renderId);
  }

  private of(workspaceId: string): Map<string, number> {
    let slots = this.held.get(workspaceId);
    if (!slots) this.held.set(workspaceId, (slots = new Map()));
    return slots;
  }
}

/** The video queue's chunk flows: what was added, and the chunks' shared progress. */
export class MemoryQueue implements JobQueue {
  readonly flows: { renderId: string; token: string; chunks: readonly ChunkJob[] }[] = [];
  private readonly tokens = new Map<string, string>();
  private readonly frames = new Map<string, Map<number, number>>();

  async startChunks(renderId: string, token: string, chunks: readonly ChunkJob[]): Promise<void> {
    // Job ids derive from the render: a second add of the same flow adds nothing.
    if (!this.flows.some((f) => f.renderId === renderId)) this.flows.push({ renderId, token, chunks });
  }

  async chunkToken(renderId: string): Promise<string> {
    if (!this.tokens.has(renderId)) this.tokens.set(renderId, `t${this.tokens.size + 1}`);
    return this.tokens.get(renderId)!;
  }

  async chunkFrames(renderId: string, index: number, frames: number): Promise<number> {
    let done = this.frames.get(renderId);
    if (!done) this.frames.set(renderId, (done = new Map()));
    done.set(index, frames);
    return [...done.values()].reduce((a, b) => a + b, 0);
  }

  async forgetChunks(renderId: string): Promise<void> {
    this.tokens.delete(renderId);
    this.frames.delete(renderId);
  }

  /** Whether anything of the render's chunks is still kept. */
  keeps(renderId: string): boolean {
    return this.tokens.has(renderId) || this.frames.has(renderId);
  }
}

/** Stored files by key (what each came from), and the local files fetched back. */
export class MemoryStorage implements Storage {
  readonly files = new Map<string, string>();
  readonly fetched: string[] = [];

  async putFile(key: string, file: string): Promise<void> {
    this.files.set(key, file);
  }

  async putBytes(key: string, bytes: Buffer): Promise<{ key: string; sizeBytes: number }> {
    this.files.set(key, `${bytes.length} bytes`);
    return { key, sizeBytes: bytes.length };
  }

  async getFile(key: string, file: string): Promise<void> {
    if (!this.files.has(key)) throw new Error(`nothing stored at ${key}`);
    this.fetched.push(`${key} -> ${file}`);
  }

  async delete(key: string): Promise<void> {
    this.files.delete(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    for (const key of [...this.files.keys()]) if (key.startsWith(prefix)) this.files.delete(key);
  }

  async *list(prefix: string): AsyncIterable<{ key: string }> {
    for (const key of this.files.keys()) if (key.startsWith(prefix)) yield { key };
  }

  url(key: string): string {
    return `https://files.test/${key}`;
  }

  keys(prefix = ''): string[] {
    return [...this.files.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}

/** Job folders by name; what was removed. */
export class MemoryScratch implements Scratch {
  private made = 0;
  readonly open = new Set<string>();
  readonly removed: string[] = [];

  async folder(prefix: string): Promise<string> {
    const dir = `/scratch/${prefix}${++this.made}`;
    this.open.add(dir);
    return dir;
  }

  async remove(paths: readonly string[]): Promise<void> {
    for (const path of paths) {
      this.open.delete(path);
      this.removed.push(path);
    }
  }
}

/** How the fake engine answers one call: at once, or only when the test lets it (or the render is cancelled). */
type Script = 'finish' | 'hang' | Error;

/**
 * A video engine that draws nothing: each call reports progress and answers with file names, or hangs
 * until it is released, cancelled (its signal) or its worker is declared dead. `next` scripts the
 * coming calls.
 */
export class FakeVideoEngine implements VideoEngine {
  readonly calls: string[] = [];
  private readonly script: Script[] = [];
  private readonly hanging: (() => void)[] = [];
  private n = 0;

  next(...script: Script[]): void {
    this.script.push(...script);
  }

  /** Lets the hanging calls finish. */
  release(): void {
    for (const go of this.hanging.splice(0)) go();
  }

  async render(edit: EditSpec, opts: VideoRenderOptions): Promise<VideoOutput> {
    this.calls.push('render');
    await this.play(opts);
    const n = ++this.n;
    return { ...this.output(edit, n), file: `/engine/out-${n}.mp4`, posterFile: `/engine/poster-${n}.jpg` };
  }

  async renderChunk(edit: EditSpec, opts: ChunkOptions): Promise<VideoChunk> {
    this.calls.push(`chunk ${opts.frameRange.join('-')}`);
    await this.play(opts);
    return { frameRange: opts.frameRange, videoFile: `${opts.outputDir}/chunk.ts`, audioFile: `${opts.outputDir}/chunk.aac`, fps: 30, totalFrames: 0, codec: 'h264' };
  }

  async combine(edit: EditSpec, chunks: readonly VideoChunk[], opts: Omit<VideoRenderOptions, 'frameRange' | 'scale'>): Promise<VideoOutput> {
    this.calls.push(`combine ${chunks.length}`);
    await this.play(opts);
    const n = ++this.n;
    return { ...this.output(edit, n), file: `${opts.outputDir}/out.mp4`, posterFile: `${opts.outputDir}/poster.jpg` };
  }

  private output(edit: EditSpec, n: number): Omit<VideoOutput, 'file' | 'posterFile'> {
    return { format: 'mp4', contentType: 'video/mp4', width: edit.output.size?.width ?? 1280, height: edit.output.size?.height ?? 720, durationSec: 2, fps: 30, frames: 60, fileSizeBytes: 1000 + n, renderMs: 5 };
  }

  private async play(opts: { onProgress?: (p: number) => void; signal?: AbortSignal }): Promise<void> {
    const step = this.script.shift() ?? 'finish';
    opts.onProgress?.(0.5);
    if (step instanceof Error) throw step;
    if (step === 'hang') {
      await new Promise<void>((resolve, reject) => {
        this.hanging.push(resolve);
        opts.signal?.addEventListener('abort', () => reject(new VideoRenderCancelled()), { once: true });
      });
    }
    opts.onProgress?.(1);
  }
}

/** A still engine that draws nothing: a few bytes of the asked format. */
export class FakeStillEngine implements StillEngine {
  fail: Error | undefined;

  async render(edit: EditSpec): Promise<StillOutput> {
    if (this.fail) throw this.fail;
    const format = edit.output.format === 'jpeg' ? 'jpeg' : 'png';
    return { bytes: Buffer.alloc(64), format, contentType: `image/${format}`, width: 100, height: 100, timings: { inputs: 0, draw: 0, encode: 0, total: 0 } };
  }
}
