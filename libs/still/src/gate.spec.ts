import { PixelGate } from './gate.js';

describe('PixelGate (issue 27: layers drawn a bounded number of pixels at a time)', () => {
  it('holds at most its capacity, serves takes in order, and runs a take larger than the capacity alone', async () => {
    const gate = new PixelGate(100);
    const order: string[] = [];
    const a = await gate.take(60);
    const b = gate.take(50).then((release) => (order.push('b'), release));
    const c = gate.take(10).then((release) => (order.push('c'), release));
    await new Promise((r) => setImmediate(r));
    // c would fit beside a, but b asked first.
    expect([order, gate.inUse]).toEqual([[], 60]);
    a();
    const releaseB = await b;
    const releaseC = await c;
    expect([order, gate.inUse]).toEqual([['b', 'c'], 60]);
    const big = gate.take(1_000);
    releaseB();
    releaseB();
    expect(gate.inUse).toBe(10);
    releaseC();
    (await big)();
    expect(gate.inUse).toBe(0);
  });
});
