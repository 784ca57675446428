import type { CSSProperties, ReactNode } from 'react';
import type { Rgba, RichTextAsset, TextAsset } from '#libs/edit-spec';
import { cssString } from '../src/css.js';
import type { TextBlock } from '../src/props.js';

const rgba = (c: Rgba) => `rgba(${c.r}, ${c.g}, ${c.b}, ${Math.round(c.a * 1000) / 1000})`;

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

/**
 * The still engine's text block (libs/still: text, rich-text and title assets) drawn with CSS in a
 * box of block.box design pixels: background, plate, border, padding, alignment, stroke, shadow,
 * gradient, letter spacing, decoration, highlight.
 */
export function TextBlockView({ block, animation, time }: { block: TextBlock; animation?: Animation; time: number }) {
  const s = block.style;
  const pad = block.padding;
  const outer: CSSProperties = {
    position: 'absolute',
    inset: 0,
    boxSizing: 'border-box',
    padding: `${pad.top}px ${pad.right}px ${pad.bottom}px ${pad.left}px`,
    display: 'flex',
    flexDirection: 'column',
    justifyContent: block.align.vertical === 'top' ? 'flex-start' : block.align.vertical === 'bottom' ? 'flex-end' : 'center',
    overflow: 'hidden',
  };
  if (block.background) {
    outer.backgroundColor = rgba(block.background.color);
    outer.borderRadius = block.background.radius;
  }
  if (block.border) {
    outer.border = `${block.border.width}px solid ${rgba(block.border.color)}`;
    outer.borderRadius = block.border.radius;
  }
  const line: CSSProperties = { textAlign: block.align.horizontal, width: '100%' };
  if (block.nudge && (block.nudge.x || block.nudge.y)) line.transform = `translate(${block.nudge.x}px, ${block.nudge.y}px)`;

  const text: CSSProperties = {
    fontFamily: cssString(s.family),
    fontSize: s.size,
    fontWeight: s.weight,
    fontStyle: s.italic ? 'italic' : 'normal',
    color: rgba(s.color),
    lineHeight: s.lineHeight ?? 'normal',
    whiteSpace: 'pre-wrap',
    overflowWrap: 'anywhere',
  };
  if (s.letterSpacing) text.letterSpacing = s.letterSpacing;
  if (s.decoration) text.textDecoration = s.decoration;
  if (s.highlight) {
    text.backgroundColor = rgba(s.highlight);
    text.boxDecorationBreak = 'clone';
    text.WebkitBoxDecorationBreak = 'clone';
  }
  if (block.stroke) {
    // Centred strokes twice as wide, painted under the fill: an outline of `width` outside the glyphs.
    text.WebkitTextStroke = `${block.stroke.width * 2}px ${rgba(block.stroke.color)}`;
    text.paintOrder = 'stroke fill';
  }
  const shadow = block.shadow ? `${block.shadow.offsetX}px ${block.shadow.offsetY}px ${block.shadow.blur}px ${rgba(block.shadow.color)}` : undefined;
  if (block.gradient) {
    const stops = block.gradient.stops.map((g) => `${rgba(g.color)} ${g.offset * 100}%`).join(', ');
    text.backgroundImage = block.gradient.type === 'radial' ? `radial-gradient(circle, ${stops})` : `linear-gradient(${block.gradient.angle}deg, ${stops})`;
    text.WebkitBackgroundClip = 'text';
    text.backgroundClip = 'text';
    text.color = 'transparent';
    text.display = 'inline-block';
    // A text-shadow would be painted over a background-clipped fill; a drop-shadow goes under it.
    if (block.shadow) text.filter = `drop-shadow(${shadow})`;
  } else if (shadow) {
    text.textShadow = shadow;
  }
  if (block.plate) {
    const p = block.plate.padding;
    text.display = 'inline-block';
    text.backgroundColor = rgba(block.plate.color);
    text.padding = p;
    text.margin = -p;
    text.borderRadius = block.plate.radius;
  }
  const animated = animate(block.text, animation, time);
  return (
    <div style={outer}>
      <div style={{ ...line, ...animated.block }}>
        <span style={text}>{animated.content}</span>
      </div>
    </div>
  );
}
