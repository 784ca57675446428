import { registerHooks } from 'node:module';
import { parentPort } from 'node:worker_threads';
import type * as Scavenge from './scavenge.js';

/**
 * One thread of an OffloadPool (offload.ts): imports a task's module on its first job, then answers
 * each job with what the task returned (its bytes moved to the caller, not copied) or the error it threw.
 * Plain JavaScript once compiled; run from the sources (the test runner), Node strips the types and a
 * `./x.js` (or file: URL) that does not exist is read as `./x.ts`.
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

// Imported once the hook above is in place (a static import would be resolved before it).
const { ownsBuffer, release, scavenge } = (await import('./scavenge.js')) as typeof Scavenge;

interface Job {
  id: number;
  module: string;
  name: string;
  input: Uint8Array;
  args: unknown;
}

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

const port = parentPort!;
port.on('message', (job: Job) => {
  void (async () => {
    try {
      const result = (await task(job.module, job.name))(job.input, job.args);
      port.postMessage({ id: job.id, result }, transferables(result));
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      port.postMessage({ id: job.id, error: { name: e.name, message: e.message } });
    }
    // Everything the job allocated is dead now: its input's memory is freed, and a scavenge costs next
    // to nothing here, where one in the middle of the next job would copy (then promote) its half-built objects.
    release([job.input]);
    scavenge();
  })();
});

/** The byte arrays of a result (itself or its own fields) that own their whole buffer: moved, not copied. */
function transferables(result: unknown): ArrayBuffer[] {
  const candidates = result instanceof Uint8Array ? [result] : result && typeof result === 'object' ? Object.values(result).filter((v) => v instanceof Uint8Array) : [];
  return candidates.filter(ownsBuffer).map((b) => b.buffer);
}
