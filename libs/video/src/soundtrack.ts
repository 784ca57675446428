import { RenderInternals, stitchFramesToVideo, type CancelSignal } from '@remotion/renderer';
import { random } from 'remotion';
import { fadeVolume, type EditProps, type SoundtrackInput } from './props.js';

/**
 * The sound of an edit whose only sound is its soundtrack, made without a page (issue 33).
 *
 * The engine renders a held span's sound apart from its picture, on a page that seeks every frame so
 * that Remotion can collect what each frame plays (~10 ms a frame: 3 s of a 10 s template video on 2
 * cores). When the soundtrack is all there is, what the page would report is known from the props
 * alone: the `<Audio>` of remotion/Edit.tsx at every frame of its Sequence, with the volume its
 * callback gives. `soundtrackAssets` writes those reports, and Remotion's own `stitchFramesToVideo`
 * turns them into the same seamless AAC part its `renderMedia` makes from the page's: the same
 * mixing, the same encoder, the same padding (libs/video/src/spans-render.spec.ts compares the result
 * with a frame-by-frame render, sample by sample).
 */

/** Remotion's sample rate (renderMedia's default, which the engine keeps). */
const SAMPLE_RATE = 48_000;

/**
 * The soundtrack, when it is the edit's only sound and starts with the composition: no audio clips,
 * no video clip that may have sound (a video's sound counts unless probing found none), not muted, the
 * whole timeline in one window. Anything else keeps the page.
 */
export function soundtrackAlone(props: EditProps): SoundtrackInput | undefined {
  if (props.muted || props.still || !props.soundtrack || props.windowStart !== 0) return undefined;
  const other = Object.values(props.clips).some((c) => c.media?.kind === 'audio' || (c.media?.kind === 'video' && c.media.hasAudio !== false));
  return other ? undefined : props.soundtrack;
}

/** The AAC-aligned window Remotion renders a chunk's sound over for seamless joining (its getExtraFramesToCapture, 4.0.x). */
export interface SeamlessWindow {
  /** Composition frames whose sound is evaluated: the chunk and the extra frames on either side. */
  frames: [number, number];
  chunkLengthInSeconds: number;
  trimLeftOffset: number;
  trimRightOffset: number;
}

/** Remotion's AAC frame alignment (combine-audio.ts getClosestAlignedTime, with its rounding fix). */
function alignedTime(seconds: number): number {
  const frame = (1024 / SAMPLE_RATE) * 1_000_000;
  const frames = (seconds * 1_000_000) / frame;
  return ((frames % 1 > 0.4999999 ? Math.ceil(frames) : Math.floor(frames)) * frame) / 1_000_000;
}

/** What renderMedia({ frameRange: range, forSeamlessAacConcatenation: true }) renders the sound of, with the composition starting at frame 0. */
export function seamlessWindow(range: readonly [number, number], fps: number): SeamlessWindow {
  const pad = 2 * (1024 / SAMPLE_RATE);
  const left = Math.max(0, alignedTime(range[0] / fps) - pad);
  const right = alignedTime((range[1] + 1) / fps) + pad;
  const first = Math.floor(left * fps);
  const end = Math.ceil(right * fps);
  return { frames: [first, end - 1], chunkLengthInSeconds: right - left, trimLeftOffset: (left * fps - first) / fps, trimRightOffset: (right * fps - end) / fps };
}

interface AudioAsset {
  type: 'audio';
  src: string;
  id: string;
  frame: number;
  volume: number;
  mediaFrame: number;
  playbackRate: number;
  toneFrequency: number;
  audioStartFrame: number;
  audioStreamIndex: number;
}

/** One frame's report, as Remotion's renderFrames collects it from the page. */
export interface FrameReport {
  frame: number;
  audioAndVideoAssets: AudioAsset[];
  artifactAssets: [];
  inlineAudioAssets: [];
}

/**
 * What the soundtrack's `<Audio>` reports at each composition frame of `frames`: its Sequence starts at
 * frame 0 and lasts the composition; a frame where its volume is 0 reports nothing (Remotion does not
 * play a silent frame); the volume is the callback's, `volume × fadeVolume(effect, frame / fps,
 * duration)`. Frames past the composition's end report nothing (the page has none).
 */
export function soundtrackAssets(props: EditProps, soundtrack: SoundtrackInput, frames: readonly [number, number]): FrameReport[] {
  // Remotion's id for the asset: its source's `random` and the Sequence's from, cumulated from and length.
  const id = `audio-${random(soundtrack.url)}-0-0-${props.durationInFrames}`;
  const reports: FrameReport[] = [];
  for (let f = frames[0]; f <= frames[1]; f++) {
    const volume = Math.max(0, soundtrack.volume * fadeVolume(soundtrack.effect ?? 'none', f / props.fps, soundtrack.duration));
    const plays = f < props.durationInFrames && volume > 0;
    reports.push({
      frame: f,
      audioAndVideoAssets: plays ? [{ type: 'audio', src: soundtrack.url, id, frame: f, volume, mediaFrame: f, playbackRate: 1, toneFrequency: 1, audioStartFrame: 0, audioStreamIndex: 0 }] : [],
      artifactAssets: [],
      inlineAudioAssets: [],
    });
  }
  return reports;
}

/** The soundtrack's sound for `range` as a seamless AAC part at `output`, as the sound page's renderMedia would have made it. */
export async function renderSoundtrackPart(props: EditProps, soundtrack: SoundtrackInput, range: readonly [number, number], output: string, cancelSignal: CancelSignal): Promise<void> {
  const window = seamlessWindow(range, props.fps);
  const downloadMap = RenderInternals.makeDownloadMap(SAMPLE_RATE);
  try {
    await stitchFramesToVideo({
      assetsInfo: {
        assets: soundtrackAssets(props, soundtrack, window.frames),
        imageSequenceName: '',
        firstFrameIndex: window.frames[0],
        downloadMap,
        chunkLengthInSeconds: window.chunkLengthInSeconds,
        trimLeftOffset: window.trimLeftOffset,
        trimRightOffset: window.trimRightOffset,
        forSeamlessAacConcatenation: true,
      },
      fps: props.fps,
      width: 16,
      height: 16,
      codec: 'aac',
      audioCodec: 'aac',
      outputLocation: output,
      enforceAudioTrack: true,
      cancelSignal,
      sampleRate: SAMPLE_RATE,
    } as Parameters<typeof stitchFramesToVideo>[0]);
  } finally {
    // Remotion's cleanDownloadMap (not exported): its folder holds the others.
    downloadMap.cleanupController.abort();
    downloadMap.inlineAudioMixing.cleanup();
    RenderInternals.deleteDirectory(downloadMap.assetDir);
  }
}
