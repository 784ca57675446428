import { spawn } from 'node:child_process';
import { clipVisualAt, parseColor, type TimedClip, type Timing } from '#libs/edit-spec';
import { compositorDir, runBinary } from '#libs/media';
import { join } from 'node:path';
import { clipKey, type EditProps } from './props.js';

/**
 * A played piece composed outside the browser (issue 33, "only what moves"): its one video layer
 * (spans.ts videoLayerAt) is decoded by the shipped ffmpeg and placed by this module, the page draws
 * only the clips over it (on a transparent background, a picture per run of frames that look the
 * same: spans.ts overlayRuns), and each output frame is the background, the video and that picture.
 * The geometry is the composition's own (clipVisualAt, ClipView, assets.tsx mediaStyle); the video's
 * frame for an output frame is the one @remotion/media shows (the last whose time is at or before
 * `trim + clip time × speed`; none past the file's playable frames).
 */

/** A video file as the compositor reads it: its decoded picture size and its frames' times, in order. */
export interface VideoFrames {
  width: number;
  height: number;
  /** Presentation time of each decoded frame, seconds, ascending. */
  times: number[];
}

/** Largest number of frames a layer's file may have (a 10-minute 60 fps clip: 36,000). */
const MAX_LAYER_FRAMES = 100_000;

/**
 * Probes a video layer's file (ffprobe, no decoding): the size of its decoded pictures (turned as
 * ffmpeg turns them) and the time of each frame (packets' presentation times, sorted).
 */
export async function probeVideoFrames(file: string, signal?: AbortSignal): Promise<VideoFrames> {
  const { stdout } = await runBinary('ffprobe', [
    '-v', 'error', '-select_streams', 'v:0',
    '-show_entries', 'stream=width,height,sample_aspect_ratio:stream_side_data=rotation:packet=pts_time',
    '-of', 'json', file,
  ], { ...(signal ? { signal } : {}), timeoutMs: 60_000, maxBuffer: 64 * 1024 * 1024 });
  const info = JSON.parse(stdout) as {
    streams?: { width?: number; height?: number; sample_aspect_ratio?: string; side_data_list?: { rotation?: number }[] }[];
    packets?: { pts_time?: string }[];
  };
  const stream = info.streams?.[0];
  if (!stream?.width || !stream.height) throw new Error('no video stream');
  const sar = stream.sample_aspect_ratio;
  if (sar && sar !== '1:1' && sar !== '0:1') throw new Error(`non-square pixels (${sar})`);
  const rotation = Math.abs(stream.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? 0) % 180;
  const times = (info.packets ?? []).map((p) => Number(p.pts_time)).filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
  if (times.length === 0 || times.length > MAX_LAYER_FRAMES) throw new Error(`${times.length} frames`);
  return rotation === 90 ? { width: stream.height, height: stream.width, times } : { width: stream.width, height: stream.height, times };
}

/** Where one output frame shows the video layer, in output pixels: source pixel (u, v) → (x, y) = (u·sx + tx, v·sy + ty), inside `clip`. */
export interface LayerPlacement {
  /** Index of the decoded frame shown (VideoFrames.times). */
  frame: number;
  sx: number;
  sy: number;
  tx: number;
  ty: number;
  /** The visible part: the content box (overflow hidden) and the video element, output pixels. */
  clip: { left: number; top: number; right: number; bottom: number };
  opacity: number;
}

/** Frames a media file can play from `trim` at `speed` (assets.tsx playableFrames). */
function playableFrames(duration: number | undefined, trim: number, speed: number, fps: number): number {
  if (duration === undefined) return Infinity;
  return Math.max(1, Math.floor(((duration - trim) / (speed > 0 ? speed : 1)) * fps));
}

/** Output frames from timeline seconds (Edit.tsx frameAt). */
const frameAt = (seconds: number, props: Pick<EditProps, 'windowStart' | 'fps'>) => Math.ceil((seconds - props.windowStart) * props.fps - 1e-6);

/**
 * Where output frame `frame` shows the video clip `layer` (key `track:index`), or undefined when it
 * shows none of it (outside its Sequence, past the file's playable frames, wholly clipped away).
 */
export function placeLayer(props: EditProps, layer: string, frame: number, video: VideoFrames): LayerPlacement | undefined {
  const c = (props.timing as Timing).tracks.flat().find((t: TimedClip) => clipKey(t.track, t.index) === layer);
  const inputs = props.clips[layer];
  const media = inputs?.media;
  if (!c || !media || c.clip.asset.type !== 'video') return undefined;
  const asset = c.clip.asset;
  const from = frameAt(c.start, props);
  const own = frame - from;
  if (own < 0 || own >= Math.max(1, frameAt(c.end, props) - from)) return undefined;
  if (own >= playableFrames(media.duration, asset.trim, asset.speed, props.fps)) return undefined;
  const time = props.windowStart + frame / props.fps;
  const source = inputs.source ?? props.viewport;
  const v = clipVisualAt(c.clip, time - c.start, c.length, { viewport: props.viewport, source, still: false });
  const kx = v.crop.width > 0 ? v.content.width / v.crop.width : 0;
  const ky = v.crop.height > 0 ? v.content.height / v.crop.height : 0;
  if (kx <= 0 || ky <= 0 || v.opacity <= 0) return undefined;
  const cut = inputs.cut ?? { x: 0, y: 0 };
  const mw = media.width ?? source.width;
  const mh = media.height ?? source.height;
  // Viewport → output pixels (Edit.tsx scales the viewport to the output size).
  const ox = props.width / props.viewport.width;
  const oy = props.height / props.viewport.height;
  // The video element (mediaStyle): at content − (crop + cut)·k, media size × k, its picture stretched to fill it.
  const left = v.content.x - (v.crop.x + cut.x) * kx;
  const top = v.content.y - (v.crop.y + cut.y) * ky;
  const sx = ((mw * kx) / video.width) * ox;
  const sy = ((mh * ky) / video.height) * oy;
  const clip = {
    left: Math.max(v.content.x, left) * ox,
    top: Math.max(v.content.y, top) * oy,
    right: Math.min(v.content.x + v.content.width, left + mw * kx) * ox,
    bottom: Math.min(v.content.y + v.content.height, top + mh * ky) * oy,
  };
  if (clip.right <= clip.left || clip.bottom <= clip.top) return undefined;
  // @remotion/media's time in the file (getTimeInSeconds): trim + the clip's own frame ÷ fps × speed.
  const t = asset.trim + (own / props.fps) * asset.speed;
  return { frame: frameIndexAt(video.times, t), sx, sy, tx: left * ox, ty: top * oy, clip, opacity: v.opacity };
}

/** The last frame whose time is at or before `t` (the first when `t` is before them all). */
export function frameIndexAt(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  if (!(times[0]! <= t + 1e-6)) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid]! <= t + 1e-6) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Decoded frames of a video file, in order, as RGBA pictures of `width`×`height` (the shipped ffmpeg,
 * every frame as it is stored: no rate conversion). Reading pauses the decoder (the pipe's
 * back-pressure), so at most a few frames are held. The child is killed on abort and when the
 * reader stops early.
 */
export async function* decodeFrames(file: string, video: Pick<VideoFrames, 'width' | 'height'>, signal?: AbortSignal): AsyncGenerator<Buffer> {
  const dir = compositorDir();
  const child = spawn(join(dir, 'ffmpeg'), [
    '-v', 'error', '-nostdin', '-i', file, '-map', '0:v:0', '-an', '-sn', '-dn',
    '-fps_mode', 'passthrough', '-c:v', 'rawvideo', '-pix_fmt', 'rgba', '-f', 'image2pipe', 'pipe:1',
  ], {
    cwd: dir,
    env: { ...process.env, LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
    stdio: ['ignore', 'pipe', 'pipe'],
    killSignal: 'SIGKILL',
    ...(signal ? { signal } : {}),
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2048);
  });
  child.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const size = video.width * video.height * 4;
  let frame = Buffer.allocUnsafe(size);
  let filled = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      let at = 0;
      while (at < chunk.length) {
        const n = Math.min(size - filled, chunk.length - at);
        chunk.copy(frame, filled, at, at + n);
        filled += n;
        at += n;
        if (filled === size) {
          yield frame;
          frame = Buffer.allocUnsafe(size);
          filled = 0;
        }
      }
    }
    const code = await exited;
    signal?.throwIfAborted();
    if (code !== 0) throw new Error(`ffmpeg failed decoding a video layer: ${stderr.trim().split('\n').slice(-2).join(' ') || `exit code ${code}`}`);
    if (filled !== 0) throw new Error('ffmpeg wrote a partial frame of a video layer');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Coverage of pixel [i, i + 1) by the span [a, b): 0..1. */
const coverage = (i: number, a: number, b: number) => Math.max(0, Math.min(i + 1, b) - Math.max(i, a));

/**
 * Paints output frames: the background, the video layer scaled with bilinear filtering (as the
 * browser draws a scaled picture) and faded by its opacity, then the page's picture of the clips
 * over it (straight RGBA, as Chromium writes a PNG) blended on top. RGB out, for x264's input.
 */
export class FrameCompositor {
  private readonly rgb: Buffer;
  private readonly bg: [number, number, number];
  private readonly x0: Int32Array;
  private readonly wx: Int32Array;
  private readonly covX: Float32Array;

  constructor(readonly width: number, readonly height: number, background: string) {
    this.rgb = Buffer.alloc(width * height * 3);
    const c = parseColor(background);
    this.bg = [c.r, c.g, c.b];
    this.x0 = new Int32Array(width);
    this.wx = new Int32Array(width);
    this.covX = new Float32Array(width);
  }

  /**
   * One frame: `video` (RGBA of `source` size) placed by `at`, under `overlay` (RGBA of the output
   * size, or none). The returned buffer is reused by the next call.
   */
  compose(video: Buffer | undefined, source: { width: number; height: number }, at: LayerPlacement | undefined, overlay: Buffer | undefined): Buffer {
    const { width: W, height: H, rgb } = this;
    const [br, bgG, bb] = this.bg;
    for (let i = 0; i < W * H * 3; i += 3) {
      rgb[i] = br;
      rgb[i + 1] = bgG;
      rgb[i + 2] = bb;
    }
    if (video && at) this.paintVideo(video, source, at);
    if (overlay) this.blend(overlay);
    return rgb;
  }

  private paintVideo(src: Buffer, source: { width: number; height: number }, at: LayerPlacement): void {
    const { width: W, height: H, rgb, x0, wx, covX } = this;
    const sw = source.width;
    const sh = source.height;
    const { left, top, right, bottom } = at.clip;
    const xa = Math.max(0, Math.floor(left));
    const xb = Math.min(W, Math.ceil(right));
    const ya = Math.max(0, Math.floor(top));
    const yb = Math.min(H, Math.ceil(bottom));
    // Per column: the source column left of the sample, its weight (of 256), the clip's coverage.
    for (let x = xa; x < xb; x++) {
      const u = (x + 0.5 - at.tx) / at.sx - 0.5;
      const f = Math.floor(u);
      const w = Math.round((u - f) * 256);
      x0[x] = f;
      wx[x] = w;
      covX[x] = coverage(x, left, right) * at.opacity;
    }
    for (let y = ya; y < yb; y++) {
      const covY = coverage(y, top, bottom);
      const v = (y + 0.5 - at.ty) / at.sy - 0.5;
      const fy = Math.floor(v);
      const wy = Math.round((v - fy) * 256);
      const r0 = Math.min(sh - 1, Math.max(0, fy)) * sw * 4;
      const r1 = Math.min(sh - 1, Math.max(0, fy + 1)) * sw * 4;
      let o = (y * W + xa) * 3;
      for (let x = xa; x < xb; x++, o += 3) {
        const alpha = covX[x]! * covY;
        if (alpha <= 0) continue;
        const f = x0[x]!;
        const c0 = Math.min(sw - 1, Math.max(0, f)) * 4;
        const c1 = Math.min(sw - 1, Math.max(0, f + 1)) * 4;
        const w1 = wx[x]!;
        const w0 = 256 - w1;
        for (let ch = 0; ch < 3; ch++) {
          const top = src[r0 + c0 + ch]! * w0 + src[r0 + c1 + ch]! * w1;
          const bot = src[r1 + c0 + ch]! * w0 + src[r1 + c1 + ch]! * w1;
          const value = (top * (256 - wy) + bot * wy + 32768) >> 16;
          rgb[o + ch] = alpha >= 1 ? value : Math.round(value * alpha + rgb[o + ch]! * (1 - alpha));
        }
      }
    }
  }

  private blend(overlay: Buffer): void {
    const { rgb } = this;
    const n = this.width * this.height;
    for (let p = 0, o = 0, i = 0; p < n; p++, o += 3, i += 4) {
      const a = overlay[i + 3]!;
      if (a === 0) continue;
      if (a === 255) {
        rgb[o] = overlay[i]!;
        rgb[o + 1] = overlay[i + 1]!;
        rgb[o + 2] = overlay[i + 2]!;
        continue;
      }
      const ia = 255 - a;
      rgb[o] = (overlay[i]! * a + rgb[o]! * ia + 127) / 255;
      rgb[o + 1] = (overlay[i + 1]! * a + rgb[o + 1]! * ia + 127) / 255;
      rgb[o + 2] = (overlay[i + 2]! * a + rgb[o + 2]! * ia + 127) / 255;
    }
  }
}
