import { assertEdit, assertTiming, type JsonValue } from '#libs/edit-spec';
import { clipKey, type ClipInputs } from './props.js';
import { frameSpans, MIN_STATIC_FRAMES, svgMayAnimate, type FrameSpan, type SpanProps } from './spans.js';
import { videoSegments } from './engine.js';

/**
 * The span analysis (issue 33 "Video: draw each distinct frame once"): which frames of an edit all
 * look the same (held: drawn once), which differ (drawn one by one) and which play a video. Pure:
 * edits at 12 fps, inputs given by hand.
 */
const FPS = 12;
const photo = (extra: Record<string, JsonValue> = {}): JsonValue => ({ asset: { type: 'image', src: 'https://cdn.example.com/a.jpg' }, start: 0, length: 3, ...extra });
const text = (t: string, extra: Record<string, JsonValue> = {}): JsonValue => ({ asset: { type: 'text', text: t }, start: 0, length: 3, ...extra });

function props(tracks: JsonValue[][], inputs: Record<string, ClipInputs> = {}, output: Record<string, JsonValue> = {}): SpanProps {
  const edit = assertEdit({ timeline: { tracks: tracks.map((clips) => ({ clips })) }, output: { format: 'mp4', size: { width: 320, height: 180 }, fps: FPS, ...output } });
  const timing = assertTiming(edit);
  const clips: Record<string, ClipInputs> = {};
  timing.tracks.forEach((track, t) => track.forEach((c, i) => {
    const type = c.clip.asset.type;
    clips[clipKey(t, i)] = { source: { width: 320, height: 180 }, ...(type === 'image' || type === 'video' ? { media: { url: 'http://127.0.0.1/x', kind: type, width: 320, height: 180 } } : {}) };
  }));
  for (const [key, extra] of Object.entries(inputs)) clips[key] = { ...clips[key], ...extra };
  return { timing, clips, fps: FPS, windowStart: timing.window.start, viewport: { width: 320, height: 180 }, still: false, background: '#000000' };
}

const all = (p: SpanProps): FrameSpan[] => frameSpans(p, [0, Math.round(p.timing.tracks.flat().reduce((end, c) => Math.max(end, c.end), 0) * FPS) - 1]);
const kinds = (spans: FrameSpan[]) => spans.map((s) => `${s.kind} ${s.from}-${s.to}`);

describe('frameSpans (issue 33: draw each distinct frame once)', () => {
  it('a static edit (a photo and a title that hold) is one held span', () => {
    expect(kinds(all(props([[text('Hello')], [photo()]])))).toEqual(['held 0-35']);
  });

  it('a clip that starts or ends splits the held spans at its first and its end frame', () => {
    const p = props([[text('One', { start: 0, length: 1.5 }), text('Two', { start: 1.5, length: 1.5 })], [photo()]]);
    expect(kinds(all(p))).toEqual(['held 0-17', 'held 18-35']);
  });

  it('a fade transition (edit-spec "transition") is drawn frame by frame while it runs, then held', () => {
    // fadeFast: 0.5 s in, eased: frames 0–5 differ, 6 on at rest (opacity 1).
    const spans = all(props([[photo({ transition: { in: 'fadeFast' } })]]));
    expect(kinds(spans)).toEqual(['drawn 0-5', 'held 6-35']);
  });

  it('a tween (keyframes of offset, opacity or scale) makes its frames dynamic, and only while it moves', () => {
    const p = props([[photo({ offset: { x: [{ from: -0.2, to: 0, start: 0, length: 1 }] } })]]);
    const spans = all(p);
    expect(spans[0]).toMatchObject({ kind: 'drawn', from: 0 });
    expect(spans.at(-1)).toMatchObject({ kind: 'held', from: 12, to: 35 });
  });

  it('an effect (zoomIn, slideLeft, …) moves through the whole clip: nothing is held', () => {
    expect(kinds(all(props([[photo({ effect: 'zoomInSlow' })]])))).toEqual(['drawn 0-35']);
  });

  it('a video clip plays on every frame it shows (played), the rest around it is held', () => {
    const p = props([[text('Title')], [photo({ start: 0, length: 1.5 }), { asset: { type: 'video', src: 'https://cdn.example.com/v.mp4' }, start: 1.5, length: 1.5 }]]);
    expect(kinds(all(p))).toEqual(['held 0-17', 'played 18-35']);
  });

  it('an animated text (rich-text ascend, text typewriter) is dynamic while it animates, held after it', () => {
    const p = props([[{ asset: { type: 'rich-text', text: 'Rise', animation: { preset: 'ascend', duration: 1 } }, start: 0, length: 3 }]]);
    expect(kinds(all(p))).toEqual(['drawn 0-11', 'held 12-35']);
    const typed = props([[{ asset: { type: 'text', text: 'Typed', animation: { preset: 'typewriter' } }, start: 0, length: 3 }]]);
    expect(kinds(all(typed))).toEqual(['drawn 0-11', 'held 12-35']);
  });

  it('a caption holds each cue, and changes at the cue\'s boundary', () => {
    const p = props([[{ asset: { type: 'caption', src: 'https://cdn.example.com/a.srt' }, start: 0, length: 3 }]], {
      '0:0': { caption: { family: 'Open Sans', cues: [{ start: 0, end: 1.5, text: 'one' }, { start: 1.5, end: 3, text: 'two' }] } },
    });
    expect(kinds(all(p))).toEqual(['held 0-17', 'held 18-35']);
  });

  it('html documents, animated pictures (GIF frames) and SVGs with animations are never held', () => {
    expect(kinds(all(props([[{ asset: { type: 'html', html: '<p>Hi</p>' }, start: 0, length: 3, width: 100, height: 50 }]])))).toEqual(['drawn 0-35']);
    expect(kinds(all(props([[photo()]], { '0:0': { media: { url: 'http://127.0.0.1/a.gif', kind: 'image', width: 320, height: 180, animated: true } } })))).toEqual(['drawn 0-35']);
    const svg = (markup: string) => `data:image/svg+xml;base64,${Buffer.from(markup).toString('base64')}`;
    const still = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
    const moving = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"><animate attributeName="x" from="0" to="5" dur="1s"/></rect></svg>';
    const svgClip = [{ asset: { type: 'svg', src: 'https://cdn.example.com/a.svg' }, start: 0, length: 3 }];
    expect(kinds(all(props([svgClip], { '0:0': { svg: svg(still) } })))).toEqual(['held 0-35']);
    expect(kinds(all(props([svgClip], { '0:0': { svg: svg(moving) } })))).toEqual(['drawn 0-35']);
    expect(svgMayAnimate('<style>@keyframes spin {}</style>')).toBe(true);
  });

  it(`a run of equal frames shorter than ${MIN_STATIC_FRAMES} frames is drawn, not held; the spans cover the range in order`, () => {
    const p = props([[text('A', { start: 0, length: 0.5 }), text('B', { start: 0.5, length: 2.5 })]]);
    const spans = all(p);
    expect(kinds(spans)).toEqual(['drawn 0-5', 'held 6-35']);
    expect(frameSpans(p, [3, 24])).toEqual([{ from: 3, to: 5, kind: 'drawn' }, { from: 6, to: 24, kind: 'held' }]);
  });

  it('videoSegments: held and drawn spans run together as one part of pictures; played frames are cut into equal shares', () => {
    const segments = videoSegments([
      { from: 0, to: 9, kind: 'drawn' }, { from: 10, to: 59, kind: 'held' }, { from: 60, to: 159, kind: 'played' }, { from: 160, to: 199, kind: 'held' },
    ], 2);
    expect(segments.map((s) => `${s.kind} ${s.from}-${s.to}`)).toEqual(['pictures 0-59', 'played 60-109', 'played 110-159', 'pictures 160-199']);
  });
});
