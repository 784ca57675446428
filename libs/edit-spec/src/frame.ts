import type { Size } from './geometry.js';
import { clipBox, layoutClip, scaleAboutCentre, type Placement } from './layout.js';
import type { Clip, Filter } from './model.js';
import { AT_REST, effectTransform, IDENTITY_MOTION, transitionState, valueAt, type ClipInsets } from './motion.js';

export interface FrameEnv {
  viewport: Size;
  /** The asset's intrinsic size (see intrinsicSize). */
  source: Size;
  /** Stills show clips at rest: no effect or transition, keyframes evaluated at the still's time. */
  still?: boolean;
}

export interface ClipVisual extends Placement {
  opacity: number;
  /** Degrees, clockwise, about the centre of `box`. */
  rotate: number;
  /** Degrees of horizontal (x) and vertical (y) shear. */
  skew: { x: number; y: number };
  flip: { horizontal: boolean; vertical: boolean };
  /** Parts of the box hidden by reveal/wipe transitions. */
  clip: ClipInsets;
  filter?: Filter;
}

/**
 * Everything a renderer needs to paint one clip at `clipTime` seconds into it (of `clipLength`):
 * keyframed scale/offset/opacity/rotation/skew, then the motion effect and transitions on top
 * (their scale about the box centre, their offsets added to the clip's).
 */
export function clipVisualAt(clip: Clip, clipTime: number, clipLength: number, env: FrameEnv): ClipVisual {
  const effect = env.still ? IDENTITY_MOTION : effectTransform(clip.effect, clipLength > 0 ? clipTime / clipLength : 0);
  const transition = env.still ? AT_REST : transitionState(clip.transition, clipTime, clipLength);
  const placed = layoutClip({
    viewport: env.viewport,
    box: clipBox(clip, env.viewport),
    source: env.source,
    fit: clip.fit,
    scale: valueAt(clip.scale, clipTime),
    position: clip.position,
    offset: {
      x: valueAt(clip.offset.x, clipTime) + effect.offsetX + transition.offsetX,
      y: valueAt(clip.offset.y, clipTime) + effect.offsetY + transition.offsetY,
    },
  });
  const factor = effect.scale * transition.scale;
  const box = scaleAboutCentre(placed.box, factor);
  const content = {
    x: box.x + (placed.content.x - placed.box.x) * factor,
    y: box.y + (placed.content.y - placed.box.y) * factor,
    width: placed.content.width * factor,
    height: placed.content.height * factor,
  };
  const visual: ClipVisual = {
    box,
    content,
    crop: placed.crop,
    opacity: Math.min(1, Math.max(0, valueAt(clip.opacity, clipTime) * transition.opacity)),
    rotate: valueAt(clip.transform?.rotate?.angle ?? 0, clipTime) + transition.rotate,
    skew: { x: valueAt(clip.transform?.skew?.x ?? 0, clipTime), y: valueAt(clip.transform?.skew?.y ?? 0, clipTime) },
    flip: clip.transform?.flip ?? { horizontal: false, vertical: false },
    clip: transition.clip,
  };
  if (clip.filter) visual.filter = clip.filter;
  return visual;
}
