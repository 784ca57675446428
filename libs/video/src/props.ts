import type { Rect, Size, SoundtrackEffect, Timing, VolumeEffect } from '#libs/edit-spec';
// The still engine's text-block model: the composition draws the same blocks with CSS.
import type { TextBlock } from '#libs/still';

/**
 * The input props of the `Edit` composition (libs/video/remotion): a normalised, timed edit plus
 * everything the page cannot work out itself (media URLs on the loopback media server, probed sizes,
 * text blocks with their fonts resolved, caption cues, sanitised html documents). Made by the Node
 * side (inputs.ts); plain JSON.
 */
export type EditProps = {
  /** Output frame in pixels (even for mp4/gif). */
  width: number;
  height: number;
  /** The design viewport the layout is computed in, and output pixels per viewport pixel. */
  viewport: Size;
  pixelRatio: number;
  fps: number;
  /** Frames of the output window. */
  durationInFrames: number;
  /** Timeline seconds at frame 0 (`output.range.start`, or a still's capture time). */
  windowStart: number;
  /** Edit colour of timeline.background. */
  background: string;
  timing: Pick<Timing, 'tracks'>;
  /** Per clip, keyed `track:index`. */
  clips: Record<string, ClipInputs>;
  soundtrack?: SoundtrackInput;
  /** The media server's origin: the only place besides Remotion's own server the page may load from (its CSP, css.ts pageCsp). */
  mediaOrigin: string;
  /** `@font-face` rules of timeline.fonts (served by the media server). */
  fontFaces: string;
  /** A still: clips at rest (no effects, no transitions), no media playback. */
  still: boolean;
  muted: boolean;
  /**
   * Only what makes sound is on the page (the soundtrack, audio clips, video clips with sound): the
   * sound of a render drawn span by span, rendered once apart from the pictures (engine.ts renderSpans).
   */
  soundOnly?: boolean;
  /**
   * Output frames to draw, one per frame of the page's own timeline (engine.ts renderSpans): frames
   * that play no video, drawn out of order and muted; each clip shows where its Sequence would.
   */
  frames?: number[];
  /**
   * With `frames`: per picture, the only clips it shows (keys `track:index`), and whether they show at
   * full opacity (their own fades left out): the pictures of the clips over a composed video, faded and
   * moved outside the browser (spans.ts overlayGroups, composite.ts).
   */
  pictureClips?: { clips: string[]; fullOpacity: boolean }[];
};

export interface MediaInput {
  /** Where the page (or Remotion's frame extractor) loads the file. */
  url: string;
  kind: 'image' | 'video' | 'audio';
  /** Display size of a picture. */
  width?: number;
  height?: number;
  /** Seconds (video, audio). */
  duration?: number;
  hasAudio?: boolean;
  /** A picture that animates by itself in the browser (frames of a GIF, WebP or APNG; an SVG's animations). */
  animated?: boolean;
}

export interface ClipInputs {
  /** The asset's layout size (intrinsicSize): what clipVisualAt fits, crops and scales. */
  source?: Size;
  /** The part of the media file that is the asset (its `crop`), in media pixels. */
  cut?: Rect;
  media?: MediaInput;
  text?: TextBlock;
  /** SVG markup as a data: URL. */
  svg?: string;
  /** The complete document of an html asset, shown in a sandboxed frame (no scripts, local files only). */
  html?: string;
  caption?: CaptionInput;
}

export interface Cue {
  /** Seconds of the caption file. */
  start: number;
  end: number;
  text: string;
}

export interface CaptionInput {
  cues: Cue[];
  family: string;
}

export interface SoundtrackInput {
  url: string;
  volume: number;
  effect?: SoundtrackEffect;
  duration: number;
}

export const clipKey = (track: number, index: number): string => `${track}:${index}`;

/** Seconds of the fades of `volumeEffect` / soundtrack `effect` (capped at half the clip). */
export const VOLUME_FADE_SECONDS = 2;

/**
 * Gain (0..1) of a volume effect at `t` seconds into something that plays for `length` seconds:
 * linear fades of VOLUME_FADE_SECONDS at the start and/or end (at most half the length each). The
 * composition's (remotion/volume.tsx) and the engine's (soundtrack.ts) one definition.
 */
export function fadeVolume(effect: VolumeEffect, t: number, length: number): number {
  const fade = Math.min(VOLUME_FADE_SECONDS, length / 2);
  if (fade <= 0) return 1;
  let gain = 1;
  if (effect === 'fadeIn' || effect === 'fadeInFadeOut') gain = Math.min(gain, t / fade);
  if (effect === 'fadeOut' || effect === 'fadeInFadeOut') gain = Math.min(gain, (length - t) / fade);
  return Math.min(1, Math.max(0, gain));
}

export type { TextBlock };
