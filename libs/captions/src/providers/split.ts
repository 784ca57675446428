/**
 * Cutting a long recording into parts a provider takes whole (speech-gamma: Google's inline audio
 * stops at about a minute), at pauses so that no word is cut in two. Works on 16 kHz mono 16-bit
 * PCM, the form the adapters re-encode to; positions are in samples.
 */
import { wavHeader } from '#libs/media';
import { PCM_RATE } from '../pcm.js';

/** Loudness is measured over frames of 25 ms. */
export const FRAME_SAMPLES = 400;
/**
 * A pause is 200 ms whose every frame is quiet: longer than the silent closure before a stop
 * consonant inside a word (50–100 ms), shorter than the pause between phrases.
 */
const PAUSE_FRAMES = 8;
/** Quiet: 26 dB (1/20 of the RMS) below the loudest frame of the part so far, or under −50 dBFS whatever the level. */
const QUIET_BELOW_LOUDEST = 0.05;
const QUIET_RMS = 10 ** (-50 / 20);
/** Windows within this factor (3.5 dB) of the quietest one's level are as quiet: one pause, cut in its middle. */
const EQUALLY_QUIET = 1.5;

export interface PartLimits {
  /** Longest part, in samples. */
  maxSamples: number;
  /** A part ends at the quietest pause in its last `searchSamples` (or hard at `maxSamples` when none is quiet). */
  searchSamples: number;
}

export interface AudioPart {
  /** Samples from the start of the recording: [start, end). */
  start: number;
  end: number;
}

/** The RMS loudness (0–1) of each 25 ms frame of 16-bit samples fed in order. */
export class LoudnessMeter {
  samples = 0;
  private readonly sums: number[] = [];
  private sum = 0;
  private inFrame = 0;

  push(samples: Int16Array): void {
    for (const value of samples) {
      const level = value / 32768;
      this.sum += level * level;
      if (++this.inFrame === FRAME_SAMPLES) {
        this.sums.push(this.sum);
        this.sum = 0;
        this.inFrame = 0;
      }
    }
    this.samples += samples.length;
  }

  /** Each frame's RMS (the last one over the samples it has). */
  frames(): Float32Array {
    const rms = new Float32Array(this.sums.length + (this.inFrame > 0 ? 1 : 0));
    this.sums.forEach((sum, frame) => (rms[frame] = Math.sqrt(sum / FRAME_SAMPLES)));
    if (this.inFrame > 0) rms[this.sums.length] = Math.sqrt(this.sum / this.inFrame);
    return rms;
  }
}

/**
 * The parts of a recording of `total` samples whose frames have `loudness`: each at most
 * `maxSamples` long, ending in the middle of the quietest pause of its last `searchSamples`, or at
 * `maxSamples` exactly when nothing there is quiet (continuous music or noise: there is no better
 * place).
 */
export function planParts(loudness: Float32Array, total: number, limits: PartLimits): AudioPart[] {
  const parts: AudioPart[] = [];
  let start = 0;
  while (total - start > limits.maxSamples) {
    const limit = start + limits.maxSamples;
    const end = pauseBefore(loudness, start, limit, limits.searchSamples) ?? limit;
    parts.push({ start, end });
    start = end;
  }
  if (total > start) parts.push({ start, end: total });
  return parts;
}

/**
 * Where to end a part that starts at `start` and may not go past `limit`: the middle of the
 * quietest pause (every 200 ms window within 1.5× the quietest window's level) that lies in the
 * last `searchSamples`; of equally quiet pauses, the latest (fewer parts). Null when none is quiet.
 */
function pauseBefore(loudness: Float32Array, start: number, limit: number, searchSamples: number): number | null {
  const end = Math.floor(limit / FRAME_SAMPLES);
  const first = Math.ceil(Math.max(start, limit - searchSamples) / FRAME_SAMPLES);
  if (end - first < PAUSE_FRAMES) return null;
  let loudest = 0;
  for (let f = Math.floor(start / FRAME_SAMPLES); f < end; f++) loudest = Math.max(loudest, loudness[f] ?? 0);
  // levels[i]: the loudest frame of the window that starts at frame first + i.
  const levels: number[] = [];
  for (let w = first; w + PAUSE_FRAMES <= end; w++) {
    let level = 0;
    for (let f = w; f < w + PAUSE_FRAMES; f++) level = Math.max(level, loudness[f] ?? 0);
    levels.push(level);
  }
  const quietest = Math.min(...levels);
  if (quietest > Math.max(QUIET_RMS, loudest * QUIET_BELOW_LOUDEST)) return null;
  const near = quietest * EQUALLY_QUIET;
  let last = levels.length - 1;
  while (levels[last]! > near) last--;
  let run = last;
  while (run > 0 && levels[run - 1]! <= near) run--;
  return (first + Math.round((run + last) / 2) + PAUSE_FRAMES / 2) * FRAME_SAMPLES;
}

/** 16 kHz mono 16-bit PCM with the 44-byte WAV header that describes it. */
export function wavOf(pcm: Buffer): Buffer {
  return Buffer.concat([wavHeader(pcm.length, PCM_RATE), pcm]);
}

/** Where a WAV's samples are (its `data` chunk), from its first bytes; null when they do not say. */
export function dataChunk(head: Buffer): { offset: number; size: number } | null {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return null;
  for (let at = 12; at + 8 <= head.length;) {
    const size = head.readUInt32LE(at + 4);
    if (head.toString('latin1', at, at + 4) === 'data') return { offset: at + 8, size };
    at += 8 + size + (size % 2);
  }
  return null;
}
