import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isExecutable, onPath } from '#libs/core';
import { decodeBudgetMs, decodePcmWav, PCM_RATE } from './pcm.js';
import { parseSphinxWords, shapeWords } from './sphinx-words.js';
import { SpeechProviderError } from './speech.js';
import type { Recognition, RecognitionSettings, SpeechAudio, SpeechEngine, SpeechLanguage, SpeechModel, SpeechSupport } from './speech.js';

/**
 * The offline speech engine for self-hosters (`--engine local` on a connection): CMU
 * pocketsphinx (Debian's pocketsphinx 0.8 and its US English model) on this machine; no account,
 * no network. The recording is decoded by the shipped ffmpeg to 16 kHz mono 16-bit PCM in a
 * temporary WAV (removed afterwards), which pocketsphinx_continuous reads with word times on.
 * Weaker than the cloud providers (docs/decisions.md gives its word error rate on clear speech).
 */

export const LOCAL_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
export const LOCAL_MODEL = 'en-us';

/** Largest recording the engine takes: the media library's default upload limit (§8). */
export const LOCAL_MAX_BYTES = 200 * 1024 * 1024;
/** Longest recording the engine takes, in seconds. */
export const LOCAL_MAX_DURATION_SEC = 2 * 60 * 60;

const WAV_HEADER_BYTES = 44;

/** pocketsphinx's time: a fixed allowance plus a share of the audio's duration (it runs at ~0.1–0.2× real time on one core). */
const RECOGNITION_BASE_MS = 30_000;
const RECOGNITION_MS_PER_SEC = 2_000;
/** More than any transcript of LOCAL_MAX_DURATION_SEC prints (about 40 bytes a word). */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * pocketsphinx's search settings, tuned for speed only where the word error rate stayed the same
 * (measured on 20 sentences said by five espeak-ng voices, and on the tests' phrases; docs/benchmarks.md):
 * `-fwdflat no` skips the second, flat-lexicon search pass: about 30 % less CPU and no more errors
 * (fewer on continuous speech), as long as the best path through the word lattice is taken
 * (`-bestpath yes`, the default, kept explicit: without it the errors nearly double). Not kept:
 * `-topn 3` and `-maxwpf 20` (another ~10 % less CPU, the same average error rate, but whole
 * sentences flipped to other words on some recordings), `-topn 2` (+4 points of errors), `-ds 2`
 * (every other frame: more errors and no faster), `-maxhmmpf` and `-pl_window` (no steady gain).
 */
export const SPHINX_SEARCH_FLAGS: readonly string[] = ['-fwdflat', 'no', '-bestpath', 'yes'];

/** The formats the media library accepts: the audio ones, and video ones (ffmpeg reads their audio track). */
export const LOCAL_FORMATS = ['mp3', 'wav', 'ogg', 'flac', 'm4a', 'mp4', 'mov', 'webm'] as const;

export interface LocalSpeechOptions {
  /** The decoder; default: pocketsphinx_continuous on PATH (Debian's package). */
  binary?: string;
  /** The model folder (acoustic model `en-us/`, `en-us.lm.bin`, `cmudict-en-us.dict`); default LOCAL_MODEL_DIR. */
  modelDir?: string;
  maxBytes?: number;
  maxDurationSec?: number;
  /** Where the temporary WAV goes (a fresh folder under it, removed afterwards); default the system's. */
  tmpDir?: string;
}

/** util-linux `setpriv`, so a decoder outlives no worker that dies (a parent-death signal). */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(isExecutable);

const tail = (text: string) => text.trim().split('\n').slice(-3).join(' ');

/**
 * ffmpeg's first two distinct error lines, without its `[demuxer @ 0x…]` prefixes and without the
 * lines that name our files (a server path is nobody's business).
 */
function ffmpegReason(stderr: string[], paths: string[]): string {
  const lines = stderr
    .map((line) => line.replace(/^\[[^\]]* @ 0x[0-9a-f]+\] /, '').replace(/\.$/, '').trim())
    .filter((line) => line && !paths.some((path) => line.includes(path)));
  return [...new Set(lines)].slice(0, 2).join('; ') || 'ffmpeg failed';
}

export class LocalSpeechEngine implements SpeechEngine {
  readonly support: SpeechSupport;
  readonly formats: readonly string[] = LOCAL_FORMATS;
  readonly languages: readonly SpeechLanguage[] = [{ code: 'en-US', label: 'English (United States)' }];
  readonly models: readonly SpeechModel[] = [
    {
      id: LOCAL_MODEL,
      label: 'CMU Sphinx US English (offline)',
      hint: 'Runs on this server: no account, nothing leaves it. US English only; best on clear speech, well behind the cloud providers on noisy or accented audio. Full stops at long pauses, no other punctuation.',
    },
  ];
  readonly defaultModel = LOCAL_MODEL;
  private readonly binary: string;
  private readonly modelDir: string;
  readonly maxDurationSec: number;
  private readonly tmpDir: string | undefined;

  constructor(opts: LocalSpeechOptions = {}) {
    this.binary = opts.binary ?? 'pocketsphinx_continuous';
    this.modelDir = opts.modelDir ?? LOCAL_MODEL_DIR;
    this.maxDurationSec = opts.maxDurationSec ?? LOCAL_MAX_DURATION_SEC;
    this.tmpDir = opts.tmpDir;
    this.support = {
      video: true,
      autoLanguage: false,
      multiLanguage: false,
      diarize: false,
      keywords: false,
      profanityFilter: true,
      maxBytes: opts.maxBytes ?? LOCAL_MAX_BYTES,
    };
  }

  async transcribe(audio: SpeechAudio, settings: RecognitionSettings, signal: AbortSignal): Promise<Recognition> {
    this.refuse(audio, settings);
    signal.throwIfAborted();
    const dir = await mkdtemp(join(this.tmpDir ?? tmpdir(), 'speech-local-'));
    try {
      const wav = join(dir, 'audio.wav');
      const audioSec = await this.decode(audio, wav, signal);
      const words = audioSec > 0 ? parseSphinxWords(await this.recognise(wav, audioSec, signal)) : [];
      return { languageCode: 'en-US', model: LOCAL_MODEL, words: shapeWords(words, settings), audioSec };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Settings and recordings the engine cannot honour, refused before any work. */
  private refuse(audio: SpeechAudio, settings: RecognitionSettings): void {
    const no = (reason: string) => new SpeechProviderError('rejected', `The offline engine ${reason}`);
    if (!/^en(-us)?$/i.test(settings.languageCode)) throw no(`recognises US English (en-US) only, not "${settings.languageCode}"`);
    if (settings.alternativeLanguageCodes.length > 0) throw no('recognises one language (en-US) only');
    if (settings.model !== null && settings.model !== LOCAL_MODEL) throw no(`has one model, "${LOCAL_MODEL}", not "${settings.model}"`);
    if (settings.diarize) throw no('does not label speakers');
    if (settings.keywords.length > 0) throw no('does not take keywords');
    if (!this.formats.includes(audio.format)) throw no(`cannot read ${audio.format} (it reads ${this.formats.join(', ')})`);
    if (audio.sizeBytes > this.support.maxBytes) throw no(`takes recordings up to ${Math.floor(this.support.maxBytes / 1024 / 1024)} MB`);
    if (audio.durationSec > this.maxDurationSec) throw no(`takes recordings up to ${this.maxDurationSec / 60} minutes`);
  }

  /** The recording's first audio track as a 16 kHz mono 16-bit WAV at `wav`; returns its seconds. */
  private async decode(audio: SpeechAudio, wav: string, signal: AbortSignal): Promise<number> {
    const limitSec = this.maxDurationSec + 1;
    const timeoutMs = decodeBudgetMs(audio.durationSec, this.maxDurationSec);
    try {
      await decodePcmWav(audio.path, wav, { limitSec, signal, timeoutMs });
    } catch (err) {
      signal.throwIfAborted();
      const cause = (err as Error).cause as { killed?: boolean; message?: string } | undefined;
      if (cause?.killed) throw new SpeechProviderError('rejected', `The recording could not be decoded within ${Math.round(timeoutMs / 1000)} s`);
      // execFile's message: `Command failed: <command line>` then ffmpeg's whole stderr.
      const stderr = (cause?.message ?? (err as Error).message).split('\n').slice(1);
      if (stderr.some((line) => line.includes('matches no streams'))) throw new SpeechProviderError('rejected', 'The recording has no audio track');
      throw new SpeechProviderError('rejected', `The recording could not be decoded: ${ffmpegReason(stderr, [audio.path, wav])}`);
    }
    const file = await open(wav, 'r');
    try {
      const header = Buffer.alloc(WAV_HEADER_BYTES);
      const { bytesRead } = await file.read(header, 0, WAV_HEADER_BYTES, 0);
      // pocketsphinx skips exactly 44 bytes of a .wav: the samples must start there.
      if (bytesRead < WAV_HEADER_BYTES || header.toString('latin1', 36, 40) !== 'data') throw new Error('ffmpeg wrote a WAV whose samples do not start at byte 44');
      const seconds = ((await file.stat()).size - WAV_HEADER_BYTES) / 2 / PCM_RATE;
      if (seconds > this.maxDurationSec) throw new SpeechProviderError('rejected', `The offline engine takes recordings up to ${this.maxDurationSec / 60} minutes`);
      return seconds;
    } finally {
      await file.close();
    }
  }

  /** pocketsphinx_continuous on the WAV: its standard output (word times). */
  private recognise(wav: string, audioSec: number, signal: AbortSignal): Promise<string> {
    const binary = onPath(this.binary);
    if (!binary) return Promise.reject(new SpeechProviderError('unavailable', `${this.binary} is not installed (Debian package pocketsphinx)`));
    if (!existsSync(join(this.modelDir, 'en-us', 'mdef'))) return Promise.reject(new SpeechProviderError('unavailable', `The speech model is not installed at ${this.modelDir} (Debian package pocketsphinx-en-us)`));
    const args = [
      '-infile', wav, '-time', 'yes', '-samprate', String(PCM_RATE),
      '-hmm', join(this.modelDir, 'en-us'), '-lm', join(this.modelDir, 'en-us.lm.bin'), '-dict', join(this.modelDir, 'cmudict-en-us.dict'),
      ...SPHINX_SEARCH_FLAGS,
    ];
    const timeoutMs = RECOGNITION_BASE_MS + Math.ceil(RECOGNITION_MS_PER_SEC * audioSec);
    return new Promise((resolve, reject) => {
      const child = spawn(SETPRIV ?? binary, SETPRIV ? ['--pdeathsig', 'KILL', binary, ...args] : args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        killSignal: 'SIGKILL',
        timeout: timeoutMs,
        signal,
      });
      const out: Buffer[] = [];
      let size = 0;
      let stderr = '';
      let failed: Error | undefined;
      child.stdout.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_OUTPUT_BYTES) out.push(chunk);
        else if (!failed) {
          failed = new SpeechProviderError('unavailable', `${this.binary} wrote more than ${MAX_OUTPUT_BYTES} bytes`);
          child.kill('SIGKILL');
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4096);
      });
      child.on('error', (err) => {
        failed ??= err;
        if (child.pid === undefined) reject(err); // it never started: no 'close' follows
      });
      child.on('close', (code, killedBy) => {
        if (signal.aborted) reject(signal.reason as Error);
        else if (failed) reject(failed);
        else if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
        else if (killedBy === 'SIGKILL') reject(new SpeechProviderError('unavailable', `Recognition took longer than ${Math.round(timeoutMs / 1000)} s`));
        else reject(new SpeechProviderError('unavailable', `${this.binary} failed: ${tail(stderr) || `exit code ${code}`}`));
      });
    });
  }
}
