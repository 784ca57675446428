import { runBinary } from '#libs/media';

/** The sample rate speech is recognised at: pocketsphinx's model and the parts sent to speech-gamma. */
export const PCM_RATE = 16_000;

/** ffmpeg's time for one decode: a fixed allowance plus a share of the audio's length (it decodes at well over 20× real time). */
export function decodeBudgetMs(durationSec: number, limitSec: number): number {
  return 30_000 + Math.ceil(250 * Math.min(durationSec || limitSec, limitSec));
}

/**
 * The first audio track of `input` (any format the shipped ffmpeg reads; a video's sound) as a mono
 * 16 kHz 16-bit WAV at `out` with a plain 44-byte header (no metadata chunk: pocketsphinx skips exactly
 * 44 bytes), cut at `limitSec`. Rejects with runBinary's error (its cause tells a kill by the time limit).
 */
export async function decodePcmWav(input: string, out: string, opts: { limitSec: number; timeoutMs: number; signal?: AbortSignal }): Promise<void> {
  await runBinary('ffmpeg', [
    '-v', 'error', '-nostdin', '-y', '-i', input, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(PCM_RATE), '-c:a', 'pcm_s16le', '-t', String(opts.limitSec),
    '-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact', '-f', 'wav', out,
  ], { signal: opts.signal, timeoutMs: opts.timeoutMs });
}
