import { fileURLToPath } from 'node:url';
import { ownsBuffer } from '#libs/outbound';
import { Piscina } from 'piscina';
import type { Job, Outcome } from './offload-worker.js';

/**
 * A task an OffloadPool runs: a function exported by a module that imports nothing but pure code
 * (no Nest, no database: a worker thread loads it on its own), `(input: Uint8Array, args) => result`
 * where `args` and the result are structured-cloneable (the result's own Uint8Array fields are moved).
 */
export interface OffloadTask<A, R> {
  /** The URL of the module exporting the function, as a thread imports it. */
  module: string;
  /** The exported function's name. */
  name: string;
  /** The function itself, for a pool without threads. */
  fn: (input: Uint8Array, args: A) => R;
}

/** Declares a task: `offloadTask(new URL('./module.js', import.meta.url).href, exportedFunction)`. */
export function offloadTask<A, R>(module: string, fn: (input: Uint8Array, args: A) => R): OffloadTask<A, R> {
  if (!fn.name) throw new Error('an offload task is an exported, named function');
  return { module, name: fn.name, fn };
}

/** A task thread ended before answering (out of its memory limit, killed) or the pool closed: the job did not finish. */
export class OffloadFailed extends Error {
  constructor(
    message: string,
    /** The thread reached its heap limit: the job's input is too large for it. */
    readonly outOfMemory = false,
  ) {
    super(message);
    this.name = 'OffloadFailed';
  }
}

/** What a task threw, as the calling thread sees it (its name and message kept). */
export class OffloadTaskError extends Error {
  constructor(readonly taskErrorName: string, message: string) {
    super(message);
    this.name = 'OffloadTaskError';
  }
}

export interface OffloadOptions {
  /** Threads at most (started on first use); 0 runs every task inline on the calling thread. */
  threads: number;
  /** Each thread's old-generation heap limit: a task past it ends its thread (OffloadFailed), never the process. */
  maxHeapMb?: number;
}

const WORKER_FILE = fileURLToPath(new URL(`./offload-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

/**
 * CPU-heavy pure work on large payloads (a 10,000-row sheet parsed, reshaped and serialized) run on
 * worker threads (piscina), so the event loop keeps answering other requests meanwhile and a second
 * core can take part. One job a thread at a time, in arrival order; threads start on first use, stay
 * (idle ones do not hold the process open) and are replaced when one dies. Inputs that own their
 * buffer are moved to the thread, not copied; so are the result's.
 */
export class OffloadPool {
  private pool: Piscina<Job, Outcome> | null = null;
  private closed = false;
  /** The jobs sent to the pool and not answered yet (a thread that cannot start fails them). */
  private readonly waiting = new Set<(err: Error) => void>();
  private finished = 0;

  constructor(private readonly options: OffloadOptions) {}

  /** Jobs answered by a thread so far (a task's error included; inline runs not counted). */
  get answered(): number {
    return this.finished;
  }

  /** Threads running now (never more than `threads`). */
  get threads(): number {
    return this.pool?.threads.length ?? 0;
  }

  /** Runs `task` on a thread (inline when the pool has none); rejects with OffloadTaskError or OffloadFailed. */
  async run<A, R>(task: OffloadTask<A, R>, input: Uint8Array, args: A): Promise<R> {
    if (this.closed) throw new OffloadFailed('the offload pool is closed');
    if (this.options.threads <= 0) return inline(task, input, args);
    const pool = (this.pool ??= this.start());
    let outcome: Outcome;
    try {
      outcome = await new Promise<Outcome>((resolve, reject) => {
        this.waiting.add(reject);
        pool.run({ module: task.module, name: task.name, input, args }, { transferList: ownsBuffer(input) ? [input.buffer] : undefined })
          .then(resolve, reject)
          .finally(() => this.waiting.delete(reject));
      });
    } catch (err) {
      throw this.failure(err);
    }
    this.finished++;
    if ('error' in outcome) throw new OffloadTaskError(outcome.error.name, outcome.error.message);
    return outcome.result as R;
  }

  private start(): Piscina<Job, Outcome> {
    const pool = new Piscina<Job, Outcome>({
      filename: WORKER_FILE,
      // Every thread starts with the first job (this pool is made then) and stays: a second job does not
      // wait for a thread still starting, nor for the first one to finish; a thread that dies is replaced.
      minThreads: this.options.threads,
      maxThreads: this.options.threads,
      idleTimeout: Infinity,
      // A thread waits for its next job on its event loop (not Atomics.wait), so that the clean-up it
      // queues after answering (offload-worker.ts) runs at once.
      atomics: 'disabled',
      // Nothing reads piscina's run and wait histograms.
      recordTiming: false,
      // Jobs start in arrival order (piscina's default may start a later job first).
      stricterFIFO: true,
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? 1024 },
      // The parent's flags (a test runner's loaders) are not the thread's.
      execArgv: [],
    });
    // A thread that fails outside a job (it could not start): piscina keeps the jobs queued for it, so
    // they fail here, and the next job starts a new pool.
    pool.on('error', (err: Error) => {
      if (this.pool === pool) this.pool = null;
      for (const reject of [...this.waiting]) reject(new OffloadFailed(`the offload thread ended before finishing (${err.message})`));
      void pool.destroy().catch(() => undefined);
    });
    return pool;
  }

  /** Ends every thread; queued and running jobs reject. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.destroy();
  }

  /** Why a job did not come back: the pool closed, its thread ended, or the job could not be sent to a thread. */
  private failure(err: unknown): Error {
    if (this.closed) return new OffloadFailed('the offload pool closed');
    const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') return new OffloadFailed(`the offload thread ended before finishing (${String(message)})`, true);
    if ((err as { name?: unknown } | null)?.name === 'DataCloneError') return taskError(err);
    return new OffloadFailed(`the offload thread ended before finishing (${String(message ?? err)})`);
  }
}

function inline<A, R>(task: OffloadTask<A, R>, input: Uint8Array, args: A): R {
  try {
    return task.fn(input, args);
  } catch (err) {
    throw taskError(err);
  }
}

/** What a task (or the hand-over of its job) threw, named as it was named (a DOMException of another realm too). */
function taskError(err: unknown): OffloadTaskError {
  const { name, message } = (err ?? {}) as { name?: unknown; message?: unknown };
  return new OffloadTaskError(typeof name === 'string' ? name : 'Error', typeof message === 'string' ? message : String(err));
}
