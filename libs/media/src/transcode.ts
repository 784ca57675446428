import { runBinary } from './binaries.js';

/**
 * Picture codecs the renderer's browser cannot play: Remotion's media extractor refuses ProRes
 * outright ("WebCodecs does not support natively"), where other codecs it cannot decode fall back
 * to its own ffmpeg. Measured with the compositor's encoders (docs/decisions.md "Fidelity (issue 32):
 * transcode"); a video clip in one of these renders only with `transcode: true`.
 */
export const NEEDS_TRANSCODE: ReadonlySet<string> = new Set(['prores']);

/** Frames a second of an intermediate at most (a 60 fps output at speed 2). */
export const MAX_TRANSCODE_FPS = 120;

export interface TranscodeOptions {
  /** Frames a second of the intermediate (constant). */
  fps: number;
  /** Seconds of the source kept from its start (what the clip plays, trim included); default all. */
  until?: number;
  signal?: AbortSignal;
  /** Default 10 minutes, the longest a render may run. */
  timeoutMs?: number;
}

/**
 * Re-encodes a video into the friendliest intermediate for the frame extractor (Shotstack's
 * `transcode`): H.264 High, yuv420p, constant frame rate at `fps` with a key frame every second (so a
 * seek decodes at most a second), AAC at 48 kHz, the index first. Variable frame rates, odd pixel
 * formats and codecs the browser cannot decode (ProRes) come out as a file it plays frame-exact.
 * Timestamps start at 0 as in the source, so a clip's `trim` keeps its meaning; only the first
 * `until` seconds are kept. The colour description of the source is carried over by ffmpeg.
 */
export async function transcodeVideo(input: string, output: string, opts: TranscodeOptions): Promise<void> {
  const fps = Math.min(MAX_TRANSCODE_FPS, Math.max(1, opts.fps));
  const rate = Number.isInteger(fps) ? String(fps) : fps.toFixed(3);
  const args = ['-v', 'error', '-nostdin', '-y', '-i', input];
  if (opts.until !== undefined) args.push('-t', opts.until.toFixed(3));
  args.push(
    '-map', '0:v:0', '-map', '0:a:0?', '-sn', '-dn', '-map_metadata', '-1',
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '17', '-pix_fmt', 'yuv420p',
    '-fps_mode', 'cfr', '-r', rate, '-g', String(Math.ceil(fps)),
    '-c:a', 'aac', '-b:a', '192k', '-ar', '48000',
    '-movflags', '+faststart', '-f', 'mp4', output,
  );
  await runBinary('ffmpeg', args, { timeoutMs: opts.timeoutMs ?? 10 * 60_000, ...(opts.signal ? { signal: opts.signal } : {}) });
}
