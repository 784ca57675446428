import { clipVisualAt, parseColor, type TimedClip, type Timing } from '#libs/edit-spec';
import { readBinary, runBinary } from '#libs/media';
import { BilinearRows } from './bilinear.js';
import { clipKey, type EditProps } from './props.js';
import { frameOf, inSequence } from './spans.js';

/**
 * A played piece composed outside the browser (issue 33, "only what moves"): its one video layer
 * (spans.ts videoLayerAt) is decoded by the shipped ffmpeg and placed by this module, the page draws
 * pictures of the clips over it once (on a transparent background: the clips that hold still through
 * the piece together, each that fades or moves alone: spans.ts overlayGroups), and each output frame
 * is the background, the video and those pictures, each faded and moved as the frame places it.
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
  /** The file's start time (ffmpeg's `-ss` counts from it). */
  start: number;
  /**
   * The zscale filter that brings its pictures to the output's colours (limited-range BT.709), or
   * none: a file tagged BT.709 or untagged is shown by Chromium as BT.709 (measured: its Y′CbCr
   * comes through unchanged), a BT.601 one is converted, as Chromium converts it.
   */
  convert?: string;
}

/** Matrices a layer's file may be tagged with, as zscale names them (others: left to the page). */
const MATRICES: Readonly<Record<string, string | undefined>> = { unknown: undefined, bt709: undefined, smpte170m: '170m', bt470bg: '470bg' };

/** Largest number of frames a layer's file may have (a 10-minute 60 fps clip: 36,000). */
const MAX_LAYER_FRAMES = 100_000;

/**
 * Probes a video layer's file (ffprobe, no decoding): the size of its decoded pictures (turned as
 * ffmpeg turns them) and the time of each frame (packets' presentation times, sorted).
 */
export async function probeVideoFrames(file: string, signal?: AbortSignal): Promise<VideoFrames> {
  const { stdout } = await runBinary('ffprobe', [
    '-v', 'error', '-select_streams', 'v:0',
    '-show_entries', 'stream=width,height,pix_fmt,sample_aspect_ratio,color_space,color_range:stream_tags=alpha_mode:stream_side_data=rotation:packet=pts_time:format=start_time',
    '-of', 'json', file,
  ], { ...(signal ? { signal } : {}), timeoutMs: 60_000, maxBuffer: 64 * 1024 * 1024 });
  const info = JSON.parse(stdout) as {
    streams?: { width?: number; height?: number; pix_fmt?: string; sample_aspect_ratio?: string; color_space?: string; color_range?: string; tags?: { alpha_mode?: string; ALPHA_MODE?: string }; side_data_list?: { rotation?: number }[] }[];
    packets?: { pts_time?: string }[];
    format?: { start_time?: string };
  };
  const start = Number(info.format?.start_time ?? 0) || 0;
  const stream = info.streams?.[0];
  if (!stream?.width || !stream.height) throw new Error('no video stream');
  // A picture with an alpha channel shows what is under it: not a plain picture (the page plays it).
  // VP9's alpha is a side stream ffprobe names in a tag, its pixels yuv420p.
  if (/^(yuva|rgba|argb|bgra|abgr|gbrap|ya)/.test(stream.pix_fmt ?? '') || (stream.tags?.alpha_mode ?? stream.tags?.ALPHA_MODE) === '1') throw new Error(`pixels with alpha (${stream.pix_fmt})`);
  const sar = stream.sample_aspect_ratio;
  if (sar && sar !== '1:1' && sar !== '0:1') throw new Error(`non-square pixels (${sar})`);
  const space = stream.color_space ?? 'unknown';
  if (!(space in MATRICES)) throw new Error(`colour matrix ${space}`);
  const matrix = MATRICES[space];
  const full = stream.color_range === 'pc';
  const convert = matrix || full ? `zscale=matrixin=${matrix ?? '709'}:rangein=${full ? 'full' : 'limited'}:matrix=709:range=limited` : undefined;
  const rotation = Math.abs(stream.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? 0) % 180;
  const times = (info.packets ?? []).map((p) => Number(p.pts_time)).filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
  if (times.length === 0 || times.length > MAX_LAYER_FRAMES) throw new Error(`${times.length} frames`);
  const size = rotation === 90 ? { width: stream.height, height: stream.width } : { width: stream.width, height: stream.height };
  return { ...size, times, start, ...(convert ? { convert } : {}) };
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
  if (!inSequence(c, props, frame)) return undefined;
  const own = frame - frameOf(c.start, props);
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

/**
 * The frame @remotion/media shows at time `t` (its keyframe bank's getFrameFromTimestamp): the last
 * whose time, rounded to the millisecond, is at or before `t`'s, or within a millisecond of `t` (so
 * a 29.97 fps file's frame 1.001/30 s is shown at 1/30 s); the first when `t` is before them all.
 */
export function frameIndexAt(times: readonly number[], t: number): number {
  const ms = (x: number) => Math.round(x * 1000) / 1000;
  const shown = (i: number) => ms(times[i]!) <= ms(t) || Math.abs(times[i]! - t) <= 0.001;
  if (times.length === 0 || !shown(0)) return 0;
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (shown(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Decoded frames of a video file from frame `from` (VideoFrames.times) on, in order, as yuv420p
 * pictures of `width`×`height` in the output's colours (`convert`). The shipped ffmpeg decodes every
 * frame as it is stored (no rate conversion); a later start is an exact seek to halfway between that
 * frame's time and the one before. Reading pauses the decoder (readBinary's back-pressure), so at
 * most a few frames are held; the child is killed on abort and when the reader stops early. Every
 * frame is yielded in the same buffer: one is valid until the next is asked for (a 720p frame a
 * frame is 1.4 MB of garbage otherwise).
 */
export async function* decodeFrames(file: string, video: VideoFrames, opts: { from?: number; signal?: AbortSignal } = {}): AsyncGenerator<Buffer> {
  const from = opts.from ?? 0;
  const seek = from > 0 && from < video.times.length ? ['-ss', ((video.times[from - 1]! + video.times[from]!) / 2 - video.start).toFixed(6)] : [];
  const size = yuv420Size(video.width, video.height);
  const frame = Buffer.allocUnsafe(size);
  let filled = 0;
  for await (const chunk of readBinary('ffmpeg', [
    '-v', 'error', '-nostdin', ...seek, '-i', file, '-map', '0:v:0', '-an', '-sn', '-dn',
    ...(video.convert ? ['-vf', `${video.convert},format=yuv420p`] : []),
    '-fps_mode', 'passthrough', '-c:v', 'rawvideo', '-pix_fmt', 'yuv420p', '-f', 'image2pipe', 'pipe:1',
  ], opts.signal ? { signal: opts.signal } : {})) {
    for (let at = 0; at < chunk.length; ) {
      const n = Math.min(size - filled, chunk.length - at);
      chunk.copy(frame, filled, at, at + n);
      filled += n;
      at += n;
      if (filled === size) {
        yield frame;
        filled = 0;
      }
    }
  }
  if (filled !== 0) throw new Error('ffmpeg wrote a partial frame of a video layer');
}

/** Coverage of pixel [i, i + 1) by the span [a, b): 0..1. */
const coverage = (i: number, a: number, b: number) => Math.max(0, Math.min(i + 1, b) - Math.max(i, a));

/** BT.709's luma weights: the output's matrix (limited range), as the page's frames are encoded. */
const KR = 0.2126;
const KB = 0.0722;

/** An sRGB colour (0–255) as limited-range BT.709 Y′CbCr. */
export function yuv709(r: number, g: number, b: number): [number, number, number] {
  const y = KR * r + (1 - KR - KB) * g + KB * b;
  return [16 + (219 * y) / 255, 128 + (224 * (b - y)) / (2 * (1 - KB)) / 255, 128 + (224 * (r - y)) / (2 * (1 - KR)) / 255];
}

/** Bytes of a yuv420p picture (ffmpeg's layout, no padding: chroma planes of ⌈w/2⌉×⌈h/2⌉). */
export const yuv420Size = (width: number, height: number) => width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2);

/**
 * A page's picture of clips over the video (straight RGBA, as Chromium writes a PNG) in the output's
 * colours: premultiplied limited-range BT.709 planes and their opacity (of 256), the chroma planes
 * averaged over each 2×2 block; per row, the span with any opacity, so the rest is skipped. A picture
 * that moves by an odd number of pixels straddles the chroma blocks: `full` keeps its chroma and
 * opacity per pixel (premultiplied, ×256; opacity of 256) to average the blocks it lands on. At 720p
 * a picture takes ~5 MB of planes, ~10.5 MB with `full`.
 */
interface OverlayPlanes {
  y: Uint16Array;
  ya: Uint16Array;
  u: Uint16Array;
  v: Uint16Array;
  ca: Uint16Array;
  rows: Int32Array;
  chromaRows: Int32Array;
  full?: { u: Uint16Array; v: Uint16Array; a: Uint16Array };
}

/** Where a picture of clips over the video lies on one frame: its opacity, and its offset in whole pixels. */
export interface OverlayPlace {
  opacity: number;
  dx: number;
  dy: number;
}

export const IN_PLACE: OverlayPlace = { opacity: 1, dx: 0, dy: 0 };

/**
 * Paints output frames as yuv420p in the output's colours (limited-range BT.709, what x264 is handed
 * for the page's frames): the background, the video layer (its decoded yuv420p frame, in the same
 * colours) scaled with bilinear filtering, as the browser draws a scaled picture, and faded by its
 * opacity and its edges' coverage; then the page's pictures of the clips over it, bottom first, each
 * faded and moved as the frame places it. Blending Y′CbCr linearly is blending the page's R′G′B′
 * linearly (the matrix is linear), as Chromium does; a picture faded whole is Chromium's group
 * opacity (the element's opacity applied to its drawn content).
 */
export class FrameCompositor {
  private readonly out: Buffer;
  private readonly cw: number;
  private readonly ch: number;
  private readonly bg: [number, number, number];
  private overlays: OverlayPlanes[] = [];
  private readonly rows = new BilinearRows();

  constructor(readonly width: number, readonly height: number, background: string) {
    // yuv420p output (x264 refuses odd sizes; the spec's mp4 sizes are even): a picture moved by an
    // even offset moves by whole chroma blocks only then.
    if (width % 2 !== 0 || height % 2 !== 0) throw new Error(`an odd frame size (${width}×${height})`);
    this.cw = Math.ceil(width / 2);
    this.ch = Math.ceil(height / 2);
    this.out = Buffer.alloc(yuv420Size(width, height));
    const c = parseColor(background);
    this.bg = yuv709(c.r, c.g, c.b);
  }

  /**
   * Sets the pictures (RGBA of the output size) drawn over every following frame, bottom first;
   * `moves`: one that compose() may place at an odd offset.
   */
  setOverlays(pictures: readonly { rgba: Buffer; moves?: boolean }[]): void {
    this.overlays = pictures.map((p) => this.planes(p.rgba, p.moves === true));
  }

  private planes(rgba: Buffer, moves: boolean): OverlayPlanes {
    const { width: W, height: H, cw, ch } = this;
    const y = new Uint16Array(W * H);
    const ya = new Uint16Array(W * H);
    const u = new Uint16Array(cw * ch);
    const v = new Uint16Array(cw * ch);
    const ca = new Uint16Array(cw * ch);
    const rows = new Int32Array(H * 2);
    const chromaRows = new Int32Array(ch * 2);
    for (let r = 0; r < ch; r++) chromaRows[r * 2] = cw;
    const usum = new Float64Array(cw * ch);
    const vsum = new Float64Array(cw * ch);
    const asum = new Float64Array(cw * ch);
    const full = moves ? { u: new Uint16Array(W * H), v: new Uint16Array(W * H), a: new Uint16Array(W * H) } : undefined;
    for (let j = 0; j < H; j++) {
      let first = W;
      let last = 0;
      for (let i = 0; i < W; i++) {
        const p = (j * W + i) * 4;
        const a = rgba[p + 3]! / 255;
        if (a === 0) continue;
        if (first === W) first = i;
        last = i + 1;
        const [yy, uu, vv] = yuv709(rgba[p]!, rgba[p + 1]!, rgba[p + 2]!);
        y[j * W + i] = Math.round(yy * a * 256);
        ya[j * W + i] = Math.round(a * 256);
        const c = (j >> 1) * cw + (i >> 1);
        usum[c] += uu * a;
        vsum[c] += vv * a;
        asum[c] += a;
        if (full) {
          full.u[j * W + i] = Math.round(uu * a * 256);
          full.v[j * W + i] = Math.round(vv * a * 256);
          full.a[j * W + i] = Math.round(a * 256);
        }
      }
      rows[j * 2] = Math.min(first, last);
      rows[j * 2 + 1] = last;
      const r = j >> 1;
      if (last > first) {
        chromaRows[r * 2] = Math.min(chromaRows[r * 2]!, first >> 1);
        chromaRows[r * 2 + 1] = Math.max(chromaRows[r * 2 + 1]!, (last + 1) >> 1);
      }
    }
    for (let c = 0; c < cw * ch; c++) {
      // The block's pixels (4; fewer on an odd edge) averaged, as JPEG's 4:2:0 and zscale average them.
      const r = Math.floor(c / cw);
      const i = c % cw;
      const n = (Math.min(2, W - i * 2)) * (Math.min(2, H - r * 2));
      u[c] = Math.round((usum[c]! / n) * 256);
      v[c] = Math.round((vsum[c]! / n) * 256);
      ca[c] = Math.round((asum[c]! / n) * 256);
    }
    return { y, ya, u, v, ca, rows, chromaRows, ...(full ? { full } : {}) };
  }

  /**
   * One frame: `video` (yuv420p of `source` size) placed by `at`, under the pictures set, each placed
   * by `places` (same order; in place when not given). The returned buffer is reused by the next call.
   */
  compose(video: Buffer | undefined, source: { width: number; height: number }, at: LayerPlacement | undefined, places: readonly OverlayPlace[] = []): Buffer {
    const { width: W, height: H, cw, ch, out } = this;
    const covers = video && at && at.opacity >= 1 && at.clip.left <= 0 && at.clip.top <= 0 && at.clip.right >= W && at.clip.bottom >= H;
    if (!covers) {
      out.fill(Math.round(this.bg[0]), 0, W * H);
      out.fill(Math.round(this.bg[1]), W * H, W * H + cw * ch);
      out.fill(Math.round(this.bg[2]), W * H + cw * ch);
    }
    if (video && at) {
      const sw = source.width;
      const sh = source.height;
      const scw = Math.ceil(sw / 2);
      const sch = Math.ceil(sh / 2);
      paintPlane(out, 0, W, H, video, 0, sw, sh, at, 1, this.rows);
      paintPlane(out, W * H, cw, ch, video, sw * sh, scw, sch, at, 2, this.rows);
      paintPlane(out, W * H + cw * ch, cw, ch, video, sw * sh + scw * sch, scw, sch, at, 2, this.rows);
    }
    this.overlays.forEach((o, k) => {
      const place = places[k] ?? IN_PLACE;
      if (place.opacity <= 0) return;
      blendPlane(out, 0, W, H, o.y, o.ya, o.rows, place.dx, place.dy, place.opacity);
      if (place.dx % 2 === 0 && place.dy % 2 === 0) {
        blendPlane(out, W * H, cw, ch, o.u, o.ca, o.chromaRows, place.dx / 2, place.dy / 2, place.opacity);
        blendPlane(out, W * H + cw * ch, cw, ch, o.v, o.ca, o.chromaRows, place.dx / 2, place.dy / 2, place.opacity);
      } else {
        if (!o.full) throw new Error('a picture set in place was moved by an odd offset');
        blendChromaAt(out, W, H, cw, ch, o, place);
      }
    });
    return out;
  }
}

/**
 * One plane of the video placed by `at` (in luma pixels; `sub` 2 for a chroma plane, whose samples
 * sit at the centres of 2×2 luma blocks), sampled bilinearly (each source row filtered across once,
 * kept for the next output row; bilinear.wat), over what the plane holds where the clip covers a pixel
 * partly or the layer is faded. The weights are whole 256ths, so the result is exact integers.
 */
function paintPlane(out: Buffer, base: number, W: number, H: number, src: Buffer, srcBase: number, sw: number, sh: number, at: LayerPlacement, sub: number, rows: BilinearRows): void {
  const left = at.clip.left / sub;
  const right = at.clip.right / sub;
  const top = at.clip.top / sub;
  const bottom = at.clip.bottom / sub;
  const xa = Math.max(0, Math.floor(left));
  const xb = Math.min(W, Math.ceil(right));
  const ya = Math.max(0, Math.floor(top));
  const yb = Math.min(H, Math.ceil(bottom));
  if (xb <= xa || yb <= ya) return;
  const n = xb - xa;
  rows.reserve(n, src.length);
  const { x0, x1, wx, cov } = rows;
  // Columns the clip covers wholly at full opacity: [whole0, whole1).
  let whole0 = n;
  let whole1 = 0;
  // Output sample centre (x + 0.5)·sub luma pixels → source luma → source sample of this plane.
  for (let k = 0; k < n; k++) {
    const x = xa + k;
    const u = ((x + 0.5) * sub - at.tx) / at.sx / sub - 0.5;
    const f = Math.floor(u);
    x0[k] = Math.min(sw - 1, Math.max(0, f));
    x1[k] = Math.min(sw - 1, Math.max(0, f + 1));
    wx[k] = Math.round((u - f) * 256);
    cov[k] = coverage(x, left, right) * at.opacity;
    if (cov[k]! >= 1) {
      whole0 = Math.min(whole0, k);
      whole1 = k + 1;
    }
  }
  // One source pixel per output pixel on whole columns (scale 1, a whole-pixel offset: a background
  // video as it is): a row of the plane is a copy of the source's.
  let straight = whole1 > whole0;
  for (let k = whole0; straight && k < whole1; k++) straight = wx[k] === 0 && (k === whole0 || x0[k] === x0[k - 1]! + 1);
  // The two source rows filtered across (each copied into the sampler's memory then), swapped as the
  // output moves down.
  let upperRow = -1;
  let lowerRow = -1;
  for (let y = ya; y < yb; y++) {
    const v = ((y + 0.5) * sub - at.ty) / at.sy / sub - 0.5;
    const f = Math.floor(v);
    const w1 = Math.round((v - f) * 256);
    const w0 = 256 - w1;
    const r0 = Math.min(sh - 1, Math.max(0, f));
    const r1 = Math.min(sh - 1, Math.max(0, f + 1));
    const covY = coverage(y, top, bottom);
    const row = base + y * W + xa;
    if (straight && w1 === 0 && covY >= 1) {
      const at0 = srcBase + r0 * sw;
      for (let k = 0; k < whole0; k++) mix(out, row + k, src[at0 + x0[k]!]!, cov[k]!);
      out.set(src.subarray(at0 + x0[whole0]!, at0 + x0[whole0]! + whole1 - whole0), row + whole0);
      for (let k = whole1; k < n; k++) mix(out, row + k, src[at0 + x0[k]!]!, cov[k]!);
      continue;
    }
    if (r0 !== upperRow) {
      if (r0 === lowerRow) {
        rows.swap();
        upperRow = lowerRow;
        lowerRow = -1;
      } else {
        rows.across('upper', src, srcBase + r0 * sw, sw);
        upperRow = r0;
      }
    }
    if (r1 !== lowerRow) {
      rows.across('lower', src, srcBase + r1 * sw, sw);
      lowerRow = r1;
    }
    const values = rows.vertical(w0, w1);
    if (covY >= 1 && whole1 > whole0) {
      // Whole columns copied; the partly covered ones at each side blended.
      if (whole0 > 0) rows.blend(out, row, 1, 0, whole0);
      out.set(values.subarray(whole0, whole1), row + whole0);
      if (whole1 < n) rows.blend(out, row, 1, whole1, n);
    } else {
      rows.blend(out, row, covY, 0, n);
    }
  }
}

/** `value` over what `out` holds at `i`, at opacity `alpha` (0..1). */
function mix(out: Buffer, i: number, value: number, alpha: number): void {
  if (alpha >= 1) out[i] = value;
  else if (alpha > 0) out[i] = value * alpha + out[i]! * (1 - alpha) + 0.5;
}

/**
 * A premultiplied plane (×256) and its opacity (of 256) over `out`'s plane, row spans only, moved by
 * (dx, dy) samples and faded by `opacity`.
 */
function blendPlane(out: Buffer, base: number, W: number, H: number, over: Uint16Array, alpha: Uint16Array, rows: Int32Array, dx = 0, dy = 0, opacity = 1): void {
  for (let y = Math.max(0, -dy); y < Math.min(H, H - dy); y++) {
    const a0 = Math.max(rows[y * 2]!, -dx);
    const a1 = Math.min(rows[y * 2 + 1]!, W - dx);
    const to = base + (y + dy) * W + dx;
    if (opacity >= 1) {
      for (let i = y * W + a0, end = y * W + a1; i < end; i++) {
        const a = alpha[i]!;
        if (a === 0) continue;
        out[to + i - y * W] = (over[i]! + out[to + i - y * W]! * (256 - a) + 128) >>> 8;
      }
    } else {
      for (let i = y * W + a0, end = y * W + a1; i < end; i++) {
        const a = alpha[i]!;
        if (a === 0) continue;
        const t = to + i - y * W;
        out[t] = (over[i]! * opacity + out[t]! * (256 - a * opacity)) / 256 + 0.5;
      }
    }
  }
}

/**
 * The chroma of a picture moved by an odd offset: each output block averages the (premultiplied)
 * pixels of the picture that land on it, as the picture's own blocks average its pixels in place.
 */
function blendChromaAt(out: Buffer, W: number, H: number, cw: number, ch: number, o: OverlayPlanes, place: OverlayPlace): void {
  const full = o.full!;
  const { dx, dy, opacity } = place;
  let firstRow = H;
  let lastRow = -1;
  for (let j = 0; j < H; j++) {
    if (o.rows[j * 2 + 1]! > o.rows[j * 2]!) {
      firstRow = Math.min(firstRow, j);
      lastRow = j;
    }
  }
  if (lastRow < 0) return;
  const uBase = W * H;
  const vBase = W * H + cw * ch;
  const cy0 = Math.max(0, Math.floor((firstRow + dy) / 2));
  const cy1 = Math.min(ch - 1, Math.floor((lastRow + dy) / 2));
  for (let cy = cy0; cy <= cy1; cy++) {
    let first = W;
    let last = 0;
    for (let l = 0; l < 2; l++) {
      const py = cy * 2 + l - dy;
      if (py < 0 || py >= H || o.rows[py * 2 + 1]! <= o.rows[py * 2]!) continue;
      first = Math.min(first, o.rows[py * 2]!);
      last = Math.max(last, o.rows[py * 2 + 1]!);
    }
    if (last <= first) continue;
    const cx0 = Math.max(0, Math.floor((first + dx) / 2));
    const cx1 = Math.min(cw - 1, Math.floor((last - 1 + dx) / 2));
    for (let cx = cx0; cx <= cx1; cx++) {
      let us = 0;
      let vs = 0;
      let as = 0;
      let n = 0;
      for (let l = 0; l < 2; l++) {
        const oy = cy * 2 + l;
        if (oy >= H) continue;
        const py = oy - dy;
        for (let k = 0; k < 2; k++) {
          const ox = cx * 2 + k;
          if (ox >= W) continue;
          n++;
          const px = ox - dx;
          if (py < 0 || py >= H || px < 0 || px >= W) continue;
          const i = py * W + px;
          us += full.u[i]!;
          vs += full.v[i]!;
          as += full.a[i]!;
        }
      }
      if (as === 0) continue;
      const k = opacity / (n * 256);
      const a = as * k;
      const c = cy * cw + cx;
      out[uBase + c] = us * k + out[uBase + c]! * (1 - a) + 0.5;
      out[vBase + c] = vs * k + out[vBase + c]! * (1 - a) + 0.5;
    }
  }
}

/**
 * The start of an AVI stream of uncompressed yuv420p pictures ('I420') of `width`×`height` at `fps`,
 * of unknown length (the shipped ffmpeg has no raw-video demuxer; its AVI demuxer reads a pipe):
 * follow it with aviFrameHeader() and the bytes of each picture.
 */
export function aviHeader(width: number, height: number, fps: number): Buffer {
  const frame = yuv420Size(width, height);
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n >>> 0);
    return b;
  };
  const u16 = (n: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(n);
    return b;
  };
  const chunk = (id: string, data: Buffer) => Buffer.concat([Buffer.from(id, 'latin1'), u32(data.length), data]);
  const list = (type: string, parts: Buffer[]) => {
    const data = Buffer.concat([Buffer.from(type, 'latin1'), ...parts]);
    return Buffer.concat([Buffer.from('LIST', 'latin1'), u32(data.length), data]);
  };
  // The rate as rate/scale: 1000ths of a frame per second.
  const scale = 1000;
  const rate = Math.round(fps * scale);
  const avih = Buffer.concat([u32(Math.round(1e6 / fps)), u32(0), u32(0), u32(0), u32(0), u32(0), u32(1), u32(frame), u32(width), u32(height), Buffer.alloc(16)]);
  const strh = Buffer.concat([Buffer.from('vidsI420', 'latin1'), u32(0), u16(0), u16(0), u32(0), u32(scale), u32(rate), u32(0), u32(0), u32(frame), u32(0xffffffff), u32(0), u16(0), u16(0), u16(width), u16(height)]);
  const strf = Buffer.concat([u32(40), u32(width), u32(height), u16(1), u16(12), Buffer.from('I420', 'latin1'), u32(frame), u32(0), u32(0), u32(0), u32(0)]);
  const hdrl = list('hdrl', [chunk('avih', avih), list('strl', [chunk('strh', strh), chunk('strf', strf)])]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32(0xffffffff), Buffer.from('AVI ', 'latin1'), hdrl, Buffer.from('LIST', 'latin1'), u32(0xffffffff), Buffer.from('movi', 'latin1')]);
}

/** One picture's chunk header in aviHeader's stream (the picture follows it; its size is even). */
export function aviFrameHeader(bytes: number): Buffer {
  const b = Buffer.alloc(8);
  b.write('00dc', 0, 'latin1');
  b.writeUInt32LE(bytes, 4);
  return b;
}
