import { Fragment, type CSSProperties, type ReactNode } from 'react';
import { AbsoluteFill, Audio, Sequence, useCurrentFrame } from 'remotion';
import { clipsAt, clipVisualAt, cssColor, type ClipVisual, type Filter, type TimedClip, type Timing } from '#libs/edit-spec';
import { clipKey, type ClipInputs, type EditProps } from '../src/props.js';
import { AssetView } from './assets';
import { LumaMask } from './luma';
import { fadeVolume } from './volume';

/** The spec's filters as CSS (the still engine's values: docs/decisions.md, "Still engine"). */
export function cssFilter(filter: Filter | undefined): string | undefined {
  switch (filter) {
    case undefined:
      return undefined;
    case 'blur':
      // σ 8 design px: the frame's scale to output pixels scales it like the still engine's.
      return 'blur(8px)';
    case 'boost':
      return 'saturate(1.4) contrast(1.15)';
    case 'contrast':
      return 'contrast(1.4)';
    case 'darken':
      return 'brightness(0.7)';
    case 'lighten':
      return `url(#${LIGHTEN_ID})`;
    case 'greyscale':
      return 'grayscale(1)';
    case 'muted':
      return 'saturate(0.55) contrast(0.85)';
    case 'negative':
      return 'invert(1)';
  }
}

const LIGHTEN_ID = 'video-filter-lighten';

/** 30 % toward white, which no CSS filter function does. */
function FilterDefs() {
  return (
    <svg width={0} height={0} style={{ position: 'absolute' }} aria-hidden>
      <filter id={LIGHTEN_ID} colorInterpolationFilters="sRGB">
        <feComponentTransfer>
          <feFuncR type="linear" slope={0.7} intercept={0.3} />
          <feFuncG type="linear" slope={0.7} intercept={0.3} />
          <feFuncB type="linear" slope={0.7} intercept={0.3} />
        </feComponentTransfer>
      </filter>
    </svg>
  );
}

/** Reveal and wipe transitions: hard insets become clip-path, soft (wipe) edges a gradient mask. */
function insetStyle(v: ClipVisual): CSSProperties {
  const { top, right, bottom, left, feather } = v.clip;
  if (top === 0 && right === 0 && bottom === 0 && left === 0) return {};
  if (feather <= 0) {
    const pct = (n: number) => `${(n * 100).toFixed(3)}%`;
    return { clipPath: `inset(${pct(top)} ${pct(right)} ${pct(bottom)} ${pct(left)})` };
  }
  // The soft edge travels from just outside the box (inset 0) to the far side (inset 1).
  const edge = (inset: number) => inset * (1 + feather) - feather;
  const l = edge(left);
  const r = 1 - edge(right);
  const stops = `transparent ${(l * 100).toFixed(3)}%, black ${((l + feather) * 100).toFixed(3)}%, black ${((r - feather) * 100).toFixed(3)}%, transparent ${(r * 100).toFixed(3)}%`;
  const mask = `linear-gradient(to right, ${stops})`;
  return { maskImage: mask, WebkitMaskImage: mask };
}

function boxStyle(v: ClipVisual): CSSProperties {
  const transforms: string[] = [];
  if (v.rotate) transforms.push(`rotate(${v.rotate}deg)`);
  if (v.skew.x || v.skew.y) transforms.push(`skew(${v.skew.x}deg, ${v.skew.y}deg)`);
  if (v.flip.horizontal || v.flip.vertical) transforms.push(`scale(${v.flip.horizontal ? -1 : 1}, ${v.flip.vertical ? -1 : 1})`);
  const style: CSSProperties = {
    position: 'absolute',
    left: v.box.x,
    top: v.box.y,
    width: v.box.width,
    height: v.box.height,
    opacity: v.opacity,
    ...insetStyle(v),
  };
  if (transforms.length) {
    style.transform = transforms.join(' ');
    style.transformOrigin = 'center';
  }
  const filter = cssFilter(v.filter);
  if (filter) style.filter = filter;
  return style;
}

/** Frames of the output from timeline seconds: a clip shows from the first frame at or after its start. */
export const frameAt = (seconds: number, props: EditProps) => Math.ceil((seconds - props.windowStart) * props.fps - 1e-6);

/** Whether a clip is heard: an audio clip, or a video clip whose file has sound. */
function makesSound(c: TimedClip, props: EditProps): boolean {
  const media = props.clips[clipKey(c.track, c.index)]?.media;
  return c.clip.asset.type === 'audio' || (c.clip.asset.type === 'video' && media?.hasAudio !== false);
}

interface ClipProps {
  c: TimedClip;
  inputs: ClipInputs;
  props: EditProps;
  /** Timeline seconds of the current frame. */
  time: number;
  /** Drawn at opacity 1 whatever its own (EditProps.pictureClips). */
  fullOpacity?: boolean;
}

/** One clip in one frame: clipVisualAt places it (fit, scale, position, offset, motion, transitions). */
function ClipView({ c, inputs, props, time, fullOpacity }: ClipProps) {
  const asset = c.clip.asset;
  const clipTime = time - c.start;
  if (asset.type === 'audio') return <AssetView c={c} inputs={inputs} props={props} clipTime={clipTime} />;
  const source = inputs.source ?? props.viewport;
  const at = clipVisualAt(c.clip, clipTime, c.length, { viewport: props.viewport, source, still: props.still });
  const v = fullOpacity ? { ...at, opacity: 1 } : at;
  const kx = v.crop.width > 0 ? v.content.width / v.crop.width : 0;
  const ky = v.crop.height > 0 ? v.content.height / v.crop.height : 0;
  const content: CSSProperties = {
    position: 'absolute',
    left: v.content.x - v.box.x,
    top: v.content.y - v.box.y,
    width: v.content.width,
    height: v.content.height,
    overflow: 'hidden',
  };
  return (
    <div style={boxStyle(v)}>
      <div style={content}>
        <AssetView c={c} inputs={inputs} props={props} clipTime={clipTime} draw={{ crop: v.crop, kx, ky, source }} />
      </div>
    </div>
  );
}

/**
 * The edit, frame by frame: the clips showing at this frame's time (clipsAt: bottom layer first),
 * each in a Sequence starting at the clip's first frame so media play from the right point; a luma
 * clip masks the other clips of its track; the soundtrack plays under everything.
 */
export function Edit(props: EditProps) {
  // A page told which output frames to draw (props.frames: engine.ts renderSpans) draws frame i of its
  // own timeline as output frame frames[i].
  const ownFrame = useCurrentFrame();
  const frame = props.frames ? (props.frames[ownFrame] ?? 0) : ownFrame;
  const time = props.windowStart + frame / props.fps;
  const all = clipsAt(props.timing as Timing, time);
  // A sound-only page (engine.ts renderSpans) keeps the clips that make sound, drawn as ever; a
  // picture of some clips (props.pictureClips) only those.
  const only = props.pictureClips?.[ownFrame];
  const shown = only ? new Set(only.clips) : undefined;
  const active = props.soundOnly ? all.filter((c) => makesSound(c, props)) : shown ? all.filter((c) => shown.has(clipKey(c.track, c.index))) : all;
  const scale = `scale(${props.width / props.viewport.width}, ${props.height / props.viewport.height})`;

  // clipsAt lists each track's clips together; a luma clip masks its own track's other clips.
  const layers: ReactNode[] = [];
  for (let i = 0; i < active.length; ) {
    const track = active[i]!.track;
    const group: TimedClip[] = [];
    while (i < active.length && active[i]!.track === track) group.push(active[i++]!);
    const luma = group.find((c) => c.clip.asset.type === 'luma');
    const views = group.filter((c) => c !== luma).map((c) => {
      const key = clipKey(c.track, c.index);
      const from = frameAt(c.start, props);
      const durationInFrames = Math.max(1, frameAt(c.end, props) - from);
      const view = <ClipView c={c} inputs={props.clips[key] ?? {}} props={props} time={time} fullOpacity={only?.fullOpacity} />;
      // Drawn out of order (props.frames: never a video), the clip shows where its Sequence would.
      if (props.frames) return frame >= from && frame < from + durationInFrames ? <Fragment key={key}>{view}</Fragment> : null;
      return (
        <Sequence key={key} from={from} durationInFrames={durationInFrames} layout="none" name={key}>
          {view}
        </Sequence>
      );
    });
    layers.push(
      luma ? (
        <LumaMask key={`luma-${track}`} c={luma} inputs={props.clips[clipKey(luma.track, luma.index)] ?? {}} props={props} time={time}>
          {views}
        </LumaMask>
      ) : (
        views
      ),
    );
  }

  const soundtrack = props.soundtrack;
  return (
    <AbsoluteFill style={{ backgroundColor: cssColor(props.background), overflow: 'hidden' }}>
      {props.fontFaces ? <style>{props.fontFaces}</style> : null}
      <FilterDefs />
      <div style={{ position: 'absolute', left: 0, top: 0, width: props.viewport.width, height: props.viewport.height, transform: scale, transformOrigin: '0 0' }}>
        {layers}
      </div>
      {soundtrack && !props.still && !props.muted ? (
        <Sequence from={frameAt(0, props)} layout="none" name="soundtrack">
          <Audio
            src={soundtrack.url}
            volume={(f) => soundtrack.volume * fadeVolume(soundtrack.effect ?? 'none', f / props.fps, soundtrack.duration)}
            allowAmplificationDuringRender
          />
        </Sequence>
      ) : null}
    </AbsoluteFill>
  );
}
