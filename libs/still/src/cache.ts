/**
 * A least-recently-used map bounded by the total size of its values (bytes of pixels), shared by the
 * renders of one process: decoded images, laid-out text and finished layers are reused when the same
 * inputs come back (a template rendered with new values redraws only what changed).
 */
export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly budget: number) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget / 4) return; // one huge value would flush everything else
    const old = this.entries.get(key);
    if (old) {
      this.total -= old.bytes;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    for (const [k, e] of this.entries) {
      if (this.total <= this.budget) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  /** Runs `make` once per key at a time and caches its result. */
  async through(key: string, make: () => Promise<V>, size: (v: V) => number): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = await make();
    this.set(key, value, size(value));
    return value;
  }

  get bytes(): number {
    return this.total;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}
