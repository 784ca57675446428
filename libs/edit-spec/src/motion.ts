import { ease } from './easing.js';
import {
  EFFECT_MOTIONS, TRANSITION_MOTIONS,
  type Animatable, type ClipTransition, type Easing, type Effect, type EffectMotion, type Speed,
  type TransitionMotion, type TransitionName, type Tween,
} from './model.js';

// --- keyframes ----------------------------------------------------------------------------------

/** Progress through one tween at clip time t, after interpolation and easing. */
function tweenProgress(tween: Tween, t: number): number {
  if (tween.length <= 0) return t >= tween.start ? 1 : 0;
  const p = Math.min(1, Math.max(0, (t - tween.start) / tween.length));
  if (tween.interpolation === 'constant') return p >= 1 ? 1 : 0;
  if (tween.interpolation === 'bezier') return ease(tween.easing ?? 'ease', p);
  // No interpolation named but an easing given: the easing is what the author meant.
  if (tween.interpolation === undefined && tween.easing) return ease(tween.easing, p);
  return p;
}

/**
 * Value of a constant or keyframed property at clip time t (seconds from the clip's start).
 * Before the first tween: its `from`; inside a tween: interpolated; between and after tweens: the
 * `to` of the last tween that started. `constant` holds `from` until the tween ends, then jumps.
 */
export function valueAt(value: Animatable, t: number): number {
  if (typeof value === 'number') return value;
  const tweens = [...value].sort((a, b) => a.start - b.start);
  const first = tweens[0];
  if (!first) return 0;
  if (t < first.start) return first.from;
  const current = tweens.filter((tw) => tw.start <= t).at(-1) ?? first;
  const p = tweenProgress(current, t);
  return current.from + (current.to - current.from) * p;
}

// --- effects ------------------------------------------------------------------------------------

function splitSpeed<M extends string>(name: string, motions: readonly M[]): { motion: M; speed: Speed } | undefined {
  const match = /^(.*?)(Slow|Fast)?$/.exec(name);
  const motion = motions.find((m) => m === match?.[1]);
  return motion === undefined ? undefined : { motion, speed: (match?.[2] ?? '') as Speed };
}

/** Zoom factor reached over the clip by zoomIn / zoomOut, per speed. */
export const EFFECT_ZOOM: Readonly<Record<Speed, number>> = { '': 1.3, Slow: 1.1, Fast: 1.7 };
/** Pan distance (fraction of the viewport, each way from centre) of the slide effects, per speed. */
export const EFFECT_PAN: Readonly<Record<Speed, number>> = { '': 0.12, Slow: 0.03, Fast: 0.2 };

export interface MotionTransform {
  /** Multiplies the clip's size, about its centre. */
  scale: number;
  /** Fractions of the viewport: x right-positive, y up-positive (as clip offsets). */
  offsetX: number;
  offsetY: number;
}

export const IDENTITY_MOTION: MotionTransform = { scale: 1, offsetX: 0, offsetY: 0 };

/**
 * A Ken Burns motion effect at `progress` (0..1 through the clip; linear). zoomIn grows from 1 to
 * the speed's factor, zoomOut shrinks back to 1. slideX pans the content in direction X by twice the
 * speed's distance, enlarged by 1 + 2·distance so the frame stays covered.
 */
export function effectTransform(effect: Effect | undefined, progress: number): MotionTransform {
  const parsed = effect && splitSpeed<EffectMotion>(effect, EFFECT_MOTIONS);
  if (!parsed) return IDENTITY_MOTION;
  const p = Math.min(1, Math.max(0, progress));
  const zoom = EFFECT_ZOOM[parsed.speed];
  const pan = EFFECT_PAN[parsed.speed];
  const forward = pan * (2 * p - 1);
  const backward = pan * (1 - 2 * p);
  switch (parsed.motion) {
    case 'zoomIn':
      return { scale: 1 + (zoom - 1) * p, offsetX: 0, offsetY: 0 };
    case 'zoomOut':
      return { scale: zoom - (zoom - 1) * p, offsetX: 0, offsetY: 0 };
    case 'slideLeft':
      return { scale: 1 + 2 * pan, offsetX: backward, offsetY: 0 };
    case 'slideRight':
      return { scale: 1 + 2 * pan, offsetX: forward, offsetY: 0 };
    case 'slideUp':
      return { scale: 1 + 2 * pan, offsetX: 0, offsetY: forward };
    case 'slideDown':
      return { scale: 1 + 2 * pan, offsetX: 0, offsetY: backward };
  }
}

// --- transitions --------------------------------------------------------------------------------

/** Insets (fractions of the clip's box) hidden by reveal and wipe transitions. */
export interface ClipInsets {
  top: number;
  right: number;
  bottom: number;
  left: number;
  /** Width of a soft edge (fraction of the box) for wipes; 0 for hard edges. */
  feather: number;
}

export interface TransitionState extends MotionTransform {
  opacity: number;
  /** Degrees, clockwise. */
  rotate: number;
  clip: ClipInsets;
}

const NO_INSETS: ClipInsets = { top: 0, right: 0, bottom: 0, left: 0, feather: 0 };

/** A clip with no transition under way. */
export const AT_REST: TransitionState = { opacity: 1, scale: 1, offsetX: 0, offsetY: 0, rotate: 0, clip: NO_INSETS };

/** Normal-speed durations in seconds; `Slow` is 2 s for every transition, `Fast` half the normal. */
export const TRANSITION_BASE_SECONDS: Readonly<Record<'zoom' | 'slide' | 'carousel' | 'other', number>> = {
  zoom: 0.4,
  slide: 0.5,
  carousel: 0.5,
  other: 1,
};
export const SLOW_TRANSITION_SECONDS = 2;

/** How long a transition lasts, in seconds (0 for none). */
export function transitionDuration(name: TransitionName | undefined): number {
  const parsed = name && name !== 'none' ? splitSpeed<TransitionMotion>(name, TRANSITION_MOTIONS) : undefined;
  if (!parsed) return 0;
  if (parsed.motion === 'zoom') return TRANSITION_BASE_SECONDS.zoom;
  const family = parsed.motion.startsWith('slide') ? 'slide' : parsed.motion.startsWith('carousel') ? 'carousel' : 'other';
  const base = TRANSITION_BASE_SECONDS[family];
  return parsed.speed === 'Slow' ? SLOW_TRANSITION_SECONDS : parsed.speed === 'Fast' ? base / 2 : base;
}

const SLIDE_DISTANCE = 0.025;
const SHUFFLE_ANGLE = 20;
const SIDE: Readonly<Record<string, readonly [number, number]>> = { Top: [0, 1], Bottom: [0, -1], Left: [-1, 0], Right: [1, 0] };

/** Easing of a transition's movement: fades and wipes ease in and out; moves decelerate in, accelerate out. */
function transitionEasing(motion: TransitionMotion, entering: boolean): Easing {
  if (motion === 'fade' || motion === 'reveal' || motion.startsWith('wipe')) return 'easeInOut';
  return entering ? 'easeOut' : 'easeIn';
}

/**
 * State of one transition phase. `away` is how far the clip is from rest: 1 when fully out, 0 at rest.
 * Entering moves run toward rest; leaving moves keep going the way the transition names.
 */
function phaseState(motion: TransitionMotion, away: number, entering: boolean): TransitionState {
  const a = away;
  switch (motion) {
    case 'fade':
      return { ...AT_REST, opacity: 1 - a };
    case 'zoom':
      return { ...AT_REST, opacity: 1 - a, scale: 1 + 9 * a };
    case 'slideLeft':
      return { ...AT_REST, opacity: 1 - a, offsetX: (entering ? 1 : -1) * SLIDE_DISTANCE * a };
    case 'slideRight':
      return { ...AT_REST, opacity: 1 - a, offsetX: (entering ? -1 : 1) * SLIDE_DISTANCE * a };
    case 'slideUp':
      return { ...AT_REST, opacity: 1 - a, offsetY: (entering ? -1 : 1) * SLIDE_DISTANCE * a };
    case 'slideDown':
      return { ...AT_REST, opacity: 1 - a, offsetY: (entering ? 1 : -1) * SLIDE_DISTANCE * a };
    case 'carouselLeft':
      return { ...AT_REST, offsetX: (entering ? 1 : -1) * a };
    case 'carouselRight':
      return { ...AT_REST, offsetX: (entering ? -1 : 1) * a };
    case 'carouselUp':
      return { ...AT_REST, offsetY: (entering ? -1 : 1) * a };
    case 'carouselDown':
      return { ...AT_REST, offsetY: (entering ? 1 : -1) * a };
    case 'reveal':
      return { ...AT_REST, clip: { ...NO_INSETS, right: a } };
    case 'wipeLeft':
      return { ...AT_REST, clip: { ...NO_INSETS, feather: 0.1, ...(entering ? { left: a } : { right: a }) } };
    case 'wipeRight':
      return { ...AT_REST, clip: { ...NO_INSETS, feather: 0.1, ...(entering ? { right: a } : { left: a }) } };
    default: {
      // shuffle<From><Toward>: from (or to) side From, shifted toward side Toward, turning as it goes.
      const [, from = '', toward = ''] = /^shuffle(Top|Bottom|Left|Right)(Top|Bottom|Left|Right)$/.exec(motion) ?? [];
      const [fx, fy] = SIDE[from] ?? [0, 0];
      const [tx, ty] = SIDE[toward] ?? [0, 0];
      const x = fx + tx / 2;
      const y = fy + ty / 2;
      return { ...AT_REST, offsetX: x * a, offsetY: y * a, rotate: (x >= 0 ? 1 : -1) * SHUFFLE_ANGLE * a };
    }
  }
}

function combine(a: TransitionState, b: TransitionState): TransitionState {
  return {
    opacity: a.opacity * b.opacity,
    scale: a.scale * b.scale,
    offsetX: a.offsetX + b.offsetX,
    offsetY: a.offsetY + b.offsetY,
    rotate: a.rotate + b.rotate,
    clip: {
      top: Math.max(a.clip.top, b.clip.top),
      right: Math.max(a.clip.right, b.clip.right),
      bottom: Math.max(a.clip.bottom, b.clip.bottom),
      left: Math.max(a.clip.left, b.clip.left),
      feather: Math.max(a.clip.feather, b.clip.feather),
    },
  };
}

/**
 * In and out transition durations for a clip, shrunk in proportion when together they would be
 * longer than the clip.
 */
export function transitionWindows(transition: ClipTransition | undefined, clipLength: number): { in: number; out: number } {
  const inn = transitionDuration(transition?.in);
  const out = transitionDuration(transition?.out);
  const total = inn + out;
  const fit = total > clipLength && total > 0 ? clipLength / total : 1;
  return { in: inn * fit, out: out * fit };
}

/**
 * The visual state a clip's transitions give it at `clipTime` seconds into a clip of `clipLength`:
 * the in transition plays over its first seconds, the out transition over its last.
 */
export function transitionState(transition: ClipTransition | undefined, clipTime: number, clipLength: number): TransitionState {
  const windows = transitionWindows(transition, clipLength);
  let state = AT_REST;
  const inMotion = transition?.in && transition.in !== 'none' ? splitSpeed<TransitionMotion>(transition.in, TRANSITION_MOTIONS) : undefined;
  if (inMotion && windows.in > 0 && clipTime < windows.in) {
    const p = ease(transitionEasing(inMotion.motion, true), Math.max(0, clipTime) / windows.in);
    state = combine(state, phaseState(inMotion.motion, 1 - p, true));
  }
  const outMotion = transition?.out && transition.out !== 'none' ? splitSpeed<TransitionMotion>(transition.out, TRANSITION_MOTIONS) : undefined;
  const outStart = clipLength - windows.out;
  if (outMotion && windows.out > 0 && clipTime > outStart) {
    const q = ease(transitionEasing(outMotion.motion, false), Math.min(1, (clipTime - outStart) / windows.out));
    state = combine(state, phaseState(outMotion.motion, q, false));
  }
  return state;
}
