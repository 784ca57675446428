interface Entry<V> {
  value: V;
  bytes: number;
}

export interface ByteLruOptions {
  /**
   * A probation window (2Q): a new value waits among the last `probationEntries` new values (at most a
   * quarter of the budget in bytes) and joins the rest only when it is asked for again; the keys of
   * those that left the window unused are remembered (the last REMEMBERED_KEYS, keys only), and such
   * a key set again joins the rest at once. Values used once (the text of a template rendered with
   * new values: a layer a render) then hold a quarter of the budget at most instead of all of it,
   * while a value that comes back, soon or after many others, is kept as before.
   */
  probationEntries?: number;
}

/** Keys of values that left the probation window unused, remembered (a few hundred kilobytes at most). */
const REMEMBERED_KEYS = 4096;

/**
 * A least-recently-used map bounded by the total size of its values (bytes of pixels), shared by the
 * renders of one process: decoded images, laid-out text and finished layers are reused when the same
 * inputs come back (a template rendered with new values redraws only what changed).
 */
export class ByteLru<V> {
  /** Values used again (or every value, without a probation window), least recently used first. */
  private readonly entries = new Map<string, Entry<V>>();
  /** New values not used again yet, oldest first. */
  private readonly probation = new Map<string, Entry<V>>();
  /** Keys that left the probation window unused, oldest first. */
  private readonly remembered = new Set<string>();
  private total = 0;
  private probationBytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly budget: number,
    private readonly opts: ByteLruOptions = {},
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.hits++;
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value;
    }
    const waiting = this.probation.get(key);
    if (waiting) {
      // Used a second time: kept with the values that repeat.
      this.hits++;
      this.probation.delete(key);
      this.probationBytes -= waiting.bytes;
      this.entries.set(key, waiting);
      return waiting.value;
    }
    this.misses++;
    return undefined;
  }

  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget / 4) return; // one huge value would flush everything else
    this.delete(key);
    this.total += bytes;
    const window = this.opts.probationEntries;
    if (window === undefined || this.remembered.delete(key)) {
      this.entries.set(key, { value, bytes });
    } else {
      this.probation.set(key, { value, bytes });
      this.probationBytes += bytes;
      for (const [k, e] of this.probation) {
        if (this.probation.size <= window && this.probationBytes <= this.budget / 4) break;
        this.probation.delete(k);
        this.probationBytes -= e.bytes;
        this.total -= e.bytes;
        this.remembered.add(k);
        if (this.remembered.size > REMEMBERED_KEYS) this.remembered.delete(this.remembered.values().next().value!);
      }
    }
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
    this.probation.clear();
    this.remembered.clear();
    this.total = 0;
    this.probationBytes = 0;
  }

  private delete(key: string): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.total -= old.bytes;
    }
    const waiting = this.probation.get(key);
    if (waiting) {
      this.probation.delete(key);
      this.probationBytes -= waiting.bytes;
      this.total -= waiting.bytes;
    }
  }
}
