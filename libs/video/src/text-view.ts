import { createElement, type CSSProperties, type ReactElement, type ReactNode } from 'react';
import type { Rgba } from '#libs/edit-spec';
import { cssString } from './css.js';
import type { TextBlock } from './props.js';

/**
 * The still engine's text block (libs/still: text, rich-text and title assets) as React elements
 * styled with CSS in a box of block.box design pixels: background, plate, border, padding, alignment,
 * stroke, shadow, gradient, letter spacing, decoration, highlight. One source for the video's text
 * clips (remotion/text.tsx `TextBlockView`, in the Remotion bundle) and a PDF's printed text clips
 * (text-document.ts, on the Node side): plain `createElement`, no hooks, no JSX, so both compile it.
 * `animated` is the block's animation at its time (remotion/text.tsx); at rest, the plain text.
 */
export function textBlockElement(block: TextBlock, animated: { block: CSSProperties; content: ReactNode } = { block: {}, content: block.text }): ReactElement {
  const rgba = (c: Rgba) => `rgba(${c.r}, ${c.g}, ${c.b}, ${Math.round(c.a * 1000) / 1000})`;
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
  return createElement('div', { style: outer }, createElement('div', { style: { ...line, ...animated.block } }, createElement('span', { style: text }, animated.content)));
}
