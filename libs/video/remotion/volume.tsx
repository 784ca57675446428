import type { VolumeEffect } from '#libs/edit-spec';
import { VOLUME_FADE_SECONDS } from '../src/props.js';

/**
 * Gain (0..1) of a volume effect at `t` seconds into something that plays for `length` seconds:
 * linear fades of VOLUME_FADE_SECONDS at the start and/or end (at most half the length each).
 */
export function fadeVolume(effect: VolumeEffect, t: number, length: number): number {
  const fade = Math.min(VOLUME_FADE_SECONDS, length / 2);
  if (fade <= 0) return 1;
  let gain = 1;
  if (effect === 'fadeIn' || effect === 'fadeInFadeOut') gain = Math.min(gain, t / fade);
  if (effect === 'fadeOut' || effect === 'fadeInFadeOut') gain = Math.min(gain, (length - t) / fade);
  return Math.min(1, Math.max(0, gain));
}
