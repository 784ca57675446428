import { useId, useMemo, type CSSProperties, type ReactNode } from 'react';
import { Video } from '@remotion/media';
import { Audio, IFrame, Img, Sequence } from 'remotion';
import { chromaKeyTables, cssColor, valueAt, type CaptionAsset, type ChromaKey, type Rect, type Size, type TimedClip } from '#libs/edit-spec';
import { cssString } from '../src/css.js';
import type { CaptionInput, ClipInputs, EditProps, MediaInput } from '../src/props.js';
import { TextBlockView } from './text';
import { fadeVolume } from './volume';

/** How the asset maps into the clip's content rectangle: `crop` (source px) is drawn at kx × ky. */
export interface Draw {
  crop: Rect;
  kx: number;
  ky: number;
  source: Size;
}

interface AssetProps {
  c: TimedClip;
  inputs: ClipInputs;
  props: EditProps;
  clipTime: number;
  draw?: Draw;
}

/** A media file (its `cut` being the asset) placed so the shown crop fills the content box. */
function mediaStyle(draw: Draw, inputs: ClipInputs, media: MediaInput): CSSProperties {
  const cut = inputs.cut ?? { x: 0, y: 0 };
  const width = media.width ?? draw.source.width;
  const height = media.height ?? draw.source.height;
  return {
    position: 'absolute',
    left: -(draw.crop.x + cut.x) * draw.kx,
    top: -(draw.crop.y + cut.y) * draw.ky,
    width: width * draw.kx,
    height: height * draw.ky,
    maxWidth: 'none',
  };
}

/** Content laid out at its design size (text, html, captions), scaled into place. */
function Scaled({ draw, children }: { draw: Draw; children: ReactNode }) {
  return (
    <div
      style={{
        position: 'absolute',
        left: -draw.crop.x * draw.kx,
        top: -draw.crop.y * draw.ky,
        width: draw.source.width,
        height: draw.source.height,
        transform: `scale(${draw.kx}, ${draw.ky})`,
        transformOrigin: '0 0',
      }}
    >
      {children}
    </div>
  );
}

/**
 * A video asset's `chromaKey`: an SVG filter over the video's picture that removes the pixels near the
 * key colour (chromaKeyTables: Euclidean RGB distance under `threshold` → transparent, fading back in
 * over `halo`). Per channel (x − k)² / D² by table, summed into alpha by a colour matrix, mapped to
 * the keyed alpha by a second table, and the picture kept where that alpha is.
 */
function ChromaKeyed({ chromaKey, children }: { chromaKey: ChromaKey | undefined; children: (filter: string | undefined) => ReactNode }) {
  const id = `chroma-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const tables = useMemo(() => {
    if (!chromaKey) return undefined;
    const t = chromaKeyTables(chromaKey);
    return { r: t.channel[0].join(' '), g: t.channel[1].join(' '), b: t.channel[2].join(' '), a: t.alpha.join(' ') };
  }, [chromaKey]);
  if (!tables) return <>{children(undefined)}</>;
  return (
    <>
      <svg width={0} height={0} style={{ position: 'absolute' }} aria-hidden>
        <filter id={id} colorInterpolationFilters="sRGB" x="0" y="0" width="1" height="1">
          <feComponentTransfer in="SourceGraphic" result="d">
            <feFuncR type="table" tableValues={tables.r} />
            <feFuncG type="table" tableValues={tables.g} />
            <feFuncB type="table" tableValues={tables.b} />
          </feComponentTransfer>
          <feColorMatrix in="d" type="matrix" values="0 0 0 0 0  0 0 0 0 0  0 0 0 0 0  1 1 1 0 0" result="s" />
          <feComponentTransfer in="s" result="key">
            <feFuncA type="table" tableValues={tables.a} />
          </feComponentTransfer>
          <feComposite in="SourceGraphic" in2="key" operator="in" />
        </filter>
      </svg>
      {children(`url(#${id})`)}
    </>
  );
}

/** Frames a media file can play from `trim` at `speed` (it stops when the file ends, as in Shotstack). */
function playableFrames(media: MediaInput, trim: number, speed: number, fps: number): number {
  if (media.duration === undefined) return Infinity;
  return Math.max(1, Math.floor(((media.duration - trim) / (speed > 0 ? speed : 1)) * fps));
}

export function AssetView({ c, inputs, props, clipTime, draw }: AssetProps) {
  const asset = c.clip.asset;
  const media = inputs.media;
  const fps = props.fps;
  switch (asset.type) {
    case 'image':
      return draw && media ? <Img src={media.url} style={{ ...mediaStyle(draw, inputs, media), objectFit: 'fill' }} /> : null;
    case 'video': {
      if (!draw || !media) return null;
      // @remotion/media decodes in the page (WebCodecs): about half the CPU of OffthreadVideo's
      // frame extractor, whose uncompressed frames travel over HTTP (docs/benchmarks.md).
      const placed = mediaStyle(draw, inputs, media);
      return (
        <ChromaKeyed chromaKey={asset.chromaKey}>
          {(filter) => {
            const style = filter ? { ...placed, filter } : placed;
            // A still plays the clip exactly as the video does (issue 32, "a still is the frame"): the
            // clip's Sequence (Edit.tsx) already puts the page at the clip's own frame for the still's
            // time, so the source frame is `trim` + that × `speed` in both; a still only mutes it.
            return (
              <Sequence durationInFrames={playableFrames(media, asset.trim, asset.speed, fps)} layout="none">
                <Video
                  src={media.url}
                  objectFit="fill"
                  trimBefore={asset.trim * fps}
                  playbackRate={asset.speed}
                  muted={props.still || props.muted || media.hasAudio === false}
                  volume={(f) => valueAt(asset.volume, f / fps) * fadeVolume(asset.volumeEffect, f / fps, c.length)}
                  style={style}
                />
              </Sequence>
            );
          }}
        </ChromaKeyed>
      );
    }
    case 'audio': {
      if (!media || props.still || props.muted) return null;
      return (
        <Sequence durationInFrames={playableFrames(media, asset.trim, asset.speed, fps)} layout="none">
          <Audio
            src={media.url}
            trimBefore={asset.trim * fps}
            playbackRate={asset.speed}
            volume={(f) => valueAt(asset.volume, f / fps) * fadeVolume(asset.effect, f / fps, c.length)}
            allowAmplificationDuringRender
          />
        </Sequence>
      );
    }
    case 'text':
    case 'title':
    case 'rich-text':
      return draw && inputs.text ? (
        <Scaled draw={draw}>
          <TextBlockView block={inputs.text} animation={asset.type === 'title' ? undefined : asset.animation} time={props.still ? Infinity : clipTime} />
        </Scaled>
      ) : null;
    case 'shape':
    case 'svg':
      return draw && inputs.svg ? (
        <Img
          src={inputs.svg}
          style={{ position: 'absolute', left: -draw.crop.x * draw.kx, top: -draw.crop.y * draw.ky, width: draw.source.width * draw.kx, height: draw.source.height * draw.ky, maxWidth: 'none' }}
        />
      ) : null;
    case 'html':
      return draw && inputs.html !== undefined ? (
        <Scaled draw={draw}>
          <IFrame
            srcDoc={inputs.html}
            sandbox=""
            style={{ border: 0, width: draw.source.width, height: draw.source.height, background: 'transparent', colorScheme: 'normal' }}
          />
        </Scaled>
      ) : null;
    case 'caption':
      return draw && inputs.caption ? (
        <Scaled draw={draw}>
          <CaptionView asset={asset} input={inputs.caption} size={draw.source} fileTime={asset.trim + clipTime * asset.speed} />
        </Scaled>
      ) : null;
    case 'luma':
      return null;
  }
}

/** The cue showing at `fileTime` seconds of the caption file, in a plate near the bottom (or at margin.top). */
function CaptionView({ asset, input, size, fileTime }: { asset: CaptionAsset; input: CaptionInput; size: Size; fileTime: number }) {
  const cue = input.cues.find((q) => q.start <= fileTime && fileTime < q.end);
  if (!cue) return null;
  const font = asset.font ?? {};
  const bg = asset.background;
  const fontSize = font.size ?? Math.round(Math.min(size.width, size.height) * 0.05);
  const margin = asset.margin ?? {};
  const place: CSSProperties = margin.top !== undefined ? { top: margin.top * size.height } : { bottom: size.height * 0.06 };
  const text: CSSProperties = {
    display: 'inline-block',
    fontFamily: cssString(input.family),
    fontSize,
    lineHeight: font.lineHeight ?? 1.25,
    color: cssColor(font.color ?? '#ffffff', font.opacity ?? 1),
    whiteSpace: 'pre-wrap',
    overflowWrap: 'anywhere',
  };
  if (font.stroke && (font.strokeWidth ?? 0) > 0) {
    text.WebkitTextStroke = `${(font.strokeWidth ?? 0) * 2}px ${cssColor(font.stroke)}`;
    text.paintOrder = 'stroke fill';
  }
  if (bg?.color) {
    text.backgroundColor = cssColor(bg.color, bg.opacity ?? 1);
    text.padding = bg.padding ?? 0;
    text.borderRadius = bg.borderRadius ?? 0;
  }
  return (
    <div style={{ position: 'absolute', left: (margin.left ?? 0.05) * size.width, right: (margin.right ?? 0.05) * size.width, textAlign: 'center', ...place }}>
      <span style={text}>{cue.text}</span>
    </div>
  );
}
