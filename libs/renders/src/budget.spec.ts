import { ApiError } from '#libs/core';
import { applyMerge, assertEdit, assertTiming, type JsonValue, RENDER_BUDGET, renderCost } from '#libs/edit-spec';
import { PLANS } from '#libs/workspaces';
import { librarySeeds } from '#libs/templates';
import { checkBudget } from './budget.js';

// Issue 27 "One request cannot exhaust a worker": every render is priced in work before anything is
// held or drawn (docs/decisions.md "Hostile input (issue 27): budget").

const blurredText = (n: number) => ({
  timeline: {
    tracks: [{
      clips: Array.from({ length: n }, (_, i) => ({
        asset: { type: 'text', text: `Layer ${i}`, width: 4000, height: 4000, font: { family: 'Open Sans', size: 400 } },
        start: 0, length: 1, filter: 'blur',
      })),
    }],
  },
  output: { format: 'png', size: { width: 1080, height: 1080 } },
});

const errorsOf = (raw: unknown, plan = PLANS.pro, scale = 1): Record<string, string[]> | undefined => {
  const edit = assertEdit(raw);
  try {
    checkBudget(edit, assertTiming(edit), plan, { scale });
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    expect([err.code, err.status]).toEqual(['VALIDATION_FAILED', 422]);
    return err.extras.errors;
  }
};

describe('checkBudget (issue 27)', () => {
  it('refuses 3,000 blurred 4000×4000 text clips, naming the clip limit at edit.timeline.tracks', () => {
    const errors = errorsOf(blurredText(3000));
    expect(errors?.['edit.timeline.tracks']).toEqual(expect.arrayContaining([`at most ${RENDER_BUDGET.clips} clips in a render (house limit, docs/decisions.md); this edit has 3000`]));
  });

  it('refuses 60 of them on the pixels one frame draws and on their blur', () => {
    const errors = errorsOf(blurredText(60));
    expect(errors?.['edit.timeline.tracks']).toEqual([
      expect.stringMatching(/^at most 200 megapixels of clips drawn for one frame at output scale \(house limit, docs\/decisions.md\); this edit draws 960 megapixels$/),
      expect.stringMatching(/^at most 600 million pixels × blur radius .*; this edit blurs 7,680 million$/),
    ]);
  });

  it('refuses one clip larger than a layer may be, naming the clip', () => {
    const edit = { timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 10, height: 10 }, width: 9000, height: 9000 }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 1000, height: 1000 } } };
    expect(Object.keys(errorsOf(edit) ?? {})).toEqual(['edit.timeline.tracks[0].clips[0]']);
  });

  // The largest still each plan allows (its side; the still engine draws up to 80 megapixels) with one
  // full-frame text clip, a layer as large as the frame: over RENDER_BUDGET.layerPixels from Pro up.
  it.each(Object.values(PLANS).map((p) => [p.code, p] as const))('lets the largest still of the %s plan through with a full-frame text clip (one layer may be as large as the frame)', (_code, plan) => {
    // An edit's size is at most 8192 a side: the Enterprise plan's 16384 is reached at scale 2 (16384×4882).
    const scale = Math.ceil(plan.maxImageDimension / 8192);
    const side = plan.maxImageDimension / scale;
    const size = { width: side, height: Math.min(side, Math.floor(80_000_000 / scale / scale / side)) };
    const edit = { timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'Full frame', font: { family: 'Open Sans', size: 200 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size } };
    const parsed = assertEdit(edit);
    expect(renderCost(parsed, assertTiming(parsed), { scale }).largest?.pixels).toBe(size.width * size.height * scale * scale);
    expect(errorsOf(edit, plan, scale)).toBeUndefined();
  });

  it('still refuses a clip larger than the frame when the frame is over the house layer limit (an 8192×4608 still, a 9000×9000 clip)', () => {
    const edit = { timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 10, height: 10 }, width: 9000, height: 9000 }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 8192, height: 4608 } } };
    expect(errorsOf(edit)).toEqual({ 'edit.timeline.tracks[0].clips[0]': ['at most 37.7 megapixels in one clip drawn at output scale (the output frame); this clip is 81 megapixels'] });
  });

  it('refuses a second clip over the house layer limit in a still larger than it (two full-frame layers of 8192×8192), naming that clip', () => {
    const full = { asset: { type: 'text', text: 'Full frame', font: { family: 'Open Sans', size: 200 } }, start: 0, length: 1 };
    const edit = { timeline: { tracks: [{ clips: [full, full] }] }, output: { format: 'png', size: { width: 8192, height: 8192 } } };
    expect(errorsOf(edit)).toEqual({ 'edit.timeline.tracks[0].clips[1]': ['at most one clip over 36 megapixels drawn at output scale (house limit, docs/decisions.md); this clip is 67.1 megapixels, and edit.timeline.tracks[0].clips[0] is 67.1 megapixels'] });
  });

  it('counts a still at its device scale: under at scale 1, over at scale 3', () => {
    const edit = blurredText(0);
    edit.timeline.tracks[0]!.clips = Array.from({ length: 2 }, () => ({ asset: { type: 'text', text: 'x', width: 3000, height: 3000, font: { family: 'Open Sans', size: 40 } }, start: 0, length: 1, filter: 'blur' }));
    expect(errorsOf(edit, PLANS.pro, 1)).toBeUndefined();
    expect(Object.keys(errorsOf(edit, PLANS.pro, 3) ?? {})).toEqual(['edit.timeline.tracks[0].clips[0]', 'edit.timeline.tracks']);
  });

  it('counts only the clips a still draws: those of its moment', () => {
    const edit = blurredText(0);
    edit.timeline.tracks[0]!.clips = Array.from({ length: 100 }, (_, i) => ({ asset: { type: 'text', text: 'x', width: 2000, height: 2000, font: { family: 'Open Sans', size: 40 } }, start: i, length: 1, filter: 'blur' }));
    const parsed = assertEdit(edit);
    expect(renderCost(parsed, assertTiming(parsed)).framePixels).toBe(4_000_000);
  });

  it("refuses a video over the plan's output pixels × frames (an output stretched past 16:9), not one within the plan's ceilings", () => {
    const video = (size: { width: number; height: number }, length: number) => ({ timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 5 } }, start: 0, length }] }] }, output: { format: 'mp4', size, fps: 30 } });
    expect(errorsOf(video({ width: 1024, height: 576 }, 30), PLANS.free)).toBeUndefined();
    expect(Object.keys(errorsOf(video({ width: 8192, height: 576 }, 30), PLANS.free) ?? {})).toEqual(['edit.output']);
  });

  it.each(librarySeeds().map((s) => [s.id, s] as const))('lets the seeded library template %s through on every plan, at every scale', (_id, seed) => {
    const values = Object.fromEntries(seed.fields.map((f) => [f.key, f.defaultValue ?? f.placeholder ?? 'Sample']));
    const raw = JSON.parse(JSON.stringify(applyMerge(seed.edit, values as Record<string, JsonValue>).value).replace(/"(ast_[A-Za-z0-9_]+)"/g, '"https://media.test/files/a/$1/file"'));
    for (const plan of Object.values(PLANS)) for (const scale of [1, 3]) expect(errorsOf(raw, plan, scale)).toBeUndefined();
  });
});
