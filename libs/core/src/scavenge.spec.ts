import { scavenge, scavenger } from './scavenge.js';

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
  function churn(n: number): void {
    for (let i = 0; i < n; i++) Buffer.alloc(64 * 1024).fill(i);
  }

  it('frees the external memory of short-lived 64 KiB buffers', async () => {
    scavenge();
    const base = await settlesBelow(Infinity);
    churn(128); // 8 MiB of buffers, each dead at once
    expect(arrayBuffers() - base).toBeGreaterThan(6 * 1024 * 1024);
    scavenge();
    expect((await settlesBelow(base + 1024 * 1024)) - base).toBeLessThan(1024 * 1024);
  });

  it('a scavenger collects once per `every` bytes passed', async () => {
    const counted = scavenger(1000);
    const before = arrayBuffers();
    churn(64);
    counted(999);
    expect(arrayBuffers() - before).toBeGreaterThan(3 * 1024 * 1024);
    counted(1);
    expect((await settlesBelow(before + 1024 * 1024)) - before).toBeLessThan(1024 * 1024);
  });
});
