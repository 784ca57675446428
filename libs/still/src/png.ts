import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { CompressionType, FilterType, Transformer } from '@napi-rs/image';

const deflateRaw = promisify(zlib.deflateRaw);
const deflate = promisify(zlib.deflate);

/**
 * The PNG of a frame (RGBA pixels, straight alpha), as the still engine writes it: the Rust `png`
 * crate's fast mode (fdeflate: one pass, a Huffman code for filtered image bytes, runs only) with
 * adaptive filtering, through @napi-rs/image, off the main thread. A photographic 1080² frame takes
 * ~15 ms on one core where zlib's fastest settings took ~45 ms of CPU (encodePng below), for about
 * the same size (2.4 MB against 2.3 MB); flat designs ~6 ms (+15–20 % bytes). Always RGBA: an
 * opaque frame has alpha 255 throughout (a constant channel costs ~3 % after compression).
 */
export function encodeFramePng(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  if (rgba.length !== width * height * 4) return Promise.reject(new Error(`expected ${width * height * 4} bytes of RGBA pixels, got ${rgba.length}`));
  return Transformer.fromRgbaPixels(rgba, width, height).png({ compressionType: CompressionType.Fast, filterType: FilterType.Adaptive });
}

/**
 * A PNG encoder tuned for rendered frames, written in RGB or RGBA (the PDF page image, RGB, so that
 * the PDF needs no soft mask): every row uses the Sub filter and the filtered bytes are
 * deflated with zlib's run-length strategy, in row bands compressed in parallel on the libuv pool and
 * joined into one stream (each band but the last ends on a sync flush, as pigz does).
 *
 * Why: libvips' PNG writer without adaptive filtering spends most of its time looking for LZ77
 * matches that photographs do not have (a 1080² photo frame: ~85 ms for 3.2 MB); Sub + RLE takes a
 * quarter of that for a third fewer bytes, and keeps flat designs small (long zero runs after Sub).
 * The bands are pipelined: while the pool deflates band k, the main thread filters band k + 1. The
 * zlib trailer's Adler-32 is zlib's own (a stored, level-0 zlib stream of each band: memcpy speed)
 * combined across bands, not summed byte by byte in JavaScript. Output is standard 8-bit RGB or
 * RGBA, non-interlaced.
 */
export async function encodePng(raw: Buffer, width: number, height: number, channels: 3 | 4, bands = 4, inputChannels: 3 | 4 = channels): Promise<Buffer> {
  const stride = width * channels;
  const inStride = width * inputChannels;
  if (raw.length !== inStride * height) throw new Error(`expected ${inStride * height} bytes of pixels, got ${raw.length}`);
  if (inputChannels < channels) throw new Error('cannot add channels');
  const filtered = Buffer.allocUnsafe((stride + 1) * height);
  const n = Math.max(1, Math.min(bands, height));
  const rowsPer = Math.ceil(height / n);
  const parts: Promise<Buffer>[] = [];
  const sums: Promise<Buffer>[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < n; i++) {
    const y0 = i * rowsPer;
    const y1 = Math.min(height, y0 + rowsPer);
    if (y0 >= y1) break;
    subFilter(raw, filtered, width, channels, inputChannels, y0, y1);
    const band = filtered.subarray(y0 * (stride + 1), y1 * (stride + 1));
    const last = y1 === height;
    // One output buffer per band: the default 16 KB chunks cost a main-thread round trip each.
    const chunkSize = Math.max(64 * 1024, band.length + 1024);
    parts.push(deflateRaw(band, { chunkSize, level: 1, strategy: zlib.constants.Z_RLE, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH }));
    sums.push(deflate(band, { chunkSize: band.length + Math.ceil(band.length / 16_000) * 5 + 1024, level: 0 }));
    lengths.push(band.length);
  }
  const [deflated, stored] = await Promise.all([Promise.all(parts), Promise.all(sums)]);
  let checksum = 1;
  stored.forEach((z, i) => {
    checksum = adler32Combine(checksum, z.readUInt32BE(z.length - 4), lengths[i]!);
  });
  const header = Buffer.from([0x78, 0x01]);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(checksum);
  const idat = Buffer.concat([header, ...deflated, trailer]);

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = channels === 4 ? 6 : 2;
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** Rows y0..y1 of `raw` into `filtered`, each as filter byte 1 (Sub) and the bytes minus their left neighbour's. */
function subFilter(raw: Buffer, filtered: Buffer, width: number, channels: 3 | 4, inputChannels: 3 | 4, y0: number, y1: number): void {
  const stride = width * channels;
  const inStride = width * inputChannels;
  for (let y = y0; y < y1; y++) {
    const out = y * (stride + 1);
    const row = y * inStride;
    filtered[out] = 1;
    for (let c = 0; c < channels; c++) filtered[out + 1 + c] = raw[row + c]!;
    if (channels === 3) {
      for (let x = 1, src = row + inputChannels, dst = out + 4; x < width; x++, src += inputChannels, dst += 3) {
        filtered[dst] = raw[src]! - raw[src - inputChannels]!;
        filtered[dst + 1] = raw[src + 1]! - raw[src + 1 - inputChannels]!;
        filtered[dst + 2] = raw[src + 2]! - raw[src + 2 - inputChannels]!;
      }
    } else {
      for (let x = 1, src = row + 4, dst = out + 5; x < width; x++, src += 4, dst += 4) {
        filtered[dst] = raw[src]! - raw[src - 4]!;
        filtered[dst + 1] = raw[src + 1]! - raw[src - 3]!;
        filtered[dst + 2] = raw[src + 2]! - raw[src - 2]!;
        filtered[dst + 3] = raw[src + 3]! - raw[src - 1]!;
      }
    }
  }
}

/** zlib's adler32_combine: the Adler-32 of A followed by B from theirs and B's length. */
export function adler32Combine(adlerA: number, adlerB: number, lengthB: number): number {
  const BASE = 65521;
  const rem = lengthB % BASE;
  let sum1 = adlerA & 0xffff;
  let sum2 = (rem * sum1) % BASE;
  sum1 += (adlerB & 0xffff) + BASE - 1;
  sum2 += (adlerA >>> 16) + (adlerB >>> 16) + BASE - rem;
  if (sum1 >= BASE) sum1 -= BASE;
  if (sum1 >= BASE) sum1 -= BASE;
  if (sum2 >= BASE * 2) sum2 -= BASE * 2;
  if (sum2 >= BASE) sum2 -= BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))) >>> 0);
  return Buffer.concat([head, data, crc]);
}

/** zlib's Adler-32, in blocks of 5552 bytes between modulo reductions (the largest that cannot overflow). */
export function adler32(buf: Buffer): number {
  let a = 1;
  let b = 0;
  for (let at = 0; at < buf.length; ) {
    const end = Math.min(buf.length, at + 5552);
    for (; at < end; at++) {
      a += buf[at]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}
