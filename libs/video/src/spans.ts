import { clipsAt, clipVisualAt, parseColor, type ClipVisual, type Rect, type TimedClip, type Timing } from '#libs/edit-spec';
import { clipKey, type ClipInputs, type EditProps } from './props.js';

/**
 * Frames of the output window (inclusive) and how the engine draws them:
 * - `held`: every frame shows the same picture: drawn once and repeated by the encoder;
 * - `drawn`: frames that differ, but whose picture depends on the page's time alone (fades, moves,
 *   text animations, captions): drawn one by one, in any order, on a page told which frame to show;
 * - `played`: frames that play a video (a video clip, a luma video): drawn in order by Remotion's own
 *   timeline, which its video elements follow;
 * - `composed` (composedSpans): played frames whose only moving part is one plain video at the bottom
 *   (`layer`, videoLayerAt) under clips that hold still or only fade or move: the page draws pictures
 *   of those clips once (overlayGroups), over no video, and each frame is composed outside the
 *   browser (composite.ts).
 */
export interface FrameSpan {
  from: number;
  to: number;
  kind: 'held' | 'drawn' | 'played' | 'composed';
  /** The video clip (key `track:index`) of a `composed` span. */
  layer?: string;
}

/** What the span analysis reads of a render's props (all of it known before the browser starts). */
export type SpanProps = Pick<EditProps, 'timing' | 'clips' | 'fps' | 'windowStart' | 'viewport' | 'width' | 'height' | 'still' | 'background'>;

/**
 * A static span shorter than this is drawn frame by frame: a span costs a tab of its own and an
 * encoder (~0.3–0.5 CPU-s), a frame drawn by the browser ~50 ms of CPU (docs/benchmarks.md "Static
 * spans"), so below ~10 frames a span saves nothing.
 */
export const MIN_STATIC_FRAMES = 12;

/** Default seconds of a text animation when the asset gives none (libs/video/remotion/text.tsx). */
const DEFAULT_ANIMATION_SECONDS = 1;

/** Markup that can make an SVG or a document move by itself in the browser. */
const MOVING_MARKUP = /<animate|<set[\s/>]|@keyframes|animation|transition|<script|<video|<marquee/i;

/** Whether an SVG's markup may animate by itself (SMIL, CSS animations): conservative, by its words. */
export function svgMayAnimate(markup: string): boolean {
  return MOVING_MARKUP.test(markup);
}

/** The markup of an `svg` input's data: URL (base64 or percent-encoded), or undefined when it is neither. */
function svgMarkup(url: string): string | undefined {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0) return undefined;
  const head = url.slice(0, comma);
  const body = url.slice(comma + 1);
  try {
    return head.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
  } catch {
    return undefined;
  }
}

/** Frames of the output from timeline seconds, as the composition (Edit.tsx `frameAt`) counts them. */
export const frameOf = (seconds: number, props: Pick<SpanProps, 'windowStart' | 'fps'>) => Math.ceil((seconds - props.windowStart) * props.fps - 1e-6);

/** Whether output frame `frame` is inside clip `c`'s Sequence, where Edit.tsx draws it. */
export function inSequence(c: TimedClip, props: Pick<SpanProps, 'windowStart' | 'fps'>, frame: number): boolean {
  const from = frameOf(c.start, props);
  return frame >= from && frame < from + Math.max(1, frameOf(c.end, props) - from);
}

/**
 * What one clip contributes to the picture at `time` (timeline seconds), as a string two frames share
 * exactly when the clip looks the same in both; undefined when the clip changes by itself from frame
 * to frame (video, html, an animated picture, a text animation still running, a luma video).
 * It reads the composition's own math (clipVisualAt: fit, position, offsets, tweens, effects,
 * transitions), so whatever moves a clip there makes its frames differ here.
 */
function clipState(c: TimedClip, inputs: ClipInputs, props: SpanProps, time: number): string | undefined {
  // Not drawn; its sound is rendered for the whole output apart from the pictures.
  if (c.clip.asset.type === 'audio') return 'audio';
  const look = clipLook(c, inputs, props, time);
  return look === undefined ? undefined : JSON.stringify([look.visual, look.content]);
}

/** clipState's parts for a clip that is drawn: its visual (clipVisualAt) and what else it shows (text animation done, caption cue). */
function clipLook(c: TimedClip, inputs: ClipInputs, props: SpanProps, time: number): { visual: ClipVisual; content: unknown } | undefined {
  const asset = c.clip.asset;
  const clipTime = time - c.start;
  let content: unknown = null;
  switch (asset.type) {
    case 'video':
    case 'html':
      return undefined;
    case 'image':
      if (inputs.media?.animated) return undefined;
      break;
    case 'luma':
      if (inputs.media?.kind !== 'image' || inputs.media.animated) return undefined;
      break;
    case 'svg': {
      const markup = inputs.svg === undefined ? undefined : svgMarkup(inputs.svg);
      if (markup === undefined || svgMayAnimate(markup)) return undefined;
      break;
    }
    case 'shape':
    case 'title':
      break;
    case 'text':
    case 'rich-text': {
      const animation = asset.animation;
      if (animation) {
        const duration = animation.duration ?? DEFAULT_ANIMATION_SECONDS;
        // Past its duration the animation rests at its end (text.tsx clamps its progress to 1).
        if (duration > 0 && clipTime < duration) return undefined;
        content = 'animated-done';
      }
      break;
    }
    case 'caption': {
      const cues = inputs.caption?.cues;
      if (!cues) break;
      const fileTime = asset.trim + clipTime * asset.speed;
      content = cues.findIndex((q) => q.start <= fileTime && fileTime < q.end);
      break;
    }
    default:
      // A kind this analysis does not know: never static.
      return undefined;
  }
  const media = inputs.media;
  const source = asset.type === 'luma' && media?.width && media.height ? { width: media.width, height: media.height } : (inputs.source ?? props.viewport);
  return { visual: clipVisualAt(c.clip, clipTime, c.length, { viewport: props.viewport, source, still: props.still }), content };
}

/**
 * The picture of output frame `frame` as a string, or undefined when some clip on it changes by
 * itself: the clips showing (clipsAt and their Sequence windows, as Edit.tsx draws them) and each
 * one's state. Two frames with the same string look the same.
 */
function frameState(props: SpanProps, frame: number): { state: string | undefined; plays: boolean } {
  const time = props.windowStart + frame / props.fps;
  const parts: string[] = [];
  let changing = false;
  let plays = false;
  for (const c of clipsAt(props.timing as Timing, time)) {
    const key = clipKey(c.track, c.index);
    if (!inSequence(c, props, frame)) {
      parts.push(`${key}:out`);
      continue;
    }
    const inputs = props.clips[key] ?? {};
    const type = c.clip.asset.type;
    if (type === 'video' || (type === 'luma' && inputs.media?.kind !== 'image')) plays = true;
    const state = clipState(c, inputs, props, time);
    if (state === undefined) changing = true;
    else parts.push(`${key}:${state}`);
  }
  return { state: changing ? undefined : parts.join('|'), plays };
}

/**
 * The output frames `range` (inclusive) cut into spans (FrameSpan), in order, covering the range: a
 * `held` span is at least `minStaticFrames` frames that all look the same (no clip moves, fades, plays
 * video, changes text or caption, starts or ends inside it); `played` frames show a video; the rest
 * are `drawn`. A pure function of the edit's timing and its inputs (sizes, caption cues, animated
 * pictures): when unsure a frame is not held.
 */
export function frameSpans(props: SpanProps, range: readonly [number, number], minStaticFrames = MIN_STATIC_FRAMES): FrameSpan[] {
  const [first, last] = range;
  const frames: { state: string | undefined; plays: boolean }[] = [];
  for (let f = first; f <= last; f++) frames.push(props.still ? { state: undefined, plays: true } : frameState(props, f));
  const spans: FrameSpan[] = [];
  const push = (from: number, to: number, kind: FrameSpan['kind']) => {
    const prev = spans[spans.length - 1];
    if (prev && prev.kind === kind && kind !== 'held') prev.to = to;
    else spans.push({ from, to, kind });
  };
  for (let i = 0; i < frames.length; ) {
    const state = frames[i]!.state;
    let j = i + 1;
    if (state !== undefined) while (j < frames.length && frames[j]!.state === state) j++;
    if (state !== undefined && j - i >= Math.max(2, minStaticFrames)) push(first + i, first + j - 1, 'held');
    else for (let k = i; k < j; k++) push(first + k, first + k, frames[k]!.plays ? 'played' : 'drawn');
    i = j;
  }
  return spans;
}

/**
 * The clip (key `track:index`) whose moving picture a played frame can be composed from outside the
 * browser (composite.ts), or undefined: exactly one clip plays on the frame, a video asset, and it is
 * the lowest clip drawn (nothing but the background under it), in a track without a luma; it shows
 * its media as a plain picture (no chroma key, filter, turn, skew, flip or reveal/wipe inset) of a
 * known size over an opaque background. Everything else on the frame is drawn by the page above it.
 */
export function videoLayerAt(props: SpanProps, frame: number): string | undefined {
  if (props.still || parseColor(props.background).a < 1) return undefined;
  const time = props.windowStart + frame / props.fps;
  const drawn = clipsAt(props.timing as Timing, time).filter((c) => c.clip.asset.type !== 'audio' && inSequence(c, props, frame));
  const lowest = drawn[0];
  if (!lowest || lowest.clip.asset.type !== 'video') return undefined;
  const key = clipKey(lowest.track, lowest.index);
  const inputs = props.clips[key];
  const media = inputs?.media;
  if (media?.kind !== 'video' || !media.width || !media.height || lowest.clip.asset.chromaKey) return undefined;
  for (const c of drawn.slice(1)) {
    const type = c.clip.asset.type;
    if (type === 'video' || (type === 'luma' && (c.track === lowest.track || props.clips[clipKey(c.track, c.index)]?.media?.kind !== 'image'))) return undefined;
  }
  const source = inputs.source ?? props.viewport;
  const v = clipVisualAt(lowest.clip, time - lowest.start, lowest.length, { viewport: props.viewport, source, still: false });
  const inset = v.clip.top || v.clip.right || v.clip.bottom || v.clip.left;
  if (v.rotate || v.skew.x || v.skew.y || v.flip.horizontal || v.flip.vertical || v.filter || inset) return undefined;
  return key;
}

/**
 * Most pictures of the clips over a composed video a piece may take (overlayGroups): each costs the
 * page a picture (~55–75 ms) and the compositor its planes (at 720p ~5 MB, ~10.5 MB for one that
 * moves: composite.ts); past this many clips that move apart the page draws the frames itself.
 */
export const MAX_OVERLAY_PICTURES = 8;

/** One clip over a composed video at one frame (overlayFrame). */
interface OverlayClip {
  key: string;
  /** Everything the clip shows but its opacity and, at the output's own scale, its place; `out` outside its Sequence. */
  look: string;
  opacity: number;
  /** Where it paints (its content box, whose overflow is hidden), output pixels. */
  rect: Rect;
  /** In a track with a luma (drawn with its mask): never faded or moved apart from the rest. */
  pinned: boolean;
  /** Turned, skewed, flipped or filtered: may fade, never move (its picture may spill past its content box). */
  spills: boolean;
  /** A luma: it masks its track's clips wherever it is, so it is in their picture even outside its Sequence. */
  luma: boolean;
}

/**
 * The clips over the video `layer` at output frame `frame`, bottom first (audio left out), or
 * undefined when one changes by itself (clipLook): each one's look, opacity and place.
 */
function overlayFrame(props: SpanProps, frame: number, layer: string): { clips: OverlayClip[]; plays: boolean } | undefined {
  const time = props.windowStart + frame / props.fps;
  const ox = props.width / props.viewport.width;
  const oy = props.height / props.viewport.height;
  // At the output's own scale a clip drawn at its media's own size and of a whole size is its picture
  // moved when only its place changes: Chromium snaps its edges to pixels. Scaled (the output's
  // transform, an image drawn larger or smaller, a fractional size), Chromium draws it anew at each
  // place (resampled, or one pixel wider as it moves), so there its exact place is part of its look.
  const unscaled = ox === 1 && oy === 1;
  const whole = (n: number) => Math.abs(n - Math.round(n)) < 1e-6;
  const one = (k: number) => Math.abs(k - 1) < 1e-6;
  const all = clipsAt(props.timing as Timing, time);
  const lumaTracks = new Set(all.filter((c) => c.clip.asset.type === 'luma').map((c) => c.track));
  const clips: OverlayClip[] = [];
  let plays = false;
  for (const c of all) {
    const key = clipKey(c.track, c.index);
    if (key === layer || c.clip.asset.type === 'audio') continue;
    const pinned = lumaTracks.has(c.track);
    const luma = c.clip.asset.type === 'luma';
    if (!inSequence(c, props, frame)) {
      clips.push({ key, look: 'out', opacity: 0, rect: { x: 0, y: 0, width: 0, height: 0 }, pinned, spills: false, luma });
      continue;
    }
    const inputs = props.clips[key] ?? {};
    const type = c.clip.asset.type;
    if (type === 'video' || (type === 'luma' && inputs.media?.kind !== 'image')) plays = true;
    const look = clipLook(c, inputs, props, time);
    if (look === undefined) return undefined;
    const { opacity, box, content, ...rest } = look.visual;
    const kx = rest.crop.width > 0 ? content.width / rest.crop.width : 0;
    const ky = rest.crop.height > 0 ? content.height / rest.crop.height : 0;
    const rigid = unscaled && one(kx) && one(ky) && whole(content.width) && whole(content.height) && whole(rest.crop.x) && whole(rest.crop.y);
    const place = rigid ? null : [content.x, content.y];
    clips.push({
      key,
      look: JSON.stringify([rest, box.width, box.height, content.x - box.x, content.y - box.y, content.width, content.height, place, look.content]),
      opacity,
      rect: { x: content.x * ox, y: content.y * oy, width: content.width * ox, height: content.height * oy },
      pinned,
      spills: rest.rotate !== 0 || rest.skew.x !== 0 || rest.skew.y !== 0 || rest.flip.horizontal || rest.flip.vertical || rest.filter !== undefined,
      luma,
    });
  }
  return { clips, plays };
}

/** What a run of composed frames keeps the same: each clip's look, in order. */
const overlaySignature = (f: { clips: OverlayClip[] }) => f.clips.map((c) => `${c.key}:${c.look}`).join('|');

/**
 * One picture of a composed piece's clips over its video (composite.ts): the clips `clips` (keys,
 * bottom first) drawn by the page at output frame `at` on a transparent background, then laid over
 * each frame of the piece at `place[i]` (frame `from + i`). Clips that hold still through the piece
 * share a picture, drawn as they are (opacity 1, no offset); a clip that fades or moves has its own,
 * drawn at full opacity (`fullOpacity`) where it is wholly inside the frame, then faded and moved
 * by whole pixels (Chromium snaps an unscaled box's edges to pixels).
 */
export interface OverlayGroup {
  clips: string[];
  at: number;
  fullOpacity: boolean;
  place: { opacity: number; dx: number; dy: number }[];
}

/**
 * The pictures (OverlayGroup) that compose frames `from`..`to` over the video `layer`, or undefined
 * when they cannot: a clip changes by itself or changes its look (more than its opacity and place),
 * one plays, a clip in a luma's track fades or moves, a turned, skewed, flipped or filtered clip
 * moves (its picture spills past its content box), or a clip that moves is never wholly inside the
 * frame (its picture would lack what a later frame shows).
 */
export function overlayGroups(props: SpanProps, layer: string, from: number, to: number): OverlayGroup[] | undefined {
  const frames: { clips: OverlayClip[] }[] = [];
  for (let f = from; f <= to; f++) {
    const state = overlayFrame(props, f, layer);
    if (!state || state.plays || (frames.length && overlaySignature(state) !== overlaySignature(frames[0]!))) return undefined;
    frames.push(state);
  }
  return groupsOf(props, from, frames);
}

/** Where a clip over the video paints, to the whole pixel (its content box's rounded corner). */
const px = (c: OverlayClip) => [Math.round(c.rect.x), Math.round(c.rect.y)] as const;

/** overlayGroups for frames from `from` on whose states (overlayFrame: none plays, one look) are known. */
function groupsOf(props: SpanProps, from: number, frames: readonly { clips: OverlayClip[] }[]): OverlayGroup[] | undefined {
  const groups: OverlayGroup[] = [];
  const still = (): OverlayGroup => ({ clips: [], at: from, fullOpacity: false, place: frames.map(() => ({ opacity: 1, dx: 0, dy: 0 })) });
  let open: OverlayGroup | undefined;
  for (let i = 0; i < frames[0]!.clips.length; i++) {
    const first = frames[0]!.clips[i]!;
    if (first.look === 'out' && !first.luma) continue;
    const states = frames.map((f) => f.clips[i]!);
    const [x0, y0] = px(first);
    const moves = states.some((c) => px(c)[0] !== x0 || px(c)[1] !== y0);
    if (!moves && states.every((c) => c.opacity === first.opacity)) {
      if (!open) {
        open = still();
        groups.push(open);
      }
      open.clips.push(first.key);
      continue;
    }
    if (first.pinned || (moves && first.spills)) return undefined;
    open = undefined;
    const inside = (c: OverlayClip) => c.rect.x >= 0 && c.rect.y >= 0 && c.rect.x + c.rect.width <= props.width && c.rect.y + c.rect.height <= props.height;
    const ref = moves ? states.findIndex(inside) : 0;
    if (ref < 0) return undefined;
    const [rx, ry] = px(states[ref]!);
    groups.push({ clips: [first.key], at: from + ref, fullOpacity: true, place: states.map((c) => ({ opacity: c.opacity, dx: px(c)[0] - rx, dy: px(c)[1] - ry })) });
  }
  return groups.length > MAX_OVERLAY_PICTURES ? undefined : groups;
}

/**
 * `spans` with each run of at least `minFrames` played frames that show one plain video at the bottom
 * (videoLayerAt) under clips that keep their look, each of them holding still or only fading or moving
 * (overlayGroups), made `composed`, its `layer` that video: the page draws a picture of those clips
 * (one for the clips that hold still, one for each that fades or moves), and the video is placed
 * outside the browser. A run whose clips cannot be pictured so (overlayGroups refuses it: a turned clip
 * that moves, a faded clip in a luma's track, …) is composed where all its clips hold still. The rest
 * of a played span stays played; nothing else changes.
 */
export function composedSpans(props: SpanProps, spans: readonly FrameSpan[], minFrames = MIN_STATIC_FRAMES): FrameSpan[] {
  const least = Math.max(2, minFrames);
  const out: FrameSpan[] = [];
  const push = (span: FrameSpan) => {
    const prev = out[out.length - 1];
    if (span.kind === 'played' && prev?.kind === 'played' && prev.to + 1 === span.from) prev.to = span.to;
    else out.push(span);
  };
  /** Frames `from`..`to` (one look) composed in runs where every clip holds still, the rest played. */
  const stillRuns = (layer: string, states: readonly { clips: OverlayClip[] }[], from: number) => {
    const still = (f: { clips: OverlayClip[] }) => f.clips.map((c) => `${c.key}:${c.look}:${c.opacity}:${px(c).join(':')}`).join('|');
    for (let i = 0; i < states.length; ) {
      let j = i + 1;
      while (j < states.length && still(states[j]!) === still(states[i]!)) j++;
      if (j - i >= least && groupsOf(props, from + i, states.slice(i, j))) out.push({ from: from + i, to: from + j - 1, kind: 'composed', layer });
      else push({ from: from + i, to: from + j - 1, kind: 'played' });
      i = j;
    }
  };
  for (const span of spans) {
    if (span.kind !== 'played') {
      out.push({ ...span });
      continue;
    }
    for (let f = span.from; f <= span.to; ) {
      const layer = videoLayerAt(props, f);
      const first = layer === undefined ? undefined : overlayFrame(props, f, layer);
      const states = first && !first.plays ? [first] : [];
      let g = f + 1;
      if (states.length) {
        const signature = overlaySignature(first!);
        while (g <= span.to && videoLayerAt(props, g) === layer) {
          const next = overlayFrame(props, g, layer!);
          if (!next || next.plays || overlaySignature(next) !== signature) break;
          states.push(next);
          g++;
        }
      }
      if (layer === undefined || g - f < least) push({ from: f, to: g - 1, kind: 'played' });
      else if (groupsOf(props, f, states)) out.push({ from: f, to: g - 1, kind: 'composed', layer });
      else stillRuns(layer, states, f);
      f = g;
    }
  }
  return out;
}
