import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { MediaFetchError, pcmWav, runBinary, sniff, type FetchedMedia } from '#libs/media';

/** A seeded uniform generator in [0, 1) (mulberry32): the same numbers every run for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Grey grain (mean 128, σ 12) from a seeded generator: every run gets the same picture, so a
 * comparison that depends on the grain (a cell's SSIM, still against frame) is the same from run to
 * run. sharp's own noise is drawn afresh on each call: with it the still-frame spec's worst cell
 * measured anywhere from 0.963 to 0.985 on the same code.
 */
function seededGrain(width: number, height: number, seed = 0x5eed): Buffer {
  // Box-Muller over seededRandom for the normal distribution.
  const next = seededRandom(seed);
  const out = Buffer.alloc(width * height * 3);
  for (let i = 0; i < out.length; i++) {
    const gauss = Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
    out[i] = Math.max(0, Math.min(255, Math.round(128 + 12 * gauss)));
  }
  return out;
}

/**
 * Test and benchmark media made with the ffmpeg shipped with Remotion (its build has no testsrc):
 * a striped, grainy picture twice as wide as the video (the grain seeded: the same every run),
 * panned across by `crop`, so every frame differs as in real footage; optionally a sine tone as the
 * audio track.
 */
export async function makeTestVideo(opts: { width: number; height: number; seconds: number; fps: number; audio?: boolean; preset?: string; prores?: boolean }): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'video-test-'));
  try {
    const picture = join(dir, 'pan.png');
    const w = opts.width * 2;
    const stripes = Array.from({ length: 8 }, (_, i) => `<rect x="${(i * w) / 8}" width="${w / 8}" height="${opts.height}" fill="hsl(${i * 45}, 70%, 50%)"/>`).join('');
    await sharp(seededGrain(w, opts.height), { raw: { width: w, height: opts.height, channels: 3 } })
      .composite([{ input: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${opts.height}"><g opacity="0.8">${stripes}</g></svg>`) }])
      .png()
      .toFile(picture);
    const out = join(dir, opts.prores ? 'video.mov' : 'video.mp4');
    const speed = opts.width / opts.seconds;
    const args = ['-v', 'error', '-y', '-loop', '1', '-framerate', String(opts.fps), '-t', String(opts.seconds), '-i', picture];
    if (opts.audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:duration=${opts.seconds}`);
    const crop = `crop=${opts.width}:${opts.height}:x='min(t*${speed},${opts.width})':y=0`;
    if (opts.prores) args.push('-vf', `${crop},format=yuv422p10le`, '-c:v', 'prores_ks', '-r', String(opts.fps));
    else args.push('-vf', `${crop},format=yuv420p`, '-c:v', 'libx264', '-preset', opts.preset ?? 'ultrafast', '-r', String(opts.fps));
    if (opts.audio) args.push('-c:a', opts.prores ? 'pcm_s16le' : 'aac', '-shortest');
    args.push(out);
    await runBinary('ffmpeg', args, { timeoutMs: 120_000 });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A mono 16-bit WAV of a sine tone. */
export function sineWav(seconds: number, frequency = 440, sampleRate = 48_000): Buffer {
  const samples = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 0.3 * 32767);
  return pcmWav(samples, sampleRate);
}

/** A MediaFetcher over an in-memory map of URL → bytes (unknown URLs fail like a 404). */
export function mapFetcher(files: ReadonlyMap<string, Buffer>) {
  return async (url: string): Promise<FetchedMedia> => {
    const bytes = files.get(url);
    if (!bytes) throw new MediaFetchError(url, 'The server answered 404');
    const type = sniff(bytes);
    if (!type) throw new MediaFetchError(url, 'The file is not a media type the renderer reads');
    return { url, bytes, ...type };
  };
}

/** Stream facts of a rendered file, from ffprobe. */
export async function probeStreams(file: string): Promise<{ codec?: string; width?: number; height?: number; duration: number; frames?: number; audio?: string; loop?: string }> {
  const { stdout } = await runBinary('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,width,height,nb_frames:format=duration', '-of', 'json', file]);
  const data = JSON.parse(stdout) as { streams: { codec_type: string; codec_name: string; width?: number; height?: number; nb_frames?: string }[]; format: { duration?: string } };
  const video = data.streams.find((s) => s.codec_type === 'video');
  const audio = data.streams.find((s) => s.codec_type === 'audio');
  const out: Awaited<ReturnType<typeof probeStreams>> = { duration: Number(data.format.duration ?? 0) };
  if (video) Object.assign(out, { codec: video.codec_name, width: video.width, height: video.height, frames: video.nb_frames ? Number(video.nb_frames) : undefined });
  if (audio) out.audio = audio.codec_name;
  return out;
}

/** The colour facts players look at (ffprobe's names), and whether the mp4's index (moov) precedes its media (faststart). */
export interface VideoColour {
  pix_fmt?: string;
  color_range?: string;
  color_space?: string;
  color_transfer?: string;
  color_primaries?: string;
  faststart: boolean;
}

/** What every mp4 of the engine is (docs/video.md). */
export const MP4_COLOUR: Readonly<VideoColour> = { pix_fmt: 'yuv420p', color_range: 'tv', color_space: 'bt709', color_transfer: 'bt709', color_primaries: 'bt709', faststart: true };

export async function probeColour(file: string): Promise<VideoColour> {
  const { stdout } = await runBinary('ffprobe', ['-v', 'error', '-show_streams', '-select_streams', 'v:0', '-of', 'json', file]);
  const stream = (JSON.parse(stdout) as { streams: Omit<VideoColour, 'faststart'>[] }).streams[0] ?? {};
  const pick = ({ pix_fmt, color_range, color_space, color_transfer, color_primaries }: Omit<VideoColour, 'faststart'>) => ({ pix_fmt, color_range, color_space, color_transfer, color_primaries });
  return { ...pick(stream), faststart: moovFirst(await readFile(file)) };
}

/** Whether the top-level `moov` box comes before `mdat`. */
function moovFirst(mp4: Buffer): boolean {
  for (let at = 0; at + 8 <= mp4.length;) {
    const type = mp4.toString('latin1', at + 4, at + 8);
    if (type === 'moov') return true;
    if (type === 'mdat') return false;
    const size = mp4.readUInt32BE(at);
    const length = size === 1 ? Number(mp4.readBigUInt64BE(at + 8)) : size === 0 ? mp4.length - at : size;
    if (length < 8) return false;
    at += length;
  }
  return false;
}

/** One frame of a video as PNG bytes. */
export async function frameAt(file: string, seconds: number): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'video-frame-'));
  try {
    const png = join(dir, 'f.png');
    await runBinary('ffmpeg', ['-v', 'error', '-y', '-ss', seconds.toFixed(6), '-i', file, '-frames:v', '1', '-update', '1', png]);
    return await readFile(png);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every frame of a video as PNG bytes, in order (frame k shows from k / fps). */
export async function framesOf(file: string): Promise<Buffer[]> {
  const dir = await mkdtemp(join(tmpdir(), 'video-frames-'));
  try {
    await runBinary('ffmpeg', ['-v', 'error', '-y', '-i', file, '-fps_mode', 'passthrough', join(dir, 'f-%05d.png')]);
    const frames: Buffer[] = [];
    for (let k = 1; ; k++) {
      const frame = await readFile(join(dir, `f-${String(k).padStart(5, '0')}.png`)).catch(() => undefined);
      if (!frame) return frames;
      frames.push(frame);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
