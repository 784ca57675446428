import { assertEdit, assertTiming, type JsonValue } from '#libs/edit-spec';
import { clipKey, type ClipInputs } from './props.js';
import { composedSpans, frameSpans, MAX_OVERLAY_PICTURES, MIN_STATIC_FRAMES, overlayGroups, svgMayAnimate, videoLayerAt, type FrameSpan, type SpanProps } from './spans.js';
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
    // A text's source is its box (inputs.ts), a picture's its own size.
    const box = type === 'text' && c.clip.width && c.clip.height ? { width: c.clip.width, height: c.clip.height } : { width: 320, height: 180 };
    clips[clipKey(t, i)] = { source: box, ...(type === 'image' || type === 'video' ? { media: { url: 'http://127.0.0.1/x', kind: type, width: 320, height: 180 } } : {}) };
  }));
  for (const [key, extra] of Object.entries(inputs)) clips[key] = { ...clips[key], ...extra };
  return { timing, clips, fps: FPS, windowStart: timing.window.start, viewport: { width: 320, height: 180 }, width: 320, height: 180, still: false, background: '#000000' };
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

  it('videoSegments: composed runs are cut into the same shares as played ones (a refused piece is played by a tab of its own)', () => {
    const segments = videoSegments([{ from: 0, to: 9, kind: 'played' }, { from: 10, to: 209, kind: 'composed', layer: '1:0' }], 2);
    expect(segments.map((s) => `${s.kind} ${s.from}-${s.to}`)).toEqual(['played 0-9', 'composed 10-109', 'composed 110-209']);
    expect(segments.filter((s) => s.kind === 'composed').every((s) => 'layer' in s && s.layer === '1:0')).toBe(true);
  });
});

describe('composedSpans and videoLayerAt (issue 33: a video at the bottom composed outside the browser)', () => {
  const video = (extra: Record<string, JsonValue> = {}): JsonValue => ({ asset: { type: 'video', src: 'https://cdn.example.com/v.mp4' }, start: 0, length: 3, ...extra });
  const composed = (p: SpanProps) => composedSpans(p, all(p)).map((s) => `${s.kind} ${s.from}-${s.to}${s.layer ? ` ${s.layer}` : ''}`);

  it('a video at the bottom under clips that hold still: its played frames are one composed span, the video its layer', () => {
    const p = props([[text('Title')], [video({ effect: 'zoomInSlow' })]]);
    expect(kinds(all(p))).toEqual(['played 0-35']);
    expect(composed(p)).toEqual(['composed 0-35 1:0']);
  });

  it('while a clip over the video moves the page plays the frames; where it holds again they are composed', () => {
    const p = props([[{ asset: { type: 'rich-text', text: 'Rise', animation: { preset: 'ascend', duration: 1 } }, start: 0, length: 3 }], [video()]]);
    expect(composed(p)).toEqual(['played 0-11', 'composed 12-35 1:0']);
    // A photo fading in over the video at 1 s: composed too (a picture of its own, faded frame by
    // frame), in a run of its own from the frame it appears.
    const late = props([[photo({ start: 1, length: 2, transition: { in: 'fade' } })], [video()]]);
    expect(composed(late)).toEqual(['composed 0-11 1:0', 'composed 12-35 1:0']);
    // Zooming in changes its look (its size): played while it zooms.
    const zoom = props([[photo({ start: 1, length: 2, scale: 0.5, transition: { in: 'zoom' } })], [video()]]);
    expect(composed(zoom)[1]).toMatch(/^played 12-/);
  });

  it('overlayGroups: clips that hold still share one picture; each clip that fades or moves has its own, drawn where it is wholly inside the frame, placed by whole pixels', () => {
    // Bottom to top: a video, a photo holding, a title sliding up from below the frame over the first
    // second, a logo fading in over the first second, a caption holding.
    const p = props([
      [text('Caption', { width: 200, height: 40, position: 'top' })],
      [photo({ scale: 0.2, position: 'topRight', opacity: [{ from: 0, to: 1, start: 0, length: 1 }] })],
      [text('Title', { width: 200, height: 40, position: 'bottom', offset: { y: [{ from: -0.5, to: 0, start: 0, length: 1 }] } })],
      [photo({ scale: 0.3, position: 'left' })],
      [video()],
    ]);
    expect(composed(p)).toEqual(['composed 0-35 4:0']);
    const groups = overlayGroups(p, '4:0', 0, 35)!;
    expect(groups.map((g) => ({ clips: g.clips, fullOpacity: g.fullOpacity }))).toEqual([
      { clips: ['3:0'], fullOpacity: false },
      { clips: ['2:0'], fullOpacity: true },
      { clips: ['1:0'], fullOpacity: true },
      { clips: ['0:0'], fullOpacity: false },
    ]);
    const [still, title, logo] = groups;
    expect(still!.at).toBe(0);
    expect(still!.place.every((q) => q.opacity === 1 && q.dx === 0 && q.dy === 0)).toBe(true);
    // The title (40 px high at the bottom of 180) starts 90 px lower: its bottom below the frame until
    // its box is wholly inside, which is the frame its picture is drawn at; from there up, whole pixels.
    expect(title!.at).toBe(12);
    expect(title!.place[11]!.dy).toBeGreaterThan(0);
    expect(title!.place[0]!.dy).toBe(90);
    expect(title!.place.slice(12).every((q) => q.dy === 0)).toBe(true);
    expect(title!.place.every((q) => Number.isInteger(q.dy) && q.dx === 0 && q.opacity === 1)).toBe(true);
    // The logo holds its place and fades: its opacity per frame, from 0.
    expect(logo!.at).toBe(0);
    expect(logo!.place[0]!.opacity).toBe(0);
    expect(logo!.place[12]!.opacity).toBe(1);
    expect(logo!.place.every((q) => q.dx === 0 && q.dy === 0)).toBe(true);
  });

  it('overlayGroups refuses: a clip that moves and is never wholly inside the frame, a masked clip (a luma\'s track) that fades, a blurred or turned clip that moves, a scaled output where a clip moves', () => {
    // A banner wider than the frame, panning: never wholly inside it.
    const outside = props([[text('Wide', { width: 400, height: 40, offset: { x: [{ from: -0.1, to: 0.1, start: 0, length: 3 }] } })], [video()]]);
    expect(overlayGroups(outside, '1:0', 0, 35)).toBeUndefined();
    expect(composed(outside)).toEqual(['played 0-35']);
    const lumaImage = { media: { url: 'http://127.0.0.1/l.png', kind: 'image' as const, width: 320, height: 180 } };
    const masked = props([[text('Over', { opacity: [{ from: 0, to: 1, start: 0, length: 3 }] }), { asset: { type: 'luma', src: 'https://cdn.example.com/l.png' }, start: 0, length: 3 }], [video()]], { '0:1': lumaImage });
    expect(composed(masked)).toEqual(['played 0-35']);
    // A blurred, turned or flipped clip paints past its content box (or about a centre between
    // pixels): it may fade, not move. The same clip plain moves.
    const slide = { offset: { x: [{ from: 0, to: 0.2, start: 0, length: 3 }] } };
    const fade = { opacity: [{ from: 0, to: 1, start: 0, length: 3 }] };
    const tag = (extra: Record<string, JsonValue>) => text('Tag', { width: 100, height: 40, ...extra });
    expect(composed(props([[tag(slide)], [video()]]))).toEqual(['composed 0-35 1:0']);
    expect(composed(props([[tag({ filter: 'blur', ...slide })], [video()]]))).toEqual(['played 0-35']);
    expect(composed(props([[tag({ transform: { rotate: { angle: 10 } }, ...slide })], [video()]]))).toEqual(['played 0-35']);
    expect(composed(props([[tag({ transform: { flip: { horizontal: true } }, ...slide })], [video()]]))).toEqual(['played 0-35']);
    expect(composed(props([[tag({ filter: 'blur', ...fade })], [video()]]))).toEqual(['composed 0-35 1:0']);
    // Refused while it moves, such a clip is still composed where it holds: a turned tag sliding in
    // over the first second, then holding; a faded clip in a luma's track likewise.
    const slideIn = { offset: { x: [{ from: 0.2, to: 0, start: 0, length: 1 }] } };
    expect(composed(props([[tag({ transform: { rotate: { angle: 10 } }, ...slideIn })], [video()]]))).toEqual(['played 0-11', 'composed 12-35 1:0']);
    const fadeIn = { opacity: [{ from: 0, to: 1, start: 0, length: 1 }] };
    const maskedFade = props([[tag(fadeIn), { asset: { type: 'luma', src: 'https://cdn.example.com/l.png' }, start: 0, length: 3 }], [video()]], { '0:1': lumaImage });
    expect(composed(maskedFade)).toEqual(['played 0-11', 'composed 12-35 1:0']);
    // A picture drawn at 0.3 of its size: resampled at each place by Chromium, so moving it changes
    // its look; fading it does not.
    expect(composed(props([[photo({ scale: 0.3, ...slide })], [video()]]))).toEqual(['played 0-35']);
    expect(composed(props([[photo({ scale: 0.3, ...fade })], [video()]]))).toEqual(['composed 0-35 1:0']);
    // An edit designed at 320×180 drawn at 640×360: a clip that moves changes its look there.
    const sliding = text('Slide', { width: 100, height: 40, offset: { x: [{ from: 0, to: 0.2, start: 0, length: 3 }] } });
    const scaled = { ...props([[sliding], [video()]]), width: 640, height: 360 };
    expect(kinds(composedSpans(scaled, all(scaled)))).toEqual(['played 0-35']);
    const unscaled = props([[sliding], [video()]]);
    expect(kinds(composedSpans(unscaled, all(unscaled)))).toEqual(['composed 0-35']);
  });

  it(`overlayGroups refuses more than ${MAX_OVERLAY_PICTURES} pictures`, () => {
    const fading = (i: number) => [text(`T${i}`, { width: 40, height: 20, position: 'top', offset: { x: (i - 5) / 12 }, opacity: [{ from: 0, to: 1, start: 0, length: 3 }] })];
    const many = props([...Array.from({ length: MAX_OVERLAY_PICTURES + 1 }, (_, i) => fading(i)), [video()]]);
    expect(overlayGroups(many, `${MAX_OVERLAY_PICTURES + 1}:0`, 0, 35)).toBeUndefined();
    const enough = props([...Array.from({ length: MAX_OVERLAY_PICTURES }, (_, i) => fading(i)), [video()]]);
    expect(overlayGroups(enough, `${MAX_OVERLAY_PICTURES}:0`, 0, 35)).toHaveLength(MAX_OVERLAY_PICTURES);
  });

  it(`a run of held frames over the video shorter than ${MIN_STATIC_FRAMES} frames is played by the page`, () => {
    const p = props([[text('A', { start: 0, length: 0.5 }), text('B', { start: 0.5, length: 2.5 })], [video()]]);
    expect(composed(p)).toEqual(['played 0-5', 'composed 6-35 1:0']);
  });

  it('never composed: a clip under the video, a second video, a luma, a turned, skewed, flipped, filtered or chroma-keyed video, a transparent background; a wiped one while it wipes', () => {
    const cases: SpanProps[] = [
      props([[video()], [photo()]]),
      props([[video()], [video()]]),
      props([[video(), { asset: { type: 'luma', src: 'https://cdn.example.com/l.mp4' }, start: 0, length: 3 }]], { '0:1': { media: { url: 'http://127.0.0.1/l', kind: 'video', width: 320, height: 180 } } }),
      props([[video({ transform: { rotate: { angle: 5 } } })]]),
      props([[video({ transform: { skew: { x: 0.1 } } })]]),
      props([[video({ transform: { flip: { horizontal: true } } })]]),
      props([[video({ filter: 'greyscale' })]]),
      props([[{ asset: { type: 'video', src: 'https://cdn.example.com/v.mp4', chromaKey: { color: '#00ff00' } }, start: 0, length: 3 }]]),
      { ...props([[video()]]), background: '#00000000' },
    ];
    for (const [i, p] of cases.entries()) {
      expect({ i, composed: kinds(composedSpans(p, all(p))).filter((k) => k.startsWith('composed')) }).toEqual({ i, composed: [] });
    }
    // The wipe: only while it runs; at rest the video is composed again.
    const wiped = props([[video({ transition: { in: 'wipeRight' } })]]);
    expect(videoLayerAt(wiped, 0)).toBeUndefined();
    expect(videoLayerAt(wiped, 35)).toBe('0:0');
  });

  it('a luma picture in the video\'s own track masks it: not composed; in another track it is drawn over the video by the page', () => {
    const lumaImage = { media: { url: 'http://127.0.0.1/l.png', kind: 'image' as const, width: 320, height: 180 } };
    const luma = { asset: { type: 'luma', src: 'https://cdn.example.com/l.png' }, start: 0, length: 3 };
    expect(composed(props([[video(), luma]], { '0:1': lumaImage }))).toEqual(['played 0-35']);
    expect(composed(props([[text('Over'), luma], [video()]], { '0:1': lumaImage }))).toEqual(['composed 0-35 1:0']);
  });

  it('a video placed, scaled and faded (plain placement) is composed; a video of unknown size is not', () => {
    expect(composed(props([[video({ scale: 0.5, position: 'left', opacity: 0.7 })]]))).toEqual(['composed 0-35 0:0']);
    const unknown = props([[video()]], { '0:0': { media: { url: 'http://127.0.0.1/x', kind: 'video' } } });
    expect(composed(unknown)).toEqual(['played 0-35']);
  });
});

