import { useId, useState, type ReactNode } from 'react';
import { cancelRender, continueRender, delayRender } from 'remotion';
import { NoReactInternals } from 'remotion/no-react';
import { clipVisualAt, type ClipVisual, type TimedClip } from '#libs/edit-spec';
import type { ClipInputs, EditProps } from '../src/props.js';

/** The matte's picture; the frame waits until it has loaded (one element per frame of the matte). */
function MatteImage({ url, x, y, width, height }: { url: string; x: number; y: number; width: number; height: number }) {
  const [handle] = useState(() => delayRender(`luma matte ${url}`));
  return (
    <image
      href={url}
      x={x}
      y={y}
      width={width}
      height={height}
      preserveAspectRatio="none"
      onLoad={() => continueRender(handle)}
      onError={() => cancelRender(new Error(`The luma matte ${url} could not be loaded`))}
    />
  );
}

/**
 * The clip's rotation, skew and flip about its box's centre, as the other clips' CSS transform
 * (ClipView's boxStyle: `rotate() skew() scale()`, origin the centre), in SVG's words.
 */
function boxTransform(v: ClipVisual): string | undefined {
  const parts: string[] = [];
  if (v.rotate) parts.push(`rotate(${v.rotate})`);
  // CSS skew(x, y) is the matrix (1, tan y, tan x, 1); SVG's skewX then skewY would compose differently.
  if (v.skew.x || v.skew.y) parts.push(`matrix(1 ${Math.tan((v.skew.y * Math.PI) / 180)} ${Math.tan((v.skew.x * Math.PI) / 180)} 1 0 0)`);
  if (v.flip.horizontal || v.flip.vertical) parts.push(`scale(${v.flip.horizontal ? -1 : 1} ${v.flip.vertical ? -1 : 1})`);
  if (!parts.length) return undefined;
  const cx = v.box.x + v.box.width / 2;
  const cy = v.box.y + v.box.height / 2;
  return `translate(${cx} ${cy}) ${parts.join(' ')} translate(${-cx} ${-cy})`;
}

/**
 * Reveal and wipe transitions on the matte, as on the other clips (Edit.tsx insetStyle): hard insets
 * clip the box, a soft wipe edge is a horizontal gradient across it.
 */
function insets(v: ClipVisual, id: string): { defs: ReactNode; attrs: { clipPath?: string; mask?: string } } {
  const { top, right, bottom, left, feather } = v.clip;
  const { x, y, width: w, height: h } = v.box;
  if (top === 0 && right === 0 && bottom === 0 && left === 0) return { defs: null, attrs: {} };
  if (feather <= 0) {
    return {
      defs: <clipPath id={id} clipPathUnits="userSpaceOnUse"><rect x={x + left * w} y={y + top * h} width={Math.max(0, w * (1 - left - right))} height={Math.max(0, h * (1 - top - bottom))} /></clipPath>,
      attrs: { clipPath: `url(#${id})` },
    };
  }
  const edge = (inset: number) => inset * (1 + feather) - feather;
  const l = edge(left);
  const r = 1 - edge(right);
  const stop = (offset: number, on: boolean) => <stop offset={Math.min(1, Math.max(0, offset))} stopColor={on ? 'white' : 'black'} />;
  return {
    defs: (
      <>
        <linearGradient id={`${id}-g`} gradientUnits="userSpaceOnUse" x1={x} y1={0} x2={x + w} y2={0}>
          {stop(l, false)}{stop(l + feather, true)}{stop(r - feather, true)}{stop(r, false)}
        </linearGradient>
        <mask id={id} maskUnits="userSpaceOnUse" x={x} y={y} width={w} height={h}><rect x={x} y={y} width={w} height={h} fill={`url(#${id}-g)`} /></mask>
      </>
    ),
    attrs: { mask: `url(#${id})` },
  };
}

/**
 * A luma matte: the brightness of the luma clip's current picture (video frame through Remotion's
 * frame extractor, or an image) masks the other clips of its track: white shows them, black hides
 * them. The matte is placed by clipVisualAt like any clip (fit, scale, position, offset, motion) and
 * drawn like one: its opacity scales the mask, its rotation, skew and flip turn it about its box's
 * centre, its reveal and wipe transitions cut it (issue 32).
 */
export function LumaMask({ c, inputs, props, time, children }: { c: TimedClip; inputs: ClipInputs; props: EditProps; time: number; children: ReactNode }) {
  const id = `luma-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const media = inputs.media;
  if (!media || !media.width || !media.height || c.clip.asset.type !== 'luma') return <>{children}</>;
  const clipTime = time - c.start;
  const v = clipVisualAt(c.clip, clipTime, c.length, { viewport: props.viewport, source: { width: media.width, height: media.height }, still: props.still });
  const kx = v.content.width / v.crop.width;
  const ky = v.content.height / v.crop.height;
  const at = Math.round((c.clip.asset.trim + clipTime) * props.fps) / props.fps;
  const url = media.kind === 'video'
    ? NoReactInternals.getOffthreadVideoSource({ src: media.url, transparent: false, currentTime: at, toneMapped: true })
    : media.url;
  const { width, height } = props.viewport;
  const wipe = insets(v, `${id}-wipe`);
  return (
    <>
      <svg width={0} height={0} style={{ position: 'absolute' }} aria-hidden>
        <defs>
          {wipe.defs}
          <mask id={id} maskUnits="userSpaceOnUse" x={0} y={0} width={width} height={height}>
            <g opacity={v.opacity} transform={boxTransform(v)}>
              <g {...wipe.attrs}>
                <MatteImage key={url} url={url} x={v.content.x - v.crop.x * kx} y={v.content.y - v.crop.y * ky} width={media.width * kx} height={media.height * ky} />
              </g>
            </g>
          </mask>
        </defs>
      </svg>
      <div style={{ position: 'absolute', left: 0, top: 0, width, height, mask: `url(#${id})`, WebkitMask: `url(#${id})` }}>{children}</div>
    </>
  );
}
