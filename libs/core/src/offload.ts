import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ownsBuffer } from './scavenge.js';

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

/** Threads by default: the machine's cores, at most 2 (the main thread keeps its own core busy with I/O). */
export function defaultOffloadThreads(): number {
  return Math.min(2, availableParallelism());
}

interface Pending {
  id: number;
  task: OffloadTask<never, unknown>;
  input: Uint8Array;
  args: unknown;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Runner {
  worker: Worker;
  job: Pending | null;
}

const WORKER_URL = new URL(`./offload-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * CPU-heavy pure work on large payloads (a 10,000-row sheet parsed, reshaped and serialized) run on
 * worker threads, so the event loop keeps answering other requests meanwhile and a second core can
 * take part. One job a thread at a time, in arrival order; threads start on first use and are
 * replaced when one dies. Inputs that own their buffer are moved to the thread, not copied.
 */
export class OffloadPool {
  private readonly runners: Runner[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private finished = 0;

  constructor(private readonly options: OffloadOptions) {}

  /** Jobs answered by a thread so far (a task's error included; inline runs not counted). */
  get answered(): number {
    return this.finished;
  }

  /** Runs `task` on a thread (inline when the pool has none); rejects with OffloadTaskError or OffloadFailed. */
  async run<A, R>(task: OffloadTask<A, R>, input: Uint8Array, args: A): Promise<R> {
    if (this.closed) throw new OffloadFailed('the offload pool is closed');
    if (this.options.threads <= 0) return inline(task, input, args);
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task: task as OffloadTask<never, unknown>, input, args, resolve: resolve as (v: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Ends every thread; queued and running jobs reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new OffloadFailed('the offload pool closed'));
    await Promise.all(this.runners.splice(0).map((r) => {
      r.job?.reject(new OffloadFailed('the offload pool closed'));
      r.job = null;
      return r.worker.terminate();
    }));
  }

  private dispatch(): void {
    while (this.queue.length) {
      let runner = this.runners.find((r) => r.job === null);
      if (!runner && this.runners.length < this.options.threads) runner = this.spawn();
      if (!runner) return;
      const job = this.queue.shift()!;
      runner.job = job;
      runner.worker.ref();
      try {
        runner.worker.postMessage(
          { id: job.id, module: job.task.module, name: job.task.name, input: job.input, args: job.args },
          ownsBuffer(job.input) ? [job.input.buffer] : [],
        );
      } catch (err) {
        // Not cloneable (a detached input, a function in args): this job fails, the thread stays free.
        runner.job = null;
        runner.worker.unref();
        job.reject(taskError(err));
      }
    }
  }

  private spawn(): Runner {
    const worker = new Worker(WORKER_URL, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? 1024 },
      // The parent's flags (a test runner's loaders) are not the thread's.
      execArgv: [],
    });
    const runner: Runner = { worker, job: null };
    worker.unref();
    worker.on('message', (msg: { id: number; result?: unknown; error?: { name: string; message: string } }) => {
      const job = runner.job;
      if (!job || job.id !== msg.id) return;
      runner.job = null;
      worker.unref();
      this.finished++;
      if (msg.error) job.reject(new OffloadTaskError(msg.error.name, msg.error.message));
      else job.resolve(msg.result);
      this.dispatch();
    });
    const end = (why: string, outOfMemory = false) => {
      const i = this.runners.indexOf(runner);
      if (i < 0) return;
      this.runners.splice(i, 1);
      runner.job?.reject(new OffloadFailed(`the offload thread ended before finishing (${why})`, outOfMemory));
      runner.job = null;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', (err) => end(err.message, (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'));
    worker.on('exit', (code) => end(`exit code ${code}`));
    this.runners.push(runner);
    return runner;
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
