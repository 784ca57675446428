import { CompressionType, FilterType, Transformer } from '@napi-rs/image';
import { ByteLru } from './cache.js';
import { joinPngBands, parsePngBand, type PngBand } from './png-bands.js';

/** Frames of fewer pixels are written in one piece: bands' setup would cost what they save. */
const BAND_MIN_PIXELS = 256 * 256;
/** Whether a frame this size is written in bands (FramePngWriter.plan: its rows are worth naming). */
export const writtenInBands = (width: number, height: number) => width * height >= BAND_MIN_PIXELS && height >= 2;

/** A frame planned in more bands than this is written in two. */
const MAX_BANDS = 32;
/** Bands are cut into pieces of at most this many rows, written side by side on the pool's threads. */
const PIECE_ROWS = 128;

/**
 * The PNG of a frame (RGBA pixels, straight alpha), as the still engine writes it: the Rust `png`
 * crate's fast mode (fdeflate: one pass, a Huffman code for filtered image bytes, runs only) with
 * adaptive filtering, through @napi-rs/image, off the main thread. A photographic 1080² frame takes
 * ~15 ms on one core where zlib's fastest settings took ~45 ms of CPU, for about
 * the same size (2.4 MB against 2.3 MB); flat designs ~6 ms (+15–20 % bytes). Always RGBA: an
 * opaque frame has alpha 255 throughout (a constant channel costs ~3 % after compression).
 *
 * A frame of `BAND_MIN_PIXELS` or more is written as two bands at once, on two pool threads, joined
 * into one PNG (png-bands.ts); where they cannot be joined (the bottom band's first row filtered with
 * Avg), it is written again in one piece. The pixels are not read after the promise settles.
 */
export async function encodeFramePng(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  checkSize(rgba, width, height);
  if (!writtenInBands(width, height)) return writePng(rgba, width, height);
  const split = height >> 1;
  return writeAll(new FramePlan(undefined, width, height, [{ from: 0, to: split }, { from: split, to: height }]), rgba);
}

/** The frame's PNG in one piece on one thread (what a frame whose bands could not be joined gets). */
export function encodeFramePngWhole(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  checkSize(rgba, width, height);
  return writePng(rgba, width, height);
}

/** Frames of this process written in bands and joined, and those whose bands could not be joined. */
export const PNG_BAND_FRAMES = { joined: 0, whole: 0 };

function count(joined: Buffer | undefined): void {
  if (joined) PNG_BAND_FRAMES.joined++;
  else PNG_BAND_FRAMES.whole++;
}

/** Rows [from, to) of a frame; `key`, when set, names their pixels (same key, same pixels). */
export interface FrameRows {
  from: number;
  to: number;
  key?: string;
}

/** Rows of a frame to write, or whose PNG band was kept from an earlier frame. */
export interface BandPiece extends FrameRows {
  band?: PngBand;
}

/**
 * Writes frames' PNGs as `encodeFramePng` does, keeping the PNG band of each run of rows whose
 * pixels the caller names: a template rendered again with new text writes only the rows the text is
 * on, and joins the rest from an earlier frame (the same bytes as if written again).
 */
export class FramePngWriter {
  private readonly bands: ByteLru<PngBand>;

  constructor(budgetBytes: number, probationEntries: number) {
    this.bands = new ByteLru(budgetBytes, { probationEntries });
  }

  get stats() {
    return { bytes: this.bands.bytes, hits: this.bands.hits, misses: this.bands.misses };
  }

  /**
   * The frame's bands (`rows` cover it top to bottom), each run of rows cut into pieces of at most
   * PIECE_ROWS (the pool's threads share them; the same rows are always cut alike, so a named piece
   * is found again): kept ones, and the rest to write. Undefined for a frame written otherwise.
   */
  plan(width: number, height: number, rows: FrameRows[]): FramePlan | undefined {
    if (!writtenInBands(width, height) || !covers(rows, height)) return undefined;
    const pieces: BandPiece[] = rows.flatMap((r) => {
      const n = Math.ceil((r.to - r.from) / PIECE_ROWS);
      return Array.from({ length: n }, (_, i) => {
        const from = r.from + Math.round(((r.to - r.from) * i) / n);
        const to = r.from + Math.round(((r.to - r.from) * (i + 1)) / n);
        return { from, to, key: r.key && `${width}:${from}-${to}:${r.key}` };
      });
    });
    if (pieces.length > MAX_BANDS) return undefined;
    for (const p of pieces) if (p.key) p.band = this.bands.get(p.key);
    return new FramePlan(this.bands, width, height, pieces);
  }

  /** The frame's PNG, its named bands kept or reused. */
  async write(rgba: Buffer, width: number, height: number, rows: FrameRows[]): Promise<Buffer> {
    checkSize(rgba, width, height);
    const plan = this.plan(width, height, rows);
    return plan ? writeAll(plan, rgba) : encodeFramePng(rgba, width, height);
  }
}

/** One frame's bands being written (FramePngWriter.plan). */
export class FramePlan {
  /** The pieces whose pixels are needed, top to bottom. */
  readonly toWrite: BandPiece[];
  private readonly writing = new Map<BandPiece, Promise<PngBand | undefined>>();

  constructor(
    /** Where bands of named pieces are kept (none for a frame written once). */
    private readonly kept: ByteLru<PngBand> | undefined,
    readonly width: number,
    readonly height: number,
    readonly pieces: BandPiece[],
  ) {
    this.toWrite = pieces.filter((p) => !p.band);
  }

  /** Starts writing a piece's rows of the frame `rgba` on a pool thread (they are read before this returns). */
  write(piece: BandPiece, rgba: Buffer): void {
    checkSize(rgba, this.width, this.height);
    const png = writePng(rgba.subarray(piece.from * this.width * 4, piece.to * this.width * 4), this.width, piece.to - piece.from);
    const band = png.then((bytes) => {
      const parsed = parsePngBand(bytes);
      if (parsed && piece.key) this.kept?.set(piece.key, parsed, parsed.bytes);
      return parsed;
    });
    band.catch(() => undefined); // finish() reports it; a frame given up on before then must not leave it unhandled
    this.writing.set(piece, band);
  }

  /** The frame's PNG once every piece is written; undefined when the bands cannot be joined (write it whole). */
  async finish(): Promise<Buffer | undefined> {
    const bands = await Promise.all(this.pieces.map((p) => p.band ?? this.writing.get(p) ?? Promise.reject(new Error(`rows ${p.from}-${p.to} were not written`))));
    const joined = bands.every((b): b is PngBand => b !== undefined) ? joinPngBands(bands, this.height) : undefined;
    count(joined);
    return joined;
  }
}

function covers(rows: FrameRows[], height: number): boolean {
  return rows.every((r, i) => r.to > r.from && r.from === (i === 0 ? 0 : rows[i - 1]!.to)) && rows.at(-1)?.to === height;
}

/** Every piece of the plan written from `rgba` and joined; the frame written whole when they cannot be joined. */
async function writeAll(plan: FramePlan, rgba: Buffer): Promise<Buffer> {
  for (const piece of plan.toWrite) plan.write(piece, rgba);
  return (await plan.finish()) ?? writePng(rgba, plan.width, plan.height);
}

function checkSize(rgba: Buffer, width: number, height: number): void {
  if (rgba.length !== width * height * 4) throw new Error(`expected ${width * height * 4} bytes of RGBA pixels, got ${rgba.length}`);
}

function writePng(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  return Transformer.fromRgbaPixels(rgba, width, height).png({ compressionType: CompressionType.Fast, filterType: FilterType.Adaptive });
}
