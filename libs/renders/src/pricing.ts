import { outputFps, outputKind, outputSize, type EditSpec, type Timing } from '#libs/edit-spec';

/**
 * What a render costs (docs/pricing.md), one function for the estimate and the charge. Stills: 1 image
 * credit per started 4 megapixels of output (a 1080×1080 post is 1, a 4K still is 3). Videos: 1 video
 * credit per started minute of output, times 2 above 720p and 4 above 1080p (short side), times 2
 * above 30 fps.
 */
export const STILL_MEGAPIXELS_PER_CREDIT = 4;
export const VIDEO_SECONDS_PER_CREDIT = 60;

export interface Estimate {
  kind: 'image' | 'video';
  credits: number;
  durationSec: number;
  size: { width: number; height: number };
  breakdown: { duration: string; size: string; fps: number; format: string; codec: string };
}

function clock(seconds: number): string {
  const s = Math.round(seconds * 100) / 100;
  const m = Math.floor(s / 60);
  const rest = Math.round((s - m * 60) * 100) / 100;
  return `${m}:${rest < 10 ? '0' : ''}${rest.toFixed(2).replace(/\.00$/, '')}`;
}

/** The video multiplier: resolution (short side) and frame rate above 30. */
export function videoFactor(size: { width: number; height: number }, fps: number): number {
  const short = Math.min(size.width, size.height);
  const resolution = short > 1080 ? 4 : short > 720 ? 2 : 1;
  return resolution * (fps > 30 ? 2 : 1);
}

export function estimate(edit: EditSpec, timing: Pick<Timing, 'window'>, scale = 1): Estimate {
  const kind = outputKind(edit.output.format);
  const size = outputSize(edit.output, { scale });
  const fps = kind === 'video' ? outputFps(edit.output) : 0;
  const durationSec = kind === 'video' ? timing.window.length : 0;
  const credits = kind === 'image'
    ? Math.max(1, Math.ceil((size.width * size.height) / (STILL_MEGAPIXELS_PER_CREDIT * 1_000_000)))
    : Math.max(1, Math.ceil(durationSec / VIDEO_SECONDS_PER_CREDIT)) * videoFactor(size, fps);
  return {
    kind,
    credits,
    durationSec,
    size: { width: size.width, height: size.height },
    breakdown: {
      duration: clock(durationSec),
      size: `${size.width}x${size.height}`,
      fps,
      format: edit.output.format,
      codec: kind === 'video' ? (edit.output.format === 'gif' ? 'gif' : (edit.output.codec ?? 'h264')) : edit.output.format,
    },
  };
}
