import type { CSSProperties, ReactNode } from 'react';
import type { RichTextAsset, TextAsset } from '#libs/edit-spec';
import type { TextBlock } from '../src/props.js';
import { textBlockElement } from '../src/text-view.js';

type Animation = TextAsset['animation'] | RichTextAsset['animation'];

/** Default seconds of a text animation when the asset gives none. */
const DEFAULT_ANIMATION_SECONDS = 1;

const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
const easeOut = (p: number) => 1 - (1 - p) ** 3;

/** Characters or words of the text, keeping the spaces, for per-unit animations. */
function units(text: string, by: 'character' | 'word'): string[] {
  return by === 'word' ? text.split(/(\s+)/).filter((u) => u !== '') : [...text];
}

/**
 * A text animation at `time` seconds into the clip: the whole block (fadeIn, slideIn) or its
 * characters/words one after another (typewriter, ascend, shift, movingLetters), over `duration`.
 */
function animate(text: string, animation: Animation, time: number): { block: CSSProperties; content: ReactNode } {
  if (!animation || !Number.isFinite(time)) return { block: {}, content: text };
  const duration = animation.duration ?? DEFAULT_ANIMATION_SECONDS;
  const p = duration > 0 ? clamp01(time / duration) : 1;
  const preset = animation.preset;
  const direction = 'direction' in animation ? animation.direction : undefined;
  if (preset === 'fadeIn') return { block: { opacity: easeOut(p) }, content: text };
  if (preset === 'slideIn') {
    const d = 1 - easeOut(p);
    const [x, y] = direction === 'right' ? [-1, 0] : direction === 'up' ? [0, 1] : direction === 'down' ? [0, -1] : [1, 0];
    return { block: { opacity: easeOut(p), transform: `translate(${x * d * 0.5}em, ${y * d * 0.5}em)` }, content: text };
  }
  const by = 'style' in animation && animation.style === 'word' ? 'word' : 'character';
  const parts = units(text, preset === 'typewriter' ? 'character' : by);
  if (preset === 'typewriter') {
    const shown = Math.floor(p * parts.length + 1e-9);
    return { block: {}, content: <>{parts.slice(0, shown).join('')}<span style={{ visibility: 'hidden' }}>{parts.slice(shown).join('')}</span></> };
  }
  // ascend, shift, movingLetters: each unit enters in turn, overlapping its neighbours.
  const n = parts.length;
  const span = n > 0 ? 3 / (n + 2) : 1;
  return {
    block: {},
    content: parts.map((u, i) => {
      const q = easeOut(clamp01((p - (i / Math.max(1, n)) * (1 - span)) / span));
      const move = preset === 'ascend' ? `translateY(${(1 - q) * 0.6}em)` : preset === 'shift' ? `translateX(${(1 - q) * 0.6}em)` : `translateY(${(1 - q) * -0.8}em) scale(${0.6 + 0.4 * q})`;
      return (
        <span key={i} style={{ display: 'inline-block', whiteSpace: 'pre', opacity: q, transform: move }}>
          {u}
        </span>
      );
    }),
  };
}

/** The still engine's text block drawn with CSS (text-view.ts), at its animation's `time`. */
export function TextBlockView({ block, animation, time }: { block: TextBlock; animation?: Animation; time: number }) {
  return textBlockElement(block, animate(block.text, animation, time));
}
