import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'minor' | 'major' }) => void;
let collect: Collect | undefined;

/**
 * A young-generation collection (a V8 scavenge: about a millisecond), asked for by a long stream of
 * socket reads. Each read of an upload is a fresh 64 KiB buffer that dies at once; the API's own
 * allocations are too few to trigger scavenges, so the dead buffers pile up as external memory until
 * V8 runs a full mark-compact of the whole heap (~50 ms, 4–5 per 200 MB upload; the ~60 MB of RSS
 * growth). docs/benchmarks.md "Asset upload". `gc` is exposed at run time to a context of its own,
 * so the process needs no start flag and nothing else can call it.
 */
export function scavenge(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  collect({ type: 'minor' });
}

/** Counts bytes passing by and scavenges after every `every` of them. */
export function scavenger(every: number): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since >= every) {
      since = 0;
      scavenge();
    }
  };
}

/**
 * The process's count of large short-lived buffers (provider answers read whole, serialized answers of
 * MBs): they die young, but nothing else allocates enough to scavenge them, so without this they
 * pile up as external memory until V8 runs mark-compacts (a 10,000-row sheet read at 70/s: one
 * ~40 ms mark-compact every 250 ms; docs/benchmarks.md "Sheets read").
 */
export const bufferPassed = scavenger(16 * 1024 * 1024);

/** A view over the whole of an ArrayBuffer of its own: one that can be moved to another thread or freed without touching anything else. */
export function ownsBuffer(b: Uint8Array): b is Uint8Array<ArrayBuffer> {
  return b.buffer instanceof ArrayBuffer && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;
}

/**
 * Frees the memory of buffers no one reads again at once (each one that owns its whole ArrayBuffer is
 * detached), instead of when a garbage collection finds them: what is freed this way never counts
 * towards the external memory that starts V8's mark-compacts.
 */
export function release(buffers: readonly Uint8Array[]): void {
  for (const b of buffers) {
    if (ownsBuffer(b) && b.byteLength >= 4096 && !b.buffer.detached) b.buffer.transfer(0);
  }
}
