import type { Codec as EditCodec, OutputFormat, Quality } from '#libs/edit-spec';

/** CRF per output `quality` (lower is better); x265's scale sits about 3 above x264's for the same look. */
export const CRF: Readonly<Record<'h264' | 'h265', Readonly<Record<Quality, number>>>> = {
  h264: { verylow: 35, low: 30, medium: 26, high: 23, veryhigh: 18 },
  h265: { verylow: 37, low: 33, medium: 29, high: 26, veryhigh: 21 },
};

/** Quality when the edit names none (x264's own default CRF, 23). */
export const DEFAULT_QUALITY: Quality = 'high';

export type VideoCodec = 'h264' | 'h265' | 'gif';

export interface Encoding {
  codec: VideoCodec;
  /** Undefined for gif (palette-quantised; no CRF). */
  crf?: number;
  extension: 'mp4' | 'gif';
  contentType: string;
  /** Remotion's numberOfGifLoops: null loops forever, 0 plays once. */
  gifLoops?: number | null;
}

/** How an output is encoded: mp4 in h264 (h265 when `codec` asks), or a gif that loops when `repeat` is true. */
export function encodingFor(output: { format: OutputFormat; codec?: EditCodec; quality?: Quality; repeat?: boolean }): Encoding {
  if (output.format === 'gif') {
    return { codec: 'gif', extension: 'gif', contentType: 'image/gif', gifLoops: output.repeat === false ? 0 : null };
  }
  if (output.format !== 'mp4') throw new Error(`the video engine renders mp4 and gif, not ${output.format}`);
  const codec = output.codec ?? 'h264';
  return { codec, crf: CRF[codec][output.quality ?? DEFAULT_QUALITY], extension: 'mp4', contentType: 'video/mp4' };
}

/** The palette filter Remotion puts in a gif's ffmpeg command (palettegen and paletteuse at their defaults). */
export const REMOTION_GIF_FILTER = 'split[v],palettegen,[v]paletteuse';

/**
 * Ours (decisions.md "Output colour", docs/benchmarks.md "GIF palette and dithering"): one palette built
 * from every frame of the clip, all 256 colours (our gifs are opaque: no entry kept for transparency),
 * applied with Floyd–Steinberg error diffusion, which beat Remotion's default (Sierra-2-4A) on both
 * size (5–10 % smaller) and SSIM against the frames, and keeps gradients from banding as no dithering does.
 */
export const GIF_FILTER = 'split[a][b];[a]palettegen=stats_mode=full:reserve_transparent=0[p];[b][p]paletteuse=dither=floyd_steinberg';

/** Remotion's ffmpegOverride for a gif: its palette filter replaced by ours (an unknown command is left alone). */
export function gifFfmpegOverride({ args }: { type: string; args: string[] }): string[] {
  return args.map((a) => (a === REMOTION_GIF_FILTER ? GIF_FILTER : a));
}
