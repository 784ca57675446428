import sharp from 'sharp';
import { streamBinary } from './binaries.js';

/** The waveform picture's size in pixels. */
export const WAVEFORM_WIDTH = 800;
export const WAVEFORM_HEIGHT = 160;
/** Samples per second the audio is decoded to for the picture (mono, 16-bit): enough for its peaks, small to stream. */
const RATE = 8000;
const COLOR = [99, 102, 241, 255] as const;

/** Bins per column while decoding: enough to stretch the picture over the audio actually decoded when it is shorter than expected. */
const BINS_PER_COLUMN = 8;

/**
 * Peak levels (0–1) of a 16-bit mono WAV stream fed chunk by chunk (never held whole: three hours
 * at 8 kHz would be 170 MB), in bins laid out over the expected length.
 */
export class WaveformPeaks {
  samples = 0;
  private readonly bins: Float32Array;
  private header: Buffer | undefined = Buffer.alloc(0);
  private odd: number | undefined;
  private readonly perBin: number;

  constructor(
    private readonly columns: number,
    expectedSamples: number,
  ) {
    this.bins = new Float32Array(columns * BINS_PER_COLUMN);
    this.perBin = Math.max(1, expectedSamples / this.bins.length);
  }

  push(chunk: Buffer): void {
    if (this.header) {
      const header = Buffer.concat([this.header, chunk]);
      const start = wavDataStart(header);
      if (start === undefined) {
        if (header.length > 65536) throw new Error('The decoded audio has no data chunk');
        this.header = header;
        return;
      }
      this.header = undefined;
      chunk = header.subarray(start);
    }
    let at = 0;
    if (this.odd !== undefined && chunk.length) {
      this.sample((((chunk[0]! << 8) | this.odd) << 16) >> 16);
      this.odd = undefined;
      at = 1;
    }
    for (; at + 1 < chunk.length; at += 2) this.sample(chunk.readInt16LE(at));
    if (at < chunk.length) this.odd = chunk[at];
  }

  private sample(value: number): void {
    const bin = Math.min(this.bins.length - 1, Math.floor(this.samples++ / this.perBin));
    const level = Math.abs(value) / 32768;
    if (level > this.bins[bin]!) this.bins[bin] = level;
  }

  /** One peak per column, spread over the bins that received samples. */
  peaks(): Float32Array {
    const used = Math.max(1, Math.min(this.bins.length, Math.ceil(this.samples / this.perBin)));
    const out = new Float32Array(this.columns);
    for (let x = 0; x < this.columns; x++) {
      const from = Math.floor((x * used) / this.columns);
      const to = Math.max(from + 1, Math.floor(((x + 1) * used) / this.columns));
      for (let b = from; b < to; b++) out[x] = Math.max(out[x]!, this.bins[b]!);
    }
    return out;
  }
}

/** Where the samples of a RIFF/WAVE stream start; undefined until the `data` chunk header has arrived. */
function wavDataStart(buf: Buffer): number | undefined {
  if (buf.length < 12) return undefined;
  if (buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') throw new Error('The decoded audio is not WAV');
  let at = 12;
  while (at + 8 <= buf.length) {
    if (buf.toString('latin1', at, at + 4) === 'data') return at + 8;
    const size = buf.readUInt32LE(at + 4);
    at += 8 + size + (size & 1);
  }
  return undefined;
}

/**
 * A PNG of the peaks, mirrored around the middle line and scaled so the loudest column fills the
 * height (near-silence stays a flat line rather than amplified noise); transparent background.
 */
export function waveformPng(peaks: Float32Array, height = WAVEFORM_HEIGHT): Promise<Buffer> {
  const width = peaks.length;
  const loudest = peaks.reduce((a, b) => Math.max(a, b), 0);
  const gain = loudest > 0.001 ? 1 / loudest : 1;
  const pixels = Buffer.alloc(width * height * 4);
  const middle = (height - 1) / 2;
  for (let x = 0; x < width; x++) {
    const half = Math.max(0.5, Math.min(1, peaks[x]! * gain) * middle);
    for (let y = Math.floor(middle - half); y <= Math.ceil(middle + half); y++) {
      if (y < 0 || y >= height) continue;
      pixels.set(COLOR, (y * width + x) * 4);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 9 }).toBuffer();
}

/**
 * Decodes the first audio stream of `file` (at most `durationSec`) with the shipped ffmpeg: the
 * waveform's peaks, and how many seconds actually decoded (0 when nothing could be).
 */
export async function audioPeaks(file: string, durationSec: number, opts: { signal?: AbortSignal } = {}): Promise<{ peaks: Float32Array; decodedSec: number }> {
  const collector = new WaveformPeaks(WAVEFORM_WIDTH, durationSec * RATE);
  const args = ['-v', 'error', '-nostdin', '-i', file, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(RATE), '-c:a', 'pcm_s16le', '-t', String(durationSec), '-f', 'wav', 'pipe:1'];
  await streamBinary('ffmpeg', args, (chunk) => collector.push(chunk), opts);
  return { peaks: collector.peaks(), decodedSec: collector.samples / RATE };
}
