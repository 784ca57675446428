import { ApiError } from '#libs/core';
import { PLANS } from '#libs/workspaces';
import { assertEdit, assertTiming } from '#libs/edit-spec';
import { checkVideoPlan, withMeasuredLengths } from './renders.service.js';

// Contract §7 (402 codes) and §8 (plan ceilings); decisions.md "Video renders".

const video = (output: Record<string, unknown> = {}) =>
  assertEdit({ timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 10, height: 10 } }, start: 0, length: 1 }] }] }, output: { format: 'mp4', resolution: 'sd', ...output } });

const codeOf = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof ApiError ? err.code : `not an ApiError: ${String(err)}`;
  }
};

describe('checkVideoPlan (§7, §8)', () => {
  it('refuses video on a plan without it with 402 FEATURE_VIDEOENABLED, before any other ceiling', () => {
    // Every shipped plan has video; an operator's plan may not.
    const noVideo = { ...PLANS.free, videoEnabled: false };
    expect(codeOf(() => checkVideoPlan(noVideo, video()))).toBe('FEATURE_VIDEOENABLED');
    expect(codeOf(() => checkVideoPlan(noVideo, video({ resolution: '4k', fps: 60 })))).toBe('FEATURE_VIDEOENABLED');
    expect(new ApiError('FEATURE_VIDEOENABLED', 'x').status).toBe(402);
  });

  it('lets a render within the plan through and names the ceiling it passes', () => {
    expect(codeOf(() => checkVideoPlan(PLANS.free, video()))).toBeUndefined();
    expect(codeOf(() => checkVideoPlan(PLANS.free, video({ resolution: 'hd' })))).toBe('LIMIT_VIDEO_RESOLUTION');
    expect(codeOf(() => checkVideoPlan(PLANS.free, video({ fps: 60 })))).toBe('LIMIT_VIDEO_FPS');
    expect(codeOf(() => checkVideoPlan(PLANS.free, video({ codec: 'h265' })))).toBe('LIMIT_VIDEO_RESOLUTION');
    expect(codeOf(() => checkVideoPlan(PLANS.business, video({ resolution: '4k', fps: 60, codec: 'h265' })))).toBeUndefined();
  });
});

describe('withMeasuredLengths (decisions.md "auto media lengths")', () => {
  it('writes the measured length of every `auto` clip into the edit and leaves the others as they were', () => {
    const edit = assertEdit({
      timeline: {
        tracks: [
          { clips: [{ asset: { type: 'video', src: 'https://cdn.example/a.mp4', trim: 1, speed: 2 }, start: 0, length: 'auto' }, { asset: { type: 'text', text: 'x' }, start: 'auto', length: 2 }] },
          { clips: [{ asset: { type: 'audio', src: 'https://cdn.example/b.mp3' }, start: 0, length: 'end' }] },
        ],
      },
      output: { format: 'mp4', resolution: 'sd' },
    });
    const timing = assertTiming(edit, { durations: { 'https://cdn.example/a.mp4': 9 } });
    const measured = withMeasuredLengths(edit, timing);
    const [video, text] = measured.timeline.tracks[0]!.clips;
    expect(video!.length).toBe(4); // (9 − 1) / 2
    expect(text).toBe(edit.timeline.tracks[0]!.clips[1]);
    expect(measured.timeline.tracks[1]!.clips[0]!.length).toBe('end');
    // Timed again without any durations, the measured edit gives the same times.
    expect(assertTiming(measured).duration).toBe(timing.duration);
    expect(edit.timeline.tracks[0]!.clips[0]!.length).toBe('auto');
  });
});
