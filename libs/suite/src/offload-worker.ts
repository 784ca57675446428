import { registerHooks } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { move, transferableSymbol, valueSymbol } from 'piscina';

/**
 * What one thread of an OffloadPool (offload.ts) runs for each job: imports the task's module on its
 * first job, calls the task, and answers what it returned (its bytes moved to the caller, not copied)
 * or the error it threw (its name and message, which a thrown error's copy between threads would not keep).
 * It imports no library (a thread loads it on its own, from the sources in tests). Plain JavaScript
 * once compiled; run from the sources (the test runner), Node strips the types and a `./x.js` (or
 * file: URL) that does not exist is read as `./x.ts`.
 */
if (import.meta.url.endsWith('.ts')) {
  registerHooks({
    resolve(specifier, context, next) {
      try {
        return next(specifier, context);
      } catch (err) {
        if (!/^(\.|file:)/.test(specifier) || !specifier.endsWith('.js')) throw err;
        return next(`${specifier.slice(0, -3)}.ts`, context);
      }
    },
  });
}

/** A view over the whole of an ArrayBuffer of its own (libs/outbound scavenge.ts `ownsBuffer`, which this thread does not load). */
const ownsBuffer = (b: Uint8Array): b is Uint8Array<ArrayBuffer> => b.buffer instanceof ArrayBuffer && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;

/** This thread's young-generation collection (libs/outbound scavenge.ts `scavenge`). */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as (options: { type: 'minor' }) => void;

export interface Job {
  module: string;
  name: string;
  input: Uint8Array;
  args: unknown;
}

export type Outcome = { result: unknown } | { error: { name: string; message: string } };

type Task = (input: Uint8Array, args: unknown) => unknown;
const tasks = new Map<string, Task>();

async function task(module: string, name: string): Promise<Task> {
  const key = `${module}#${name}`;
  let found = tasks.get(key);
  if (!found) {
    const exported = ((await import(module)) as Record<string, unknown>)[name];
    if (typeof exported !== 'function') throw new Error(`${module} exports no function ${name}`);
    found = exported as Task;
    tasks.set(key, found);
  }
  return found;
}

export default async function run(job: Job): Promise<Outcome | ReturnType<typeof move>> {
  try {
    const result = (await task(job.module, job.name))(job.input, job.args);
    const moved = transferables(result);
    return moved.length ? moveAll({ result }, moved) : { result };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    return { error: { name: e.name, message: e.message } };
  } finally {
    // Everything the job allocated is dead once it is answered: its input's memory is freed, and a
    // scavenge costs next to nothing then, where one in the middle of the next job would copy (then
    // promote) its half-built objects. Queued now, run once the answer is posted.
    setImmediate(() => {
      if (ownsBuffer(job.input) && !job.input.buffer.detached) job.input.buffer.transfer(0);
      collect({ type: 'minor' });
    });
  }
}

/** The byte arrays of a result (itself or its own fields) that own their whole buffer: moved, not copied. */
function transferables(result: unknown): ArrayBuffer[] {
  const candidates = result instanceof Uint8Array ? [result] : result && typeof result === 'object' ? Object.values(result).filter((v) => v instanceof Uint8Array) : [];
  return candidates.filter(ownsBuffer).map((b) => b.buffer);
}

/** `value` answered with `buffers` moved along (piscina's transferable shape). */
function moveAll(value: Outcome, buffers: ArrayBuffer[]): ReturnType<typeof move> {
  return move({ [transferableSymbol]: buffers, [valueSymbol]: value } as never);
}
