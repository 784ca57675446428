import { useId, useState, type ReactNode } from 'react';
import { cancelRender, continueRender, delayRender } from 'remotion';
import { NoReactInternals } from 'remotion/no-react';
import { clipVisualAt, type TimedClip } from '#libs/edit-spec';
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
 * A luma matte: the brightness of the luma clip's current picture (video frame through Remotion's
 * frame extractor, or an image) masks the other clips of its track: white shows them, black hides
 * them. The matte is placed by clipVisualAt like any clip (fit, scale, position, offset, motion).
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
  return (
    <>
      <svg width={0} height={0} style={{ position: 'absolute' }} aria-hidden>
        <defs>
          <mask id={id} maskUnits="userSpaceOnUse" x={0} y={0} width={width} height={height}>
            <MatteImage key={url} url={url} x={v.content.x - v.crop.x * kx} y={v.content.y - v.crop.y * ky} width={media.width * kx} height={media.height * ky} />
          </mask>
        </defs>
      </svg>
      <div style={{ position: 'absolute', left: 0, top: 0, width, height, mask: `url(#${id})`, WebkitMask: `url(#${id})` }}>{children}</div>
    </>
  );
}
