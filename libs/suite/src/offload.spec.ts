import { hog as hogFn, meet as meetFn, refuse as refuseFn, reverse as reverseFn, spin as spinFn } from '../../../test/fixtures/offload-tasks.js';
import { OffloadFailed, OffloadPool, OffloadTaskError, offloadTask } from './offload.js';

const FIXTURE = new URL('../../../test/fixtures/offload-tasks.ts', import.meta.url).href;
const reverse = offloadTask(FIXTURE, reverseFn);
const refuse = offloadTask(FIXTURE, refuseFn);
const hog = offloadTask(FIXTURE, hogFn);
const spin = offloadTask(FIXTURE, spinFn);
const meet = offloadTask(FIXTURE, meetFn);

describe('OffloadPool: pure work on worker threads', () => {
  const pool = new OffloadPool({ threads: 2, maxHeapMb: 64 });
  afterAll(() => pool.close());

  it('runs a task on a thread and moves the input and the result instead of copying them', async () => {
    const input = new Uint8Array(new ArrayBuffer(4));
    input.set([1, 2, 3, 4]);
    const out = await pool.run(reverse, input, { tag: 'a' });
    expect([...out.body]).toEqual([4, 3, 2, 1]);
    expect([out.tag, out.inWorker]).toEqual(['a', true]);
    // Moved: the caller's view of the input is detached.
    expect(input.byteLength).toBe(0);
    // A view of a shared slab (a small Buffer) is copied, and stays readable.
    const small = Buffer.from('xyz');
    expect(Buffer.from((await pool.run(reverse, small, { tag: 'b' })).body).toString()).toBe('zyx');
    expect(small.toString()).toBe('xyz');
  });

  it("rejects with the task's own error name and message", async () => {
    const err = await pool.run(refuse, new Uint8Array(1), { why: 'not a grid' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OffloadTaskError);
    expect([(err as OffloadTaskError).taskErrorName, (err as Error).message]).toEqual(['Refusal', 'not a grid']);
  });

  it('a thread past its heap limit fails its job (not the process), and the pool goes on with a new thread', async () => {
    const err = await pool.run(hog, new Uint8Array(1), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OffloadFailed);
    expect([(err as OffloadFailed).outOfMemory, (err as Error).message]).toEqual([true, expect.stringMatching(/ended before finishing/)]);
    expect((await pool.run(reverse, Uint8Array.of(7, 8), { tag: 'after' })).tag).toBe('after');
  });

  it('runs two jobs at once on two threads while the event loop stays free', async () => {
    // Both threads at work together (the one that replaced the thread lost above may still be starting:
    // a job goes to the first free thread, so this waits for it).
    const count = new SharedArrayBuffer(4);
    expect(await Promise.all([pool.run(meet, new Uint8Array(1), { count, of: 2 }), pool.run(meet, new Uint8Array(1), { count, of: 2 })])).toEqual([true, true]);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const [a, b] = await Promise.all([pool.run(spin, new Uint8Array(1), { ms: 400 }), pool.run(spin, new Uint8Array(1), { ms: 400 })]);
    clearInterval(timer);
    // Side by side: each started before the other ended; the loop ticked throughout.
    expect([a.start < b.end, b.start < a.end]).toEqual([true, true]);
    expect(ticks).toBeGreaterThan(15);
  });

  it('a job whose arguments cannot be sent to a thread fails alone; the thread takes the next job', async () => {
    const err = await pool.run(reverse, Uint8Array.of(1), { tag: (() => 'x') as unknown as string }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OffloadTaskError);
    expect((err as OffloadTaskError).taskErrorName).toBe('DataCloneError');
    expect((await pool.run(reverse, Uint8Array.of(3, 4), { tag: 'next' })).tag).toBe('next');
  });

  it('runs at most `threads` threads (OFFLOAD_THREADS): with one, jobs wait for it in arrival order', async () => {
    const one = new OffloadPool({ threads: 1 });
    try {
      const runs = await Promise.all([1, 2, 3].map(() => one.run(spin, new Uint8Array(1), { ms: 150 })));
      // One after another: each started once the one before had ended.
      expect([runs[0].end <= runs[1].start, runs[1].end <= runs[2].start]).toEqual([true, true]);
      expect([one.threads, one.answered]).toEqual([1, 3]);
    } finally {
      await one.close();
    }
    expect(one.threads).toBe(0);
  });

  it('with no threads runs the same task inline', async () => {
    const inline = new OffloadPool({ threads: 0 });
    const out = await inline.run(reverse, Uint8Array.of(1, 2), { tag: 'inline' });
    expect([[...out.body], out.inWorker]).toEqual([[2, 1], false]);
    await expect(inline.run(refuse, new Uint8Array(1), { why: 'no' })).rejects.toBeInstanceOf(OffloadTaskError);
  });

  it('closing rejects what is queued and refuses new jobs', async () => {
    const closing = new OffloadPool({ threads: 1 });
    const running = closing.run(spin, new Uint8Array(1), { ms: 300 }).catch((e: unknown) => e);
    const queued = closing.run(reverse, Uint8Array.of(1), { tag: 'never' }).catch((e: unknown) => e);
    await closing.close();
    expect(await running).toBeInstanceOf(OffloadFailed);
    expect(await queued).toBeInstanceOf(OffloadFailed);
    await expect(closing.run(reverse, Uint8Array.of(1), { tag: 'late' })).rejects.toBeInstanceOf(OffloadFailed);
  });

});
