import { random } from 'remotion';
import type { EditProps, MediaInput } from './props.js';
import { seamlessWindow, soundtrackAlone, soundtrackAssets } from './soundtrack.js';

// Issue 33: a soundtrack-only edit's sound is made from the props, without a page seeking every
// frame. What is written here must be what the page reports; libs/video/src/spans-render.spec.ts
// checks the sound itself against a frame-by-frame render.

const URL = 'http://127.0.0.1:40017/fcec830de1cd2edc89392349d2c4d99e/f0.wav';

/** The props of a 5 s, 12 fps edit with a soundtrack with fades (and `clips`). */
function props(over: Partial<EditProps> = {}): EditProps {
  return {
    width: 320, height: 180, viewport: { width: 320, height: 180 }, pixelRatio: 1, fps: 12, durationInFrames: 60, windowStart: 0,
    background: '#000000', timing: { tracks: [] }, clips: {}, mediaOrigin: 'http://127.0.0.1:40017', fontFaces: '', still: false, muted: false,
    soundtrack: { url: URL, volume: 0.8, duration: 5, effect: 'fadeInFadeOut' },
    ...over,
  } as EditProps;
}

const media = (kind: MediaInput['kind'], hasAudio?: boolean): MediaInput => ({ url: `${URL}?${kind}`, kind, width: 16, height: 16, ...(hasAudio === undefined ? {} : { hasAudio }) }) as MediaInput;

describe('the soundtrack without a page', () => {
  it('is taken only when the soundtrack is all the edit sounds of', () => {
    expect(soundtrackAlone(props())).toEqual(props().soundtrack);
    expect(soundtrackAlone(props({ clips: { '0:0': { media: media('image') } } }))).toBeDefined();
    expect(soundtrackAlone(props({ clips: { '0:0': { media: media('video', false) } } }))).toBeDefined();
    // A video clip whose sound probing did not rule out, an audio clip, a muted or partial render: the page.
    expect(soundtrackAlone(props({ clips: { '0:0': { media: media('video') } } }))).toBeUndefined();
    expect(soundtrackAlone(props({ clips: { '0:0': { media: media('video', true) } } }))).toBeUndefined();
    expect(soundtrackAlone(props({ clips: { '0:0': { media: media('audio') } } }))).toBeUndefined();
    expect(soundtrackAlone(props({ muted: true }))).toBeUndefined();
    expect(soundtrackAlone(props({ windowStart: 2 }))).toBeUndefined();
    expect(soundtrackAlone(props({ soundtrack: undefined }))).toBeUndefined();
  });

  it('reports what the page reported for the same soundtrack (Remotion\'s renderFrames, captured 2026-11-28)', () => {
    const reports = soundtrackAssets(props(), props().soundtrack!, [0, 59]);
    expect(reports.map((r) => r.frame)).toEqual(Array.from({ length: 60 }, (_, f) => f));
    // Frame 0 is silent (the fade starts at 0): the page reports nothing for it.
    expect(reports[0]).toEqual({ frame: 0, audioAndVideoAssets: [], artifactAssets: [], inlineAudioAssets: [] });
    const asset = (f: number, volume: number) => ({
      type: 'audio', src: URL, id: `audio-${random(URL)}-0-0-60`, frame: f, volume, mediaFrame: f, playbackRate: 1, toneFrequency: 1, audioStartFrame: 0, audioStreamIndex: 0,
    });
    expect(`audio-${random(URL)}-0-0-60`).toBe('audio-0.9873230385128409-0-0-60');
    for (const [f, volume] of [[1, 0.03333333333333333], [2, 0.06666666666666667], [28, 0.8], [29, 0.8], [30, 0.8], [58, 0.06666666666666679], [59, 0.033333333333333215]] as const) {
      expect(reports[f]!.audioAndVideoAssets).toEqual([asset(f, volume)]);
    }
    // Past the composition's end (a seamless part's extra frames) nothing plays.
    expect(soundtrackAssets(props(), props().soundtrack!, [58, 62]).map((r) => r.audioAndVideoAssets.length)).toEqual([1, 1, 0, 0, 0]);
  });

  it('covers the AAC-aligned window Remotion renders a part\'s sound over, two AAC frames beyond each end', () => {
    // Frames 0-29 at 12 fps end at 2.5 s: the nearest AAC frame edge is 117 × 1024 samples (2.496 s), plus two frames.
    const first = seamlessWindow([0, 29], 12);
    expect(first.frames).toEqual([0, 30]);
    expect(first.chunkLengthInSeconds).toBeCloseTo(2.496 + 2048 / 48_000, 9);
    expect(first.trimLeftOffset).toBe(0);
    expect(first.trimRightOffset).toBeCloseTo(((2.496 + 2048 / 48_000) * 12 - 31) / 12, 9);
    // The second part starts two AAC frames before its own first frame (2.496 s - 2 frames: frame 29) and
    // ends two after 5 s's nearest edge (234 × 1024 samples, 4.992 s: up to frame 60, past the composition).
    const second = seamlessWindow([30, 59], 12);
    expect(second.frames).toEqual([29, 60]);
    expect(second.chunkLengthInSeconds).toBeCloseTo(4.992 - 2.496 + 4096 / 48_000, 9);
  });
});
