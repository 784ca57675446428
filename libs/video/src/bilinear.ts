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
}

const align = (n: number) => Math.ceil(n / 16) * 16;

/**
 * The WebAssembly memory one compositor samples a video in (bilinear.wat): the decoded frame, each
 * output column's two source taps and weight, two source rows filtered across (×256, u16) and an
 * output row. The compositor fills the columns' arrays in place and reads the filtered rows for the
 * edges it blends itself; the memory grows when a larger frame or row comes, never shrinks.
 */
export class BilinearRows {
  private readonly memory = new wasm.Memory({ initial: 1 });
  private readonly kernels: Kernels;
  private sourceBytes = 0;
  private columns = 0;
  private pending: Buffer | undefined;
  private at = { x0: 0, x1: 0, wx: 0, upper: 0, lower: 0, row: 0 };
  x0 = new Int32Array(0);
  x1 = new Int32Array(0);
  wx = new Int32Array(0);
  upper = new Uint16Array(0);
  lower = new Uint16Array(0);
  private row = new Uint8Array(0);

  constructor() {
    compiled ??= new wasm.Module(Buffer.from(BILINEAR_WASM, 'base64'));
    this.kernels = new wasm.Instance(compiled, { env: { memory: this.memory } }).exports as unknown as Kernels;
  }

  /** The frame sampled next (yuv420p, its planes in order); copied in only if a plane needs filtering. */
  setSource(frame: Buffer): void {
    this.pending = frame;
  }

  /** Room for rows of `columns` samples: the column arrays are then that long. */
  reserve(columns: number): void {
    if (columns > this.columns || (this.pending && this.pending.length > this.sourceBytes)) this.layout(Math.max(columns, this.columns), Math.max(this.pending?.length ?? 0, this.sourceBytes));
    if (this.x0.length !== columns) this.views(columns);
  }

  /** Filters source row `offset` (a byte offset in the frame) across into the upper or lower row. */
  across(into: 'upper' | 'lower', offset: number): void {
    if (this.pending) {
      new Uint8Array(this.memory.buffer, 0, this.pending.length).set(this.pending);
      this.pending = undefined;
    }
    const a = this.at;
    this.kernels.across(offset, a.x0, a.x1, a.wx, a[into], this.x0.length);
  }

  /** The upper row becomes the lower (the output moved down a source row). */
  swap(): void {
    [this.at.upper, this.at.lower] = [this.at.lower, this.at.upper];
    [this.upper, this.lower] = [this.lower, this.upper];
  }

  /** Output samples [from, to) of a row: the two filtered rows mixed by w0 and w1 (of 256). Valid until the next call. */
  vertical(w0: number, w1: number, from: number, to: number): Uint8Array {
    const a = this.at;
    this.kernels.vertical(a.upper + from * 2, a.lower + from * 2, w0, w1, a.row, to - from);
    return this.row.subarray(0, to - from);
  }

  private layout(columns: number, sourceBytes: number): void {
    const x0 = align(sourceBytes);
    const x1 = x0 + align(columns * 4);
    const wx = x1 + align(columns * 4);
    const upper = wx + align(columns * 4);
    const lower = upper + align(columns * 2);
    const row = lower + align(columns * 2);
    const end = row + align(columns);
    const pages = Math.ceil(end / 65536) - this.memory.buffer.byteLength / 65536;
    if (pages > 0) this.memory.grow(pages);
    this.at = { x0, x1, wx, upper, lower, row };
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
    this.upper = new Uint16Array(buffer, a.upper, n);
    this.lower = new Uint16Array(buffer, a.lower, n);
    this.row = new Uint8Array(buffer, a.row, this.columns);
  }
}
