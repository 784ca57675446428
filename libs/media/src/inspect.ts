import { readFile, stat } from 'node:fs/promises';
import sharp, { type Sharp } from 'sharp';
import { M4A_ASSET, type DetectedAsset } from './asset-type.js';
import { runBinaryToBuffer } from './binaries.js';
import { endsEarly } from './container.js';
import { decodeHeif, HeifDecodeError } from './heif.js';
import { checkFontSize, readFont } from './font.js';
import { lottieInfo } from './lottie.js';
import { probeMedia, type ProbedMedia } from './probe.js';
import { AssetRejected } from './rejected.js';
import { sanitizeSvgDocument } from './svg.js';
import { audioPeaks, waveformPng } from './waveform.js';

export interface AssetLimits {
  /** Pixels of an image, a video frame, an SVG or a Lottie canvas, read from the header before anything is decoded. */
  maxPixels: number;
  maxDurationSec: number;
  maxLottieBytes: number;
  maxLottieFrames: number;
  maxSvgBytes: number;
  /** The whole inspection: every child process is killed when it runs out. */
  timeoutMs: number;
}

export const DEFAULT_ASSET_LIMITS: AssetLimits = {
  maxPixels: 100_000_000,
  maxDurationSec: 3 * 3600,
  maxLottieBytes: 20 * 1024 * 1024,
  maxLottieFrames: 10_000,
  maxSvgBytes: 5 * 1024 * 1024,
  timeoutMs: 120_000,
};

export interface AssetFile {
  bytes: Buffer;
  mimeType: string;
  ext: string;
}

export interface AssetInspection {
  width: number | null;
  height: number | null;
  durationSec: number | null;
  /** Fonts: the family name from the name table (ID 16, else 1). */
  fontFamily?: string;
  /** Images, videos and SVGs: at most THUMBNAIL_SIZE pixels on the long side (webp). */
  thumbnail?: AssetFile;
  /** Audio: a waveform picture (png). */
  waveform?: AssetFile;
  /** SVG: the sanitised file to serve instead of the upload. */
  sanitized?: Buffer;
  lottie?: { frames: number; fps: number };
  /** Set when the file turned out to be another accepted type than detected: an mp4 or mov whose only track is audio is audio (m4a). */
  detected?: DetectedAsset;
}

/** The long side of a thumbnail, in pixels. */
export const THUMBNAIL_SIZE = 320;

interface Context {
  file: string;
  limits: AssetLimits;
  /** The caller's signal and the deadline together: what every child process is bound to. */
  signal: AbortSignal;
  /** When the deadline falls (ms since the epoch). */
  until: number;
}

/**
 * Inspects a local file already typed by detectAssetType: its size or duration, a thumbnail, a
 * waveform, a font's family, a sanitised SVG, a Lottie's frames. Throws AssetRejected (its reason
 * is for the uploader) for a truncated, lying or over-limit file, and when the inspection runs past
 * `limits.timeoutMs`; rethrows the signal's reason when the caller aborts; any other error (a
 * missing file, a missing ffprobe) is the machine's, not the file's.
 */
export async function inspectAsset(file: string, detected: DetectedAsset, limits: AssetLimits = DEFAULT_ASSET_LIMITS, signal?: AbortSignal): Promise<AssetInspection> {
  signal?.throwIfAborted();
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const ctx: Context = { file, limits, signal: signal ? AbortSignal.any([signal, deadline]) : deadline, until: Date.now() + limits.timeoutMs };
  try {
    const size = (await stat(file)).size;
    if (size === 0) throw new AssetRejected('The file is empty');
    const inspection = await inspectType(ctx, detected, size);
    signal?.throwIfAborted();
    return inspection;
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    if (deadline.aborted) throw tookTooLong(limits);
    throw err;
  }
}

async function inspectType(ctx: Context, detected: DetectedAsset, size: number): Promise<AssetInspection> {
  if (await endsEarly(ctx.file, size, detected.ext)) {
    throw new AssetRejected('The file is truncated: it ends before the data its header describes');
  }
  switch (detected.type) {
    case 'image':
      return inspectImage(ctx, detected);
    case 'video':
      return inspectVideo(ctx, detected);
    case 'audio':
      return inspectAudio(ctx);
    case 'font':
      return inspectFont(ctx, size);
    case 'svg':
      return inspectSvg(ctx, size);
    case 'lottie':
      return inspectLottie(ctx, size);
  }
}

function fileSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}
const megapixels = (pixels: number) => (pixels >= 100_000 ? `${Math.round(pixels / 100_000) / 10} megapixels` : `${pixels.toLocaleString('en-US')} pixels`);

function checkPixels(what: string, width: number, height: number, limits: AssetLimits): void {
  if (width * height > limits.maxPixels) {
    throw new AssetRejected(`The ${what} is ${width} × ${height} pixels (${megapixels(width * height)}); at most ${megapixels(limits.maxPixels)} are accepted`);
  }
}

/** A duration for people: seconds under a minute (`2.5 s`), h:mm:ss above. */
function clock(seconds: number): string {
  if (seconds < 59.5) return `${Math.round(seconds * 10) / 10} s`;
  const s = Math.round(seconds);
  return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

const tookTooLong = (limits: AssetLimits) => new AssetRejected(`Reading the file took longer than ${Math.round(limits.timeoutMs / 1000)} s; it was stopped`);

/**
 * A webp thumbnail of any picture sharp reads, at most THUMBNAIL_SIZE on its long side. sharp's work
 * cannot be killed: its own time limit is what is left of the deadline. A picture sharp cannot
 * decode is rejected with `damaged`.
 */
function thumbnail(image: Sharp, ctx: Context, damaged: string): Promise<AssetFile> {
  return image
    .timeout({ seconds: Math.max(1, Math.ceil((ctx.until - Date.now()) / 1000)) })
    .autoOrient()
    .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .toBuffer()
    .then(
      (bytes) => ({ bytes, mimeType: 'image/webp', ext: 'webp' }),
      (err: Error) => {
        throw /timeout/i.test(err.message) ? tookTooLong(ctx.limits) : new AssetRejected(damaged);
      },
    );
}

const SHARP_FORMAT: Record<string, string> = { png: 'png', jpg: 'jpeg', webp: 'webp', gif: 'gif', avif: 'heif', heic: 'heif' };

async function inspectImage(ctx: Context, detected: DetectedAsset): Promise<AssetInspection> {
  // The header only (no pixel limit yet: sharp would refuse to read the size it is asked to check).
  const meta = await sharp(ctx.file, { limitInputPixels: false }).metadata().catch(() => {
    throw new AssetRejected(`The file starts like a ${detected.ext.toUpperCase()} image but its header cannot be read`);
  });
  if (meta.format !== SHARP_FORMAT[detected.ext]) throw new AssetRejected(`The file starts like a ${detected.ext.toUpperCase()} image but is not one`);
  const frameHeight = meta.pageHeight ?? meta.height;
  checkPixels('image', meta.width, frameHeight, ctx.limits);
  ctx.signal.throwIfAborted();
  if (detected.ext === 'heic') return inspectHeic(ctx);
  const decoder = sharp(ctx.file, { limitInputPixels: ctx.limits.maxPixels, failOn: 'truncated' });
  const thumb = await thumbnail(decoder, ctx, 'The image data is damaged or truncated: it cannot be decoded');
  const turned = (meta.orientation ?? 1) >= 5;
  return { width: turned ? frameHeight : meta.width, height: turned ? meta.width : frameHeight, durationSec: null, thumbnail: thumb };
}

/** A HEIC picture decoded by heif-convert (heif.ts: its rules and limits), measured and thumbnailed from the PNG. */
async function inspectHeic(ctx: Context): Promise<AssetInspection> {
  const png = await decodeHeif(await readFile(ctx.file, { signal: ctx.signal }), {
    maxPixels: ctx.limits.maxPixels,
    timeoutMs: Math.max(1, ctx.until - Date.now()),
    signal: ctx.signal,
  }).catch((err: unknown) => {
    throw err instanceof HeifDecodeError ? new AssetRejected(err.message) : err;
  });
  const meta = await sharp(png).metadata();
  const thumb = await thumbnail(sharp(png, { limitInputPixels: ctx.limits.maxPixels, failOn: 'truncated' }), ctx, 'The decoded HEIC image cannot be read');
  return { width: meta.width, height: meta.height, durationSec: null, thumbnail: thumb };
}

/** Whether a child process ran and exited with an error of its own (the file's fault), not failed to start or got killed. */
const exitedWithError = (err: unknown) => typeof ((err as Error).cause as { code?: unknown } | undefined)?.code === 'number';

async function probe(ctx: Context, what: string): Promise<ProbedMedia & { duration: number }> {
  const probed = await probeMedia(ctx.file, ctx.signal, ctx.limits.timeoutMs).catch((err: unknown) => {
    if (exitedWithError(err)) throw new AssetRejected(`The file cannot be read as ${what}: it is damaged, truncated or not what its header says`);
    throw err;
  });
  if (probed.duration === undefined) throw new AssetRejected(`The ${what} has no duration that can be read`);
  if (probed.duration > ctx.limits.maxDurationSec) {
    throw new AssetRejected(`The ${what} lasts ${clock(probed.duration)}; at most ${clock(ctx.limits.maxDurationSec)} is accepted`);
  }
  return { ...probed, duration: probed.duration };
}

async function inspectVideo(ctx: Context, detected: DetectedAsset): Promise<AssetInspection> {
  const probed = await probe(ctx, 'video');
  if (!probed.hasVideo) {
    if (probed.hasAudio && (detected.ext === 'mp4' || detected.ext === 'mov')) return { ...(await inspectAudio(ctx, probed)), detected: M4A_ASSET };
    throw new AssetRejected(
      probed.hasAudio ? 'The WebM file has no video stream; audio is accepted as mp3, wav, ogg, flac or m4a' : 'The video has no video stream: there are no frames to show',
    );
  }
  if (!probed.width || !probed.height) throw new AssetRejected('The video stream has no picture size');
  checkPixels('video', probed.width, probed.height, ctx.limits);
  // A frame a second in (the first is often black), or the first one of a very short video.
  let frame = await videoFrame(ctx, probed.duration >= 2 ? 1 : 0);
  if (!frame.length && probed.duration >= 2) frame = await videoFrame(ctx, 0);
  if (!frame.length) throw new AssetRejected('No frame of the video can be decoded: it is damaged, truncated or empty');
  const thumb = await thumbnail(sharp(frame), ctx, 'The frame decoded from the video cannot be read');
  return { width: probed.width, height: probed.height, durationSec: probed.duration, thumbnail: thumb };
}

/** One frame as PNG, scaled down to the thumbnail size by ffmpeg; empty when none could be decoded. */
async function videoFrame(ctx: Context, atSec: number): Promise<Buffer> {
  const scale = `scale='min(${THUMBNAIL_SIZE},iw)':'min(${THUMBNAIL_SIZE},ih)':force_original_aspect_ratio=decrease`;
  const args = ['-v', 'error', '-nostdin', '-ss', String(atSec), '-i', ctx.file, '-map', '0:v:0', '-frames:v', '1', '-vf', scale, '-c:v', 'png', '-f', 'image2pipe', 'pipe:1'];
  return runBinaryToBuffer('ffmpeg', args, { signal: ctx.signal, maxBytes: 8 * 1024 * 1024 }).catch((err: unknown) => {
    if (exitedWithError(err)) return Buffer.alloc(0);
    throw err;
  });
}

async function inspectAudio(ctx: Context, probed?: ProbedMedia & { duration: number }): Promise<AssetInspection> {
  probed ??= await probe(ctx, 'audio');
  if (!probed.hasAudio) throw new AssetRejected('The file has no audio stream');
  const { peaks, decodedSec } = await audioPeaks(ctx.file, probed.duration, { signal: ctx.signal }).catch((err: unknown) => {
    if (exitedWithError(err)) throw new AssetRejected('The audio cannot be decoded: it is damaged, truncated or in a codec that is not supported');
    throw err;
  });
  if (!decodedSec) throw new AssetRejected('No audio can be decoded from the file: it is damaged, truncated or empty');
  // The whole stream was decoded for the picture: a header that promises more than that is a truncated or lying file.
  if (decodedSec < probed.duration * 0.9 && probed.duration - decodedSec > 0.5) {
    throw new AssetRejected(`The audio stops after ${clock(decodedSec)} but its header says ${clock(probed.duration)}: the file is truncated or damaged`);
  }
  const waveform = { bytes: await waveformPng(peaks), mimeType: 'image/png', ext: 'png' };
  return { width: null, height: null, durationSec: probed.duration, waveform };
}

async function inspectFont(ctx: Context, size: number): Promise<AssetInspection> {
  checkFontSize(size); // before the file is read into memory
  const font = await readFont(await readFile(ctx.file, { signal: ctx.signal }));
  if (font.format === 'ttc') throw new AssetRejected('Font collections (.ttc) are not accepted; upload one font of the collection');
  return { width: null, height: null, durationSec: null, fontFamily: font.families[0]! };
}

async function inspectSvg(ctx: Context, size: number): Promise<AssetInspection> {
  if (size > ctx.limits.maxSvgBytes) throw new AssetRejected(`The SVG file is ${fileSize(size)}; at most ${fileSize(ctx.limits.maxSvgBytes)} is accepted`);
  const { svg, width, height } = sanitizeSvgDocument(await readFile(ctx.file, { encoding: 'utf8', signal: ctx.signal }));
  if (width && height) checkPixels('SVG', width, height, ctx.limits);
  const sanitized = Buffer.from(svg);
  // Drawn (from the sanitised file) at the density that makes its long side the thumbnail's, whatever size it declares.
  const density = width && height ? Math.min(100_000, Math.max(1, (72 * THUMBNAIL_SIZE) / Math.max(width, height))) : 72;
  const thumb = await thumbnail(sharp(sanitized, { density, limitInputPixels: ctx.limits.maxPixels, failOn: 'error' }), ctx, 'The SVG cannot be drawn');
  return { width, height, durationSec: null, thumbnail: thumb, sanitized };
}

async function inspectLottie(ctx: Context, size: number): Promise<AssetInspection> {
  if (size > ctx.limits.maxLottieBytes) throw new AssetRejected(`The Lottie file is ${fileSize(size)}; at most ${fileSize(ctx.limits.maxLottieBytes)} is accepted`);
  const info = lottieInfo(await readFile(ctx.file, { encoding: 'utf8', signal: ctx.signal }), ctx.limits);
  return { width: info.width, height: info.height, durationSec: info.durationSec, lottie: { frames: info.frames, fps: info.fps } };
}
