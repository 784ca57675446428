/**
 * A weighted semaphore of layer pixels: the layers being drawn at once in this process, whatever the
 * number of stills running (STILL_CONCURRENCY), hold at most `capacity` pixels between them. A take
 * larger than the capacity waits for the gate to be empty and then runs alone. Takes are served in
 * order, so a large one is not starved by small ones.
 */
export class PixelGate {
  private held = 0;
  private readonly waiting: { pixels: number; go: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Waits until `pixels` (capped at the capacity) fit, and holds them until the returned release is called. */
  async take(pixels: number): Promise<() => void> {
    const want = Math.max(1, Math.min(this.capacity, Math.ceil(pixels)));
    if (this.waiting.length > 0 || this.held + want > this.capacity) await new Promise<void>((go) => this.waiting.push({ pixels: want, go }));
    else this.held += want;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= want;
      this.wake();
    };
  }

  /** Pixels held now. */
  get inUse(): number {
    return this.held;
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.held + this.waiting[0]!.pixels <= this.capacity) {
      const next = this.waiting.shift()!;
      this.held += next.pixels;
      next.go();
    }
  }
}
