import { crc32 } from 'node:zlib';

/*
 * One PNG from PNGs of a frame's horizontal bands, each written by the Rust `png` crate (fdeflate) on
 * a pool thread of its own, or kept from an earlier frame (docs/decisions.md "Speed (issue 33): a
 * still's PNG in bands").
 *
 * Each band's zlib stream is one final dynamic deflate block. Joined: every block but the last loses
 * its BFINAL bit, an empty stored block realigns to a byte after it, the next block follows with its
 * bytes copied as they are (empty fixed-code blocks, 10 bits each, line its bits up with theirs), and
 * the Adler-32s are combined. A band's rows were filtered as if the row above were zeros: every row
 * but its first refers only to rows of its own band, and the first is right under the real row above
 * only when its filter is None or Sub. Against zeros Up writes the same bytes as None and Paeth the
 * same as Sub, so those two are rewritten (one Huffman code swapped for another). Anything else (Avg
 * on that row, another block layout) is not joinable, and the caller writes the frame otherwise.
 */
export interface PngBand {
  /** Rows of the frame it holds. */
  rows: number;
  /** What a cache holds for it (its zlib stream and a few fields). */
  bytes: number;
  ihdr: Buffer;
  zlib: Buffer;
  /** Bit where the block's header ends (its first code), and the bit after its end-of-block code. */
  headerEnd: number;
  blockEnd: number;
  /** The first row's filter byte, the bit after its literal's code, and that code's length. */
  filter: number;
  codeEnd: number;
  filterLength: number;
  /** The filter the first row gets under a real row above, and its literal's code. */
  rewritten: number;
  code: number;
  codeLength: number;
}

/**
 * A band's PNG, as @napi-rs/image writes it, read for joining: undefined when it cannot be joined
 * (another block layout, its first row filtered with Avg, or a code that could copy the first byte).
 */
export function parsePngBand(png: Buffer): PngBand | undefined {
  const parts = pngParts(png);
  if (!parts || rowBytesOf(parts.ihdr) === undefined) return undefined;
  const z = parts.zlib;
  if (!zlibHeaderOk(z) || readBits(z, 16, 1) !== 1) return undefined;
  const block = dynamicHeader(z, 16);
  if (!block) return undefined;
  // Where the block ends: its end-of-block code, the last bits before zero padding.
  const blockEnd = lastSetBit(z, 2, z.length - 4) + 1;
  const eob = block.lengths[END_OF_BLOCK];
  if (!eob || blockEnd - eob < block.end || readCode(z, blockEnd - eob, eob) !== block.codes[END_OF_BLOCK]) return undefined;
  // The first symbol: the first row's filter byte, as a literal.
  const first = decodeSymbol(z, block.end, block.lookup);
  if (!first) return undefined;
  const filter = first.symbol;
  const rewritten = ZERO_ROW_EQUIVALENT[filter];
  if (rewritten === undefined || !block.lengths[rewritten] || (block.lengths[filter]! - block.lengths[rewritten]!) & 1) return undefined;
  if (rewritten !== filter) {
    // The rewritten byte must not be copied by a match: fdeflate's only distance is 1 (runs), so only
    // a match right after it could; one there, or any other distance, and the band is not joined.
    if (block.distances.some((l, i) => l !== 0 && i !== 0)) return undefined;
    const second = decodeSymbol(z, first.end, block.lookup);
    if (!second || second.symbol >= END_OF_BLOCK) return undefined;
  }
  return {
    rows: parts.ihdr.readUInt32BE(4),
    bytes: z.length + 256,
    ihdr: Buffer.from(parts.ihdr),
    zlib: z,
    headerEnd: block.end,
    blockEnd,
    filter,
    codeEnd: first.end,
    filterLength: block.lengths[filter]!,
    rewritten,
    code: block.codes[rewritten]!,
    codeLength: block.lengths[rewritten]!,
  };
}

/** The frame's PNG from its bands, top to bottom; undefined when they do not make one frame. */
export function joinPngBands(bands: PngBand[], frameHeight: number): Buffer | undefined {
  try {
    return join(bands, frameHeight);
  } catch {
    return undefined; // bands that do not read as parsePngBand said: the caller writes the frame whole
  }
}

function join(bands: PngBand[], frameHeight: number): Buffer | undefined {
  const [head] = bands;
  if (!head) return undefined;
  const rowBytes = rowBytesOf(head.ihdr)!;
  if (bands.some((b) => !b.ihdr.subarray(0, 4).equals(head.ihdr.subarray(0, 4)) || !b.ihdr.subarray(8).equals(head.ihdr.subarray(8)))) return undefined;
  if (bands.reduce((n, b) => n + b.rows, 0) !== frameHeight) return undefined;

  const ihdrAt = 8;
  const idatAt = ihdrAt + 12 + 13;
  const dataAt = idatAt + 8;
  const out = Buffer.allocUnsafe(dataAt + bands.reduce((n, b) => n + b.zlib.length + 16, 0) + 4 + 12);
  PNG_SIGNATURE.copy(out, 0);
  const ihdr = Buffer.from(head.ihdr);
  ihdr.writeUInt32BE(frameHeight, 4);
  writeChunk(out, ihdrAt, 'IHDR', ihdr);

  const bits = new BitWriter(out, dataAt);
  let adler = 1;
  bands.forEach((b, i) => {
    const last = i === bands.length - 1;
    const z = b.zlib;
    // The last block is copied to its stream's end (its padding is the output's); the others to their end-of-block code.
    const end = last ? (z.length - 4) * 8 : b.blockEnd;
    if (i === 0) {
      bits.copy(z, 0, end);
      if (!last) out[dataAt + 2] &= ~1; // BFINAL
      adler = z.readUInt32BE(z.length - 4);
      return;
    }
    // An empty stored block realigns to a byte; empty fixed-code blocks (10 bits) then line the
    // band's bits up with where they sit in its own stream, so that most of them are copied as bytes.
    bits.write(0, 3); // BFINAL 0, BTYPE 00
    bits.align();
    bits.write(0x0000, 16);
    bits.write(0xffff, 16);
    const shift = b.filterLength - b.codeLength;
    for (let k = (((shift % 8) + 8) % 8) / 2; k > 0; k--) bits.write(0b010, 10); // BFINAL 0, BTYPE 01, end of block (7 zero bits)
    bits.write(last ? 1 : 0, 1);
    for (let p = 17; p < b.headerEnd; p++) bits.write(readBits(z, p, 1), 1);
    bits.writeCode(b.code, b.codeLength);
    bits.copy(z, b.codeEnd, end);
    const raw = b.rows * (rowBytes + 1);
    adler = adler32Combine(adler, adlerWithFirstByte(z.readUInt32BE(z.length - 4), b.rewritten - b.filter, raw), raw);
  });
  bits.align();
  let at = dataAt + (bits.pos >> 3);
  out.writeUInt32BE(adler, at);
  at += 4;
  closeChunk(out, idatAt, 'IDAT', at - dataAt);
  at += 4;
  writeChunk(out, at, 'IEND', EMPTY);
  return out.subarray(0, at + 12);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const EMPTY = Buffer.alloc(0);
const END_OF_BLOCK = 256;
const ADLER_BASE = 65521;
/** A first row's filter under a row of zeros → the filter that writes the same bytes under any row. */
const ZERO_ROW_EQUIVALENT: Record<number, number> = { 0: 0, 1: 1, 2: 0, 4: 1 };
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** IHDR's data and the IDAT chunks' data of a PNG holding only IHDR, IDAT… and IEND. */
function pngParts(png: Buffer): { ihdr: Buffer; zlib: Buffer } | undefined {
  if (png.length < 8 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  let ihdr: Buffer | undefined;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    if (at + 12 > png.length) return undefined;
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    at += 12 + length;
    if (type === 'IHDR' && !ihdr && length === 13) ihdr = data;
    else if (type === 'IDAT' && ihdr) idat.push(data);
    else if (type === 'IEND' && ihdr && idat.length && at === png.length) return { ihdr, zlib: idat.length === 1 ? idat[0] : Buffer.concat(idat) };
    else return undefined;
  }
  return undefined;
}

/** Bytes per row (before the filter byte) of 8-bit, non-interlaced grey, RGB, grey+alpha or RGBA. */
function rowBytesOf(ihdr: Buffer): number | undefined {
  const channels: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };
  const n = channels[ihdr[9]];
  if (ihdr[8] !== 8 || n === undefined || ihdr[10] !== 0 || ihdr[11] !== 0 || ihdr[12] !== 0) return undefined;
  return ihdr.readUInt32BE(0) * n;
}

function zlibHeaderOk(z: Buffer): boolean {
  return z.length > 8 && (z[0] & 0x0f) === 8 && (z[1] & 0x20) === 0 && ((z[0] << 8) | z[1]) % 31 === 0;
}

function writeChunk(out: Buffer, at: number, type: string, data: Buffer): void {
  data.copy(out, at + 8);
  closeChunk(out, at, type, data.length);
}

/** A chunk around the `length` bytes of data already at `at + 8`: its length, type and CRC. */
function closeChunk(out: Buffer, at: number, type: string, length: number): void {
  out.writeUInt32BE(length, at);
  out.write(type, at + 4, 'latin1');
  out.writeUInt32BE(crc32(out.subarray(at + 4, at + 8 + length)), at + 8 + length);
}

/** `n` bits from bit `pos`, least significant first (how deflate packs header fields). */
function readBits(data: Uint8Array, pos: number, n: number): number {
  let value = 0;
  for (let i = 0; i < n; i++, pos++) value |= ((data[pos >> 3] >> (pos & 7)) & 1) << i;
  return value;
}

/** A Huffman code of `length` bits from bit `pos` (deflate packs codes most significant bit first). */
function readCode(data: Uint8Array, pos: number, length: number): number {
  let code = 0;
  for (let i = 0; i < length; i++, pos++) code = (code << 1) | ((data[pos >> 3] >> (pos & 7)) & 1);
  return code;
}

function lastSetBit(data: Uint8Array, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (data[i]) return i * 8 + 31 - Math.clz32(data[i]);
  return -1;
}

interface HuffmanTable { lengths: number[]; codes: number[]; lookup: Map<number, number> }

/** RFC 1951 §3.2.2: the canonical codes of a list of code lengths. */
function huffmanTable(lengths: number[]): HuffmanTable {
  const count = new Array<number>(16).fill(0);
  for (const l of lengths) if (l) count[l]++;
  const next = new Array<number>(16).fill(0);
  for (let len = 1, code = 0; len < 16; len++) {
    code = (code + (len > 1 ? count[len - 1] : 0)) << 1;
    next[len] = code;
  }
  const codes = lengths.map((l) => (l ? next[l]++ : -1));
  const lookup = new Map<number, number>();
  lengths.forEach((l, symbol) => l && lookup.set((l << 16) | codes[symbol], symbol));
  return { lengths, codes, lookup };
}

function decodeSymbol(data: Uint8Array, pos: number, lookup: Map<number, number>): { symbol: number; end: number } | undefined {
  if (pos + 15 > data.length * 8) return undefined;
  let code = 0;
  for (let len = 1; len <= 15; len++, pos++) {
    code = (code << 1) | ((data[pos >> 3] >> (pos & 7)) & 1);
    const symbol = lookup.get((len << 16) | code);
    if (symbol !== undefined) return { symbol, end: pos + 1 };
  }
  return undefined;
}

/** RFC 1951 §3.2.7: a dynamic block's header from its BFINAL bit at `pos`; its literal/length code and where its data starts. */
function dynamicHeader(data: Uint8Array, pos: number): (HuffmanTable & { distances: number[]; end: number }) | undefined {
  if (readBits(data, pos + 1, 2) !== 2) return undefined;
  let p = pos + 3;
  const hlit = readBits(data, p, 5) + 257;
  const hdist = readBits(data, p + 5, 5) + 1;
  const hclen = readBits(data, p + 10, 4) + 4;
  p += 14;
  const codeLengths = new Array<number>(19).fill(0);
  for (let i = 0; i < hclen; i++, p += 3) codeLengths[CODE_LENGTH_ORDER[i]] = readBits(data, p, 3);
  const { lookup } = huffmanTable(codeLengths);
  const lengths: number[] = [];
  while (lengths.length < hlit + hdist) {
    const next = decodeSymbol(data, p, lookup);
    if (!next) return undefined;
    p = next.end;
    const s = next.symbol;
    if (s < 16) lengths.push(s);
    else if (s === 16) {
      if (!lengths.length) return undefined;
      const previous = lengths[lengths.length - 1];
      for (let r = 3 + readBits(data, p, 2); r > 0; r--) lengths.push(previous);
      p += 2;
    } else {
      const [extra, base] = s === 17 ? [3, 3] : [7, 11];
      for (let r = base + readBits(data, p, extra); r > 0; r--) lengths.push(0);
      p += extra;
    }
  }
  if (lengths.length !== hlit + hdist) return undefined;
  return { ...huffmanTable(lengths.slice(0, hlit)), distances: lengths.slice(hlit), end: p };
}

/** Writes deflate's bit stream into `out` from byte `base`; bytes past the current bit are not read. */
class BitWriter {
  pos = 0;

  constructor(
    private readonly out: Buffer,
    private readonly base: number,
  ) {}

  /** `n` bits of `value`, least significant first. */
  write(value: number, n: number): void {
    for (let i = 0; i < n; i++, this.pos++) {
      const at = this.base + (this.pos >> 3);
      if ((this.pos & 7) === 0) this.out[at] = 0;
      this.out[at] |= ((value >> i) & 1) << (this.pos & 7);
    }
  }

  /** A Huffman code, most significant bit first. */
  writeCode(code: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) this.write((code >> i) & 1, 1);
  }

  /** Bits [from, to) of `src`, which must sit at the same place in their byte as the writer's next bit: copied as bytes. */
  copy(src: Buffer, from: number, to: number): void {
    if (to <= from) return;
    if ((from & 7) !== (this.pos & 7)) throw new Error('misaligned bit copy');
    const at = this.base + (this.pos >> 3);
    const low = (1 << (from & 7)) - 1;
    const kept = this.out[at]! & low;
    src.copy(this.out, at, from >> 3, ((to - 1) >> 3) + 1);
    this.out[at] = (this.out[at]! & ~low & 0xff) | (from & 7 ? kept : 0);
    this.pos += to - from;
    if (this.pos & 7) this.out[this.base + (this.pos >> 3)] &= (1 << (this.pos & 7)) - 1;
  }

  /** On to the next byte (the rest of this one is zero). */
  align(): void {
    this.pos = (this.pos + 7) & ~7;
  }
}

/** The Adler-32 of `length` bytes after their first byte changed by `delta`: it is in every one of the `length` running sums. */
function adlerWithFirstByte(adler: number, delta: number, length: number): number {
  const s1 = mod(adler & 0xffff, delta);
  const s2 = mod(adler >>> 16, (delta * (length % ADLER_BASE)) % ADLER_BASE);
  return ((s2 << 16) | s1) >>> 0;
}

function mod(value: number, add: number): number {
  return (((value + add) % ADLER_BASE) + ADLER_BASE) % ADLER_BASE;
}

/** zlib's adler32_combine: the Adler-32 of A followed by B from theirs and B's length. */
function adler32Combine(adlerA: number, adlerB: number, lengthB: number): number {
  const rem = lengthB % ADLER_BASE;
  let sum1 = adlerA & 0xffff;
  let sum2 = (rem * sum1) % ADLER_BASE;
  sum1 += (adlerB & 0xffff) + ADLER_BASE - 1;
  sum2 += (adlerA >>> 16) + (adlerB >>> 16) + ADLER_BASE - rem;
  sum1 %= ADLER_BASE;
  sum2 %= ADLER_BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}
