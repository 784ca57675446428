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
