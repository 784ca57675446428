/**
 * Work taken off the request path (issue 28: a sign-in code's user lookup, code and SMS, so that
 * send-otp answers in the same time whatever the number): a few tasks at once, in the order given,
 * at most `maxWaiting` waiting. A failed task is reported to `onError` and ends there.
 */
export class BackgroundTasks {
  private running = 0;
  private readonly waiting: (() => Promise<void>)[] = [];
  private readonly idle: (() => void)[] = [];

  constructor(private readonly opts: { concurrency: number; maxWaiting: number; onError: (err: unknown) => void }) {}

  /** Whether another task fits (the caller refuses the request otherwise, before doing anything). */
  get full(): boolean {
    return this.waiting.length >= this.opts.maxWaiting;
  }

  /**
   * Queues a task. It starts on a later turn of the event loop, never in the caller's: work of a
   * synchronous driver (SQLite) would otherwise run before the caller's answer is written.
   */
  push(task: () => Promise<void>): void {
    this.waiting.push(task);
    setImmediate(() => this.next());
  }

  /** Resolves once every task given so far has ended, or after `timeoutMs` (shutdown). */
  settled(timeoutMs: number): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private next(): void {
    while (this.running < this.opts.concurrency && this.waiting.length) {
      const task = this.waiting.shift()!;
      this.running++;
      void task().catch(this.opts.onError).finally(() => {
        this.running--;
        this.next();
        if (this.running === 0 && this.waiting.length === 0) for (const done of this.idle.splice(0)) done();
      });
    }
  }
}
