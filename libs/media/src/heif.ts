import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';

/**
 * HEIF/HEIC pictures (what phones upload) are HEVC-coded: sharp's prebuilt libvips reads their header
 * but decodes AVIF only, and Chromium shows neither. Both engines and the media library decode them
 * once into a PNG with Debian's heif-convert (libheif-examples), under the same limits as any image.
 */
export const HEIF_CONVERT = 'heif-convert';

/** How long one decode may run when the caller gives no time (a 48-megapixel phone picture takes about a second). */
export const HEIF_DECODE_TIMEOUT_MS = 30_000;

/** Why a HEIF file cannot be decoded: a message for the user (damaged, too large, too slow). */
export class HeifDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeifDecodeError';
  }
}

export interface HeifDecodeOptions {
  /** The largest picture decoded, read from the header before anything is decoded. */
  maxPixels: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const mp = (pixels: number) => `${Math.round(pixels / 100_000) / 10} megapixels`;

/**
 * The picture of a HEIF/HEIC file as PNG bytes. The header's size is checked against `maxPixels`
 * first; heif-convert then runs without a shell on a private copy, killed after the time limit, and
 * its PNG must be the size the header promised and no larger than such a picture can be. Throws
 * HeifDecodeError for a file that cannot be used; rethrows the signal's reason on abort.
 */
export async function decodeHeif(bytes: Buffer, opts: HeifDecodeOptions): Promise<Buffer> {
  opts.signal?.throwIfAborted();
  const meta = await sharp(bytes, { limitInputPixels: false })
    .metadata()
    .catch(() => {
      throw new HeifDecodeError('The file starts like a HEIF/HEIC image but its header cannot be read');
    });
  if (meta.format !== 'heif' || !meta.width || !meta.height) throw new HeifDecodeError('The file starts like a HEIF/HEIC image but is not one');
  if (meta.width * meta.height > opts.maxPixels) {
    throw new HeifDecodeError(`The image is ${meta.width} × ${meta.height} pixels (${mp(meta.width * meta.height)}); at most ${mp(opts.maxPixels)} are decoded`);
  }
  // heif-convert decodes every picture of the file, not only the primary one sharp measured.
  const largest = Math.max(0, ...declaredSizes(bytes).map(([w, h]) => w * h));
  if (largest > opts.maxPixels) {
    throw new HeifDecodeError(`The file holds a picture of ${mp(largest)}; at most ${mp(opts.maxPixels)} are decoded`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'heif-'));
  try {
    const input = join(dir, 'in.heic');
    const output = join(dir, 'out.png');
    await writeFile(input, bytes, { mode: 0o600 });
    await convert(input, output, opts);
    // heif-convert numbers its outputs (out-1.png…) in the file's order of pictures when it holds
    // several; the primary one (the file's `pitm`, libvips' pagePrimary in the same order) is taken.
    const written = existsSync(output) ? output : join(dir, `out-${(meta.pagePrimary ?? 0) + 1}.png`);
    // 16-bit RGBA, uncompressed, is the most a PNG of this size holds (plus its chunks).
    const cap = meta.width * meta.height * 8 + 1024 * 1024;
    const size = await stat(written).then((s) => s.size, () => -1);
    if (size <= 0) throw new HeifDecodeError('The HEIF/HEIC image data is damaged or truncated: it cannot be decoded');
    if (size > cap) throw new HeifDecodeError('The HEIF/HEIC image decoded to more data than its size allows');
    const png = await readFile(written);
    const out = await sharp(png, { limitInputPixels: opts.maxPixels }).metadata().catch(() => undefined);
    if (!out || out.format !== 'png' || !out.width || !out.height || out.width * out.height > opts.maxPixels) {
      throw new HeifDecodeError('The HEIF/HEIC image data is damaged: its decoded picture cannot be read');
    }
    return png;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Every picture size a HEIF file declares (its `ispe` properties, ISO/IEC 23008-12 §6.5.3), read from
 * its top-level `meta` box: [width, height] pairs, none when the box cannot be found.
 */
export function declaredSizes(bytes: Buffer): [number, number][] {
  for (let at = 0; at + 8 <= bytes.length;) {
    let size = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    if (size === 1 && at + 16 <= bytes.length) size = Number(bytes.readBigUInt64BE(at + 8));
    else if (size === 0) size = bytes.length - at;
    if (size < 8) return [];
    if (type === 'meta') {
      const meta = bytes.subarray(at, Math.min(bytes.length, at + size));
      const sizes: [number, number][] = [];
      // An ispe box: size 20, 'ispe', version and flags, width, height.
      for (let i = meta.indexOf('ispe'); i >= 4; i = meta.indexOf('ispe', i + 4)) {
        if (meta.readUInt32BE(i - 4) === 20 && i + 16 <= meta.length) sizes.push([meta.readUInt32BE(i + 8), meta.readUInt32BE(i + 12)]);
      }
      return sizes;
    }
    at += size;
  }
  return [];
}

function convert(input: string, output: string, opts: HeifDecodeOptions): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? HEIF_DECODE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    execFile(
      HEIF_CONVERT,
      ['--quiet', input, output],
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024, ...(opts.signal ? { signal: opts.signal } : {}) },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        if (opts.signal?.aborted) return reject(opts.signal.reason ?? err);
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
        if (e.code === 'ENOENT') return reject(new Error(`${HEIF_CONVERT} is not installed (Debian package libheif-examples)`));
        if (e.killed) return reject(new HeifDecodeError(`Decoding the HEIF/HEIC image took longer than ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}; it was stopped`));
        const why = String(stderr).trim().split('\n').pop()?.slice(0, 200);
        reject(new HeifDecodeError(`The HEIF/HEIC image data is damaged or truncated: it cannot be decoded${why ? ` (${why})` : ''}`));
      },
    );
  });
}
