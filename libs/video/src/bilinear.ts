import { BILINEAR_WASM } from './bilinear-wasm.js';

/** The WebAssembly globals used here (TypeScript declares them only in its DOM libraries). */
interface Wasm {
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer; grow(pages: number): number };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

let compiled: object | undefined;

interface Kernels {
  across(src: number, x0: number, x1: number, wx: number, out: number, n: number): void;
  vertical(up: number, lo: number, w0: number, w1: number, out: number, n: number): void;
  blend(vals: number, dst: number, cov: number, covY: number, n: number): void;
}

const align = (n: number) => Math.ceil(n / 16) * 16;

/**
 * The WebAssembly memory one compositor samples a video in (bilinear.wat): the source rows being
 * filtered (each copied in as it is needed, at its offset in the frame), each output column's two
 * source taps, weight and coverage, two source rows filtered across (×256, u16), an output row and
 * the frame's row it is blended over. The compositor fills the columns' arrays in place; the memory
 * grows when a larger frame or row comes, never shrinks.
 */
export class BilinearRows {
  private readonly memory = new wasm.Memory({ initial: 1 });
  private readonly kernels: Kernels;
  private sourceBytes = 0;
  private columns = 0;
  private at = { x0: 0, x1: 0, wx: 0, cov: 0, upper: 0, lower: 0, row: 0, dst: 0 };
  x0 = new Int32Array(0);
  x1 = new Int32Array(0);
  wx = new Int32Array(0);
  /** Each column's coverage times the layer's opacity (0..1). */
  cov = new Float64Array(0);
  private row = new Uint8Array(0);
  private dst = new Uint8Array(0);
  /** The whole memory, bytes. */
  private bytes = new Uint8Array(0);

  constructor() {
    compiled ??= new wasm.Module(Buffer.from(BILINEAR_WASM, 'base64'));
    this.kernels = new wasm.Instance(compiled, { env: { memory: this.memory } }).exports as unknown as Kernels;
  }

  /** Room for a frame of `sourceBytes` and rows of `columns` samples: the column arrays are then that long. */
  reserve(columns: number, sourceBytes: number): void {
    if (columns > this.columns || sourceBytes > this.sourceBytes) this.layout(Math.max(columns, this.columns), Math.max(sourceBytes, this.sourceBytes));
    // After a grow the old views are detached (length 0): made again.
    if (this.x0.length !== columns) this.views(columns);
  }

  /**
   * Filters the source row of `length` bytes at `offset` in `frame` across into the upper or lower
   * row. `frame` is the one `reserve` was sized for: the row lands inside the frame's area.
   */
  across(into: 'upper' | 'lower', frame: Buffer, offset: number, length: number): void {
    this.bytes.set(frame.subarray(offset, offset + length), offset);
    const a = this.at;
    this.kernels.across(offset, a.x0, a.x1, a.wx, a[into], this.x0.length);
  }

  /** The upper row becomes the lower (the output moved down a source row). */
  swap(): void {
    [this.at.upper, this.at.lower] = [this.at.lower, this.at.upper];
  }

  /** A row's output samples: the two filtered rows mixed by w0 and w1 (of 256). Valid until the next call. */
  vertical(w0: number, w1: number): Uint8Array {
    const a = this.at;
    const n = this.x0.length;
    this.kernels.vertical(a.upper, a.lower, w0, w1, a.row, n);
    return this.row.subarray(0, n);
  }

  /** Lays columns [from, to) of the last row over `out` from `start`, each at its coverage times `covY`. */
  blend(out: Buffer, start: number, covY: number, from: number, to: number): void {
    const a = this.at;
    const n = to - from;
    this.dst.set(out.subarray(start + from, start + to));
    this.kernels.blend(a.row + from, a.dst, a.cov + from * 8, covY, n);
    out.set(this.dst.subarray(0, n), start + from);
  }

  private layout(columns: number, sourceBytes: number): void {
    const x0 = align(sourceBytes);
    const x1 = x0 + align(columns * 4);
    const wx = x1 + align(columns * 4);
    const cov = wx + align(columns * 4);
    const upper = cov + align(columns * 8);
    const lower = upper + align(columns * 2);
    const row = lower + align(columns * 2);
    const dst = row + align(columns);
    const end = dst + align(columns);
    const pages = Math.ceil(end / 65536) - this.memory.buffer.byteLength / 65536;
    if (pages > 0) this.memory.grow(pages);
    this.at = { x0, x1, wx, cov, upper, lower, row, dst };
    this.sourceBytes = sourceBytes;
    this.columns = columns;
    this.views(this.x0.length);
  }

  private views(n: number): void {
    const { buffer } = this.memory;
    const a = this.at;
    this.x0 = new Int32Array(buffer, a.x0, n);
    this.x1 = new Int32Array(buffer, a.x1, n);
    this.wx = new Int32Array(buffer, a.wx, n);
    this.cov = new Float64Array(buffer, a.cov, n);
    this.row = new Uint8Array(buffer, a.row, this.columns);
    this.dst = new Uint8Array(buffer, a.dst, this.columns);
    this.bytes = new Uint8Array(buffer);
  }
}
