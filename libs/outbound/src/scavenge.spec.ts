import { release, scavenge, scavenger } from './scavenge.js';

/** External memory of ArrayBuffers; a scavenge frees dead ones, their accounting settles as V8's background sweeper finishes. */
const arrayBuffers = () => process.memoryUsage().arrayBuffers;

async function settlesBelow(limit: number): Promise<number> {
  let now = arrayBuffers();
  for (let i = 0; i < 100 && now >= limit; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    now = arrayBuffers();
  }
  return now;
}

describe('scavenge: dead upload buffers are freed without a full collection (docs/benchmarks.md "Asset upload")', () => {
  /**
   * Dead 64 KiB buffers allocated until at least `bytes` of them wait to be freed (a collection V8
   * runs by itself meanwhile frees them and the pile starts again); how much waits.
   */
  function pileUp(bytes: number): number {
    const base = arrayBuffers();
    for (let i = 0; i < 4096 && arrayBuffers() - base < bytes; i++) Buffer.alloc(64 * 1024).fill(i);
    return arrayBuffers() - base;
  }

  it('frees the external memory of short-lived 64 KiB buffers', async () => {
    scavenge();
    const base = await settlesBelow(Infinity);
    expect(pileUp(6 * 1024 * 1024)).toBeGreaterThanOrEqual(6 * 1024 * 1024);
    scavenge();
    expect((await settlesBelow(base + 1024 * 1024)) - base).toBeLessThan(1024 * 1024);
  });

  it('a scavenger collects once per `every` bytes passed', async () => {
    const counted = scavenger(1000);
    const before = arrayBuffers();
    expect(pileUp(3 * 1024 * 1024)).toBeGreaterThanOrEqual(3 * 1024 * 1024);
    counted(999);
    expect(arrayBuffers() - before).toBeGreaterThanOrEqual(3 * 1024 * 1024);
    counted(1);
    expect((await settlesBelow(before + 1024 * 1024)) - before).toBeLessThan(1024 * 1024);
  });

  it('release frees buffers at once, with no collection; views of a shared or small buffer are left alone', () => {
    const held = Array.from({ length: 64 }, (_, i) => Buffer.alloc(64 * 1024, i));
    const before = arrayBuffers();
    const small = Buffer.from('pooled');
    const view = held[0]!.subarray(0, 10);
    release([...held.slice(1), small]);
    expect(before - arrayBuffers()).toBeGreaterThanOrEqual(63 * 64 * 1024);
    expect([held[1]!.length, held[0]!.length, view.length, small.toString()]).toEqual([0, 64 * 1024, 10, 'pooled']);
    release([view]);
    expect(held[0]![0]).toBe(0);
  });
});
