import { BackgroundTasks } from './background.js';

describe('BackgroundTasks (sign-in codes off the request path)', () => {
  const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

  it('starts a task on a later turn of the event loop, never in the caller\'s', async () => {
    const tasks = new BackgroundTasks({ concurrency: 2, maxWaiting: 10, onError: () => undefined });
    let started = false;
    tasks.push(async () => {
      started = true;
    });
    await Promise.resolve();
    expect(started).toBe(false);
    await tasks.settled(1000);
    expect(started).toBe(true);
  });

  it('runs tasks in order, a few at once, and reports a failure without stopping the rest', async () => {
    const errors: unknown[] = [];
    const tasks = new BackgroundTasks({ concurrency: 2, maxWaiting: 10, onError: (e) => errors.push(e) });
    const started: number[] = [];
    let running = 0;
    let most = 0;
    for (let i = 0; i < 6; i++) {
      tasks.push(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await tick();
        running--;
        if (i === 2) throw new Error('provider down');
      });
    }
    await tasks.settled(1000);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(errors).toEqual([new Error('provider down')]);
  });

  it('says when it is full, and settled() gives up after its time-out', async () => {
    const tasks = new BackgroundTasks({ concurrency: 1, maxWaiting: 2, onError: () => undefined });
    let release!: () => void;
    tasks.push(() => new Promise<void>((r) => (release = r)));
    await tick();
    tasks.push(async () => undefined);
    expect(tasks.full).toBe(false);
    tasks.push(async () => undefined);
    expect(tasks.full).toBe(true);
    const started = Date.now();
    await tasks.settled(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    release();
    await tasks.settled(1000);
    expect(tasks.full).toBe(false);
  });
});
