import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pcmWav, runBinary } from '#libs/media';

/**
 * Speech with known words at known times, for the offline engine's tests and its benchmark:
 * espeak-ng says each phrase, the phrases are laid end to end with silences of known length
 * between them, so each phrase's time window follows from sample counts.
 */

const run = promisify(execFile);

/**
 * The espeak-ng voice pocketsphinx 0.8 recognises best by far (the default robotic voice comes
 * back as mostly other words); 165 words per minute, near natural speech.
 */
export const SPEECH_VOICE = 'en-us+klatt2';
export const SPEECH_WPM = 165;

export interface SpokenPhrase {
  text: string;
  /** Seconds from the start of the file: the phrase's first and last audible sample. */
  start: number;
  end: number;
}

export interface SynthesizedSpeech {
  /** A 16 kHz mono 16-bit WAV whose samples start at byte 44. */
  path: string;
  /** The same speech as MP3 (lame), when asked for. */
  mp3Path: string | null;
  phrases: SpokenPhrase[];
  durationSec: number;
}

export interface SynthesizeOptions {
  /** Where the files go (made if missing; a new folder under the system's temp folder by default). The caller removes it. */
  dir?: string;
  /** Silence before the first phrase, between phrases, and after the last, in seconds (defaults 0.5, 1.5, 0.5). */
  leadSec?: number;
  gapSec?: number;
  tailSec?: number;
  mp3?: boolean;
}

/** A sample below this (of 32768) counts as silence when the phrase's edges are trimmed. */
const SILENT = 64;

/** espeak-ng's 16-bit mono WAV: its sample rate and samples (its header's sizes are not trusted: it may stream). */
function readWav(wav: Buffer): { rate: number; samples: Int16Array } {
  if (wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') throw new Error('espeak-ng did not write a WAV');
  let rate = 0;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      if (wav.readUInt16LE(at + 8) !== 1 || wav.readUInt16LE(at + 10) !== 1 || wav.readUInt16LE(at + 22) !== 16) throw new Error('espeak-ng wrote other than 16-bit mono PCM');
      rate = wav.readUInt32LE(at + 12);
    }
    if (id === 'data') {
      const data = wav.subarray(at + 8, Math.min(wav.length, at + 8 + size) & ~1);
      const samples = new Int16Array(data.length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      return { rate, samples };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error('espeak-ng wrote a WAV without data');
}

function trimmed(samples: Int16Array): Int16Array {
  let from = 0;
  let to = samples.length;
  while (from < to && Math.abs(samples[from]!) < SILENT) from++;
  while (to > from && Math.abs(samples[to - 1]!) < SILENT) to--;
  return samples.subarray(from, to);
}


/**
 * Says `phrases` one after another (espeak-ng, SPEECH_VOICE) with the given silences between them,
 * and writes `speech.wav` (16 kHz mono, converted by the shipped ffmpeg) and optionally
 * `speech.mp3` (lame). Each phrase's window is its audible samples (espeak's own leading and
 * trailing silence trimmed).
 */
export async function synthesizeSpeech(phrases: string[], opts: SynthesizeOptions = {}): Promise<SynthesizedSpeech> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'speech-')));
  await mkdir(dir, { recursive: true });
  const parts: Int16Array[] = [];
  let rate = 0;
  for (const text of phrases) {
    const { stdout } = await run('espeak-ng', ['-v', SPEECH_VOICE, '-s', String(SPEECH_WPM), '--stdout', text], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    const wav = readWav(stdout);
    if (rate && wav.rate !== rate) throw new Error('espeak-ng changed its sample rate');
    rate = wav.rate;
    parts.push(trimmed(wav.samples));
  }
  const silence = (sec: number) => Math.round(sec * rate);
  const gap = silence(opts.gapSec ?? 1.5);
  const lead = silence(opts.leadSec ?? 0.5);
  const tail = silence(opts.tailSec ?? 0.5);
  const total = lead + parts.reduce((sum, p) => sum + p.length, 0) + gap * Math.max(0, parts.length - 1) + tail;
  const all = new Int16Array(total);
  const spoken: SpokenPhrase[] = [];
  let at = lead;
  parts.forEach((part, i) => {
    all.set(part, at);
    spoken.push({ text: phrases[i]!, start: at / rate, end: (at + part.length) / rate });
    at += part.length + gap;
  });
  const source = join(dir, 'espeak.wav');
  await writeFile(source, pcmWav(all, rate));
  const path = join(dir, 'speech.wav');
  // A plain 44-byte header (no metadata chunk), as pocketsphinx_continuous reads a .wav.
  await runBinary('ffmpeg', ['-v', 'error', '-nostdin', '-y', '-i', source, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact', path], { timeoutMs: 60_000 });
  await rm(source);
  let mp3Path: string | null = null;
  if (opts.mp3) {
    mp3Path = join(dir, 'speech.mp3');
    await run('lame', ['--quiet', '-b', '64', path, mp3Path]);
  }
  return { path, mp3Path, phrases: spoken, durationSec: total / rate };
}

/** Lower-case words without punctuation, as a word error rate compares them. */
export function plainWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * The Levenshtein alignment of two word lists: the edits (substitutions + deletions + insertions)
 * and the pairs of equal words it lines up, as [reference index, hypothesis index].
 */
export function alignWords(ref: readonly string[], hyp: readonly string[]): { edits: number; matches: [number, number][] } {
  const cost = Array.from({ length: ref.length + 1 }, (_, i) => Array.from({ length: hyp.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= ref.length; i++) {
    for (let j = 1; j <= hyp.length; j++) {
      cost[i]![j] = Math.min(cost[i - 1]![j]! + 1, cost[i]![j - 1]! + 1, cost[i - 1]![j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
  }
  const matches: [number, number][] = [];
  for (let i = ref.length, j = hyp.length; i > 0 && j > 0; ) {
    const same = ref[i - 1] === hyp[j - 1];
    if (cost[i]![j] === cost[i - 1]![j - 1]! + (same ? 0 : 1)) {
      if (same) matches.unshift([i - 1, j - 1]);
      i--;
      j--;
    } else if (cost[i]![j] === cost[i - 1]![j]! + 1) i--;
    else j--;
  }
  return { edits: cost[ref.length]![hyp.length]!, matches };
}

/**
 * Word error rate: (substitutions + deletions + insertions) / reference words, by the Levenshtein
 * distance over words (case and punctuation ignored). 0 is perfect; it can exceed 1.
 */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = plainWords(reference);
  const hyp = plainWords(hypothesis);
  if (ref.length === 0) return hyp.length === 0 ? 0 : 1;
  return alignWords(ref, hyp).edits / ref.length;
}
