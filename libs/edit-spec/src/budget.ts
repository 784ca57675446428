import { clipVisualAt } from './frame.js';
import { isStillFormat, outputFps, outputSize } from './geometry.js';
import { intrinsicSize } from './layout.js';
import type { Animatable, Clip, EditSpec } from './model.js';
import { clipsAt, type TimedClip, type Timing } from './timing.js';

/**
 * House limits of one render, the same on every plan, checked before anything is held or queued
 * (libs/renders `checkBudget`; each value and why: docs/decisions.md "Hostile input (issue 27): budget").
 */
export const RENDER_BUDGET = {
  /** Clips in one edit (every track). */
  clips: 300,
  /** One clip's layer, drawn at output scale, unless the output frame itself is larger (`layerPixelLimit`). */
  layerPixels: 36_000_000,
  /** Layer pixels drawn for one frame (a still's; a video's busiest moment). */
  framePixels: 200_000_000,
  /** Σ blurred layer pixels × blur sigma (output px) over one frame. */
  frameBlur: 600_000_000,
  /** A decoded input image (width × height); the still engine's sharp `limitInputPixels`. */
  mediaPixels: 40_000_000,
} as const;

/**
 * The largest one clip's layer may be in an output of `outputPixels` (at its scale): RENDER_BUDGET.layerPixels,
 * or the output frame itself when that is larger, so a full-frame text, html or image clip is never refused
 * on a still the plan allows (docs/decisions.md "Hostile input (issue 27): budget").
 */
export function layerPixelLimit(outputPixels: number): number {
  return Math.max(RENDER_BUDGET.layerPixels, outputPixels);
}

/** The Gaussian blur of the `blur` filter, as a sigma in design pixels (times the output's pixel ratio when drawn). */
export const BLUR_SIGMA = 8;

/** One clip's cost when drawn: its layer's pixels at output scale, and those pixels times the blur sigma it is given. */
export interface LayerCost {
  path: string;
  pixels: number;
  /** Pixels × sigma (output px) of the `blur` filter and of a text shadow: the work of the Gaussian blurs. */
  blur: number;
}

/**
 * What drawing an edit costs, worked out before any work (docs/decisions.md "Hostile input (issue 27):
 * budget"); the render path compares it with the house limits and the plan's (libs/renders).
 */
export interface RenderCost {
  clips: number;
  /** The largest single layer. */
  largest?: LayerCost;
  /** The second largest (only one layer may be as large as a frame over the house layer limit). */
  runnerUp?: LayerCost;
  /** Layer pixels drawn for one frame: a still's frame, a video's busiest moment. */
  framePixels: number;
  /** Σ pixels × blur sigma over that frame. */
  frameBlur: number;
  /** Output pixels × frames (a still is one frame). */
  pixelFrames: number;
  /** Pixels of one output frame, at output scale (a still's device scale included). */
  outputPixels: number;
}

const maxOf = (value: Animatable): number => (typeof value === 'number' ? value : Math.max(...value.flatMap((t) => [t.from, t.to])));

/**
 * A clip's layer as the engines draw it: its content box at rest, at its largest keyframed scale,
 * times the output's pixel ratio; not cut to the frame (a text block is laid out whole before it is
 * cut). Media whose size the edit does not say (images, videos) count as their clip's box.
 */
export function layerCost(c: TimedClip, viewport: { width: number; height: number }, pixelRatio: number, path: string): LayerCost {
  const clip: Clip = { ...c.clip, scale: Math.max(0, maxOf(c.clip.scale)) };
  const box = { width: clip.width ?? viewport.width, height: clip.height ?? viewport.height };
  const source = intrinsicSize(clip.asset, clip, viewport) ?? box;
  const v = clipVisualAt(clip, 0, c.length, { viewport, source, still: true });
  const width = Math.max(0, v.content.width * pixelRatio);
  const height = Math.max(0, v.content.height * pixelRatio);
  const pixels = Math.ceil(width * height);
  const shadow = (clip.asset as { shadow?: { blur: number } }).shadow?.blur ?? 0;
  const sigma = (clip.filter === 'blur' ? BLUR_SIGMA : 0) + shadow / 2;
  return { path, pixels, blur: Math.ceil(pixels * sigma * pixelRatio) };
}

/** The cost figures of `edit` drawn at `scale` (a still's device scale) over `timing`. */
export function renderCost(edit: EditSpec, timing: Timing, opts: { scale?: number; root?: string } = {}): RenderCost {
  const root = opts.root ?? 'edit';
  const size = outputSize(edit.output, opts.scale === undefined ? {} : { scale: opts.scale });
  const still = isStillFormat(edit.output.format);
  const costs = new Map<TimedClip, LayerCost>();
  const costOf = (c: TimedClip): LayerCost => {
    let cost = costs.get(c);
    if (!cost) {
      cost = c.clip.asset.type === 'audio'
        ? { path: '', pixels: 0, blur: 0 }
        : layerCost(c, size.viewport, size.pixelRatio, `${root}.timeline.tracks[${c.track}].clips[${c.index}]`);
      costs.set(c, cost);
    }
    return cost;
  };
  // A still draws one moment; a video's busiest moment starts with one of its clips (or the window).
  const { start, length } = timing.window;
  const moments = still
    ? [edit.output.poster?.capture ?? start]
    : [...new Set([start, ...timing.tracks.flat().map((c) => c.start).filter((t) => t > start && t < start + length)])];
  let framePixels = 0;
  let frameBlur = 0;
  for (const t of moments) {
    const active = clipsAt(timing, t).map(costOf);
    framePixels = Math.max(framePixels, active.reduce((n, c) => n + c.pixels, 0));
    frameBlur = Math.max(frameBlur, active.reduce((n, c) => n + c.blur, 0));
  }
  const [largest, runnerUp] = [...costs.values()].filter((c) => c.pixels > 0).sort((a, b) => b.pixels - a.pixels);
  const frames = still ? 1 : Math.max(1, Math.ceil(length * outputFps(edit.output)));
  return {
    clips: timing.tracks.reduce((n, t) => n + t.length, 0),
    ...(largest ? { largest } : {}),
    ...(runnerUp ? { runnerUp } : {}),
    framePixels,
    frameBlur,
    pixelFrames: size.width * size.height * frames,
    outputPixels: size.width * size.height,
  };
}
