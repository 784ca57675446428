import { scavenge, scavenger } from './scavenge.js';

describe('scavenge: dead upload buffers are freed without a full collection (docs/benchmarks.md "Asset upload")', () => {
  function churn(n: number): void {
    for (let i = 0; i < n; i++) Buffer.alloc(64 * 1024).fill(i);
  }

  it('frees the external memory of short-lived 64 KiB buffers', () => {
    scavenge();
    const base = process.memoryUsage().arrayBuffers;
    churn(128); // 8 MiB of buffers, each dead at once
    const piled = process.memoryUsage().arrayBuffers;
    expect(piled - base).toBeGreaterThan(6 * 1024 * 1024);
    scavenge();
    expect(process.memoryUsage().arrayBuffers - base).toBeLessThan(1024 * 1024);
  });

  it('a scavenger collects once per `every` bytes passed', () => {
    const counted = scavenger(1000);
    const before = process.memoryUsage().arrayBuffers;
    churn(64);
    counted(999);
    expect(process.memoryUsage().arrayBuffers - before).toBeGreaterThan(3 * 1024 * 1024);
    counted(1);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024);
  });
});
