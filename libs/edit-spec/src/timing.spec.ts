import { ApiError } from '#libs/core';
import type { EditSpec } from './model.js';
import { parseEdit } from './parse.js';
import { assertTiming, clipsAt, resolveTiming, type Durations, type Timing } from './timing.js';

type Raw = Record<string, unknown>;

const VIDEO = 'https://cdn.example.com/v.mp4';
const VIDEO2 = 'https://cdn.example.com/w.mp4';
const AUDIO = 'https://cdn.example.com/a.mp3';

function image(extra: Raw = {}): Raw {
  return { asset: { type: 'image', src: 'https://cdn.example.com/a.jpg' }, start: 0, length: 5, ...extra };
}

function video(src: string, extra: Raw = {}, asset: Raw = {}): Raw {
  return { asset: { type: 'video', src, ...asset }, start: 'auto', length: 'auto', ...extra };
}

function edit(tracks: Raw[][], output: Raw = { format: 'mp4' }): EditSpec {
  const result = parseEdit({ timeline: { tracks: tracks.map((clips) => ({ clips })) }, output });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.edit;
}

/** Errors of an edit whose timing is wrong whatever the media durations: parseEdit already refuses it. */
function parseErrors(tracks: Raw[][]): Record<string, string[]> | null {
  const result = parseEdit({ timeline: { tracks: tracks.map((clips) => ({ clips })) }, output: { format: 'mp4' } });
  return result.ok ? null : result.errors;
}

function timing(e: EditSpec, durations?: Durations): Timing {
  const result = resolveTiming(e, { durations });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.timing;
}

/** [start, length] of every clip, per track. */
function spans(t: Timing): [number, number][][] {
  return t.tracks.map((track) => track.map((c) => [c.start, c.length]));
}

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a throw');
}

describe('resolveTiming', () => {
  it('keeps numeric starts and lengths and measures the timeline to the last end', () => {
    const t = timing(edit([[image({ start: 1, length: 2 })], [image({ start: 0.1, length: 0.2 })]]));
    expect(spans(t)).toEqual([[[1, 2]], [[0.1, 0.2]]]);
    expect(t.duration).toBe(3);
    expect(t.tracks[1]?.[0]?.end).toBe(0.3);
  });

  it('starts an "auto" clip when the previous clip on its track ends (the first at 0)', () => {
    const t = timing(edit([[image({ start: 'auto', length: 2 }), image({ start: 'auto', length: 3 }), image({ start: 'auto', length: 1 })]]));
    expect(spans(t)).toEqual([[[0, 2], [2, 3], [5, 1]]]);
  });

  it('gives "auto" length the media duration, less trim, divided by speed', () => {
    const t = timing(edit([[video(VIDEO), video(VIDEO2, {}, { trim: 2, speed: 2 })]]), { [VIDEO]: 10, [VIDEO2]: 12 });
    expect(spans(t)).toEqual([[[0, 10], [10, 5]]]);
  });

  it('gives "auto" length 3 seconds to images, text and shapes, as Shotstack does', () => {
    const t = timing(edit([[
      image({ length: 'auto' }),
      { asset: { type: 'rich-text', text: 'Hi' }, start: 'auto', length: 'auto' },
      { asset: { type: 'shape', shape: 'circle', circle: { radius: 5 } }, start: 'auto', length: 'auto' },
    ]]));
    expect(spans(t)).toEqual([[[0, 3], [3, 3], [6, 3]]]);
  });

  it('takes a luma\'s duration when known, else 3 seconds', () => {
    const luma = { asset: { type: 'luma', src: VIDEO }, start: 0, length: 'auto' };
    expect(spans(timing(edit([[luma]])))).toEqual([[[0, 3]]]);
    expect(spans(timing(edit([[luma]]), new Map([[VIDEO, 4.5]])))).toEqual([[[0, 4.5]]]);
  });

  it('refuses "auto" media length without a known duration, naming the clip', () => {
    const result = resolveTiming(edit([[image(), video(VIDEO)]]));
    expect(result).toEqual({ ok: false, errors: { 'edit.timeline.tracks[0].clips[1].length': [`"auto" needs the duration of ${VIDEO}, which is not known`] } });
  });

  it('refuses a trim at or past the end of the source', () => {
    const result = resolveTiming(edit([[video(VIDEO, {}, { trim: 10 })]]), { durations: { [VIDEO]: 10 } });
    expect(result.ok ? null : result.errors['edit.timeline.tracks[0].clips[0].length']?.[0]).toMatch(/trim 10s is at or past the end of the 10s source/);
  });

  it('runs a length "end" clip to the end of the last other clip', () => {
    const t = timing(edit([
      [image({ start: 1, length: 'end' })],
      [video(VIDEO), video(VIDEO2)],
      [{ asset: { type: 'audio', src: AUDIO }, start: 0, length: 'end' }],
    ]), { [VIDEO]: 4, [VIDEO2]: 6 });
    expect(spans(t)).toEqual([[[1, 9]], [[0, 4], [4, 6]], [[0, 10]]]);
    expect(t.duration).toBe(10);
  });

  it('refuses "end" when no clip has a set length to end on, or when it leaves no time', () => {
    expect(parseErrors([[image({ length: 'end' })]])).toEqual({
      'edit.timeline.tracks[0].clips[0].length': ['"end" needs at least one clip with a set length to mark the end of the timeline'],
    });
    expect(parseErrors([[image({ start: 5, length: 'end' })], [image({ length: 5 })]])).toEqual({
      'edit.timeline.tracks[0].clips[0].length': ['"end" leaves no time: the clip starts at 5s, at or after the end of the timeline (5s)'],
    });
  });

  it('copies start and length through alias:// references, across tracks and in either order', () => {
    const t = timing(edit([
      [{ asset: { type: 'rich-text', text: 'Breaking' }, start: 'alias://main', length: 'alias://main' }],
      [image({ length: 2 }), video(VIDEO, { alias: 'main' })],
    ]), { [VIDEO]: 7 });
    expect(spans(t)).toEqual([[[2, 7]], [[0, 2], [2, 7]]]);
  });

  it('counts a clip whose length aliases an "end" clip as ending with the timeline', () => {
    const t = timing(edit([[image({ alias: 'bg', length: 'end' })], [image({ length: 'alias://bg' })], [image({ length: 4 })]]));
    expect(spans(t)).toEqual([[[0, 4]], [[0, 4]], [[0, 4]]]);
  });

  it('lasts an auto-length caption as long as the clip it transcribes', () => {
    const t = timing(edit([
      [{ asset: { type: 'caption', src: 'alias://talk' }, start: 'alias://talk', length: 'auto' }],
      [image({ length: 1 }), video(VIDEO, { alias: 'talk' })],
    ]), { [VIDEO]: 8 });
    expect(spans(t)[0]).toEqual([[1, 8]]);
  });

  it('reports a circular reference through "end" and "auto"', () => {
    expect(parseErrors([[image({ length: 'end' }), image({ start: 'auto', length: 2 })]])).toEqual({
      'edit.timeline.tracks[0].clips[0].length': [
        'circular timing reference: tracks[0].clips[0].length → the end of the timeline → tracks[0].clips[1].start → tracks[0].clips[0].length',
      ],
    });
  });

  it('reports a circular alias chain of lengths', () => {
    expect(parseErrors([[image({ alias: 'a', length: 'alias://c' }), image({ alias: 'b', length: 'alias://a' }), image({ alias: 'c', length: 'alias://b' })]])).toEqual({
      'edit.timeline.tracks[0].clips[0].length': [
        'circular timing reference: tracks[0].clips[0].length → tracks[0].clips[2].length → tracks[0].clips[1].length → tracks[0].clips[0].length',
      ],
    });
  });

  it('trims the output to output.range, clamped to the timeline', () => {
    expect(timing(edit([[image({ length: 10 })]], { format: 'mp4', range: { start: 2, length: 3 } })).window).toEqual({ start: 2, length: 3 });
    expect(timing(edit([[image({ length: 10 })]], { format: 'mp4', range: { start: 8, length: 5 } })).window).toEqual({ start: 8, length: 2 });
    expect(timing(edit([[image({ length: 10 })]])).window).toEqual({ start: 0, length: 10 });
    const beyond = resolveTiming(edit([[image({ length: 10 })]], { format: 'mp4', range: { start: 10 } }));
    expect(beyond.ok ? null : beyond.errors).toEqual({ 'edit.output.range.start': ['must be before the end of the timeline (10s), got 10'] });
  });
});

describe('assertTiming', () => {
  it('throws 422 EMPTY_TIMELINE for a timeline without clips', () => {
    const empty = parseEdit({ timeline: { tracks: [{ clips: [] }] }, output: { format: 'mp4' } });
    if (!empty.ok) throw new Error('expected a parse');
    const err = thrown(() => assertTiming(empty.edit));
    expect([err.code, err.status]).toEqual(['EMPTY_TIMELINE', 422]);
  });

  it('throws 422 TEMPLATE_VALIDATION_FAILED with the errors of an unresolvable timing', () => {
    const err = thrown(() => assertTiming(edit([[video(VIDEO)]])));
    expect([err.code, err.status]).toEqual(['TEMPLATE_VALIDATION_FAILED', 422]);
    expect(err.extras.errors).toHaveProperty(['edit.timeline.tracks[0].clips[0].length']);
  });

  it('returns the timing when it resolves', () => {
    expect(assertTiming(edit([[image()]])).duration).toBe(5);
  });
});

describe('clipsAt', () => {
  it('lists the clips showing at a time, bottom track first, end exclusive', () => {
    const t = timing(edit([[image({ start: 0, length: 2, alias: 'top' })], [image({ start: 1, length: 2, alias: 'bottom' })]]));
    expect(clipsAt(t, 1.5).map((c) => c.clip.alias)).toEqual(['bottom', 'top']);
    expect(clipsAt(t, 2).map((c) => c.clip.alias)).toEqual(['bottom']);
    expect(clipsAt(t, 3)).toEqual([]);
  });
});
