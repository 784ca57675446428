import { validationFailed, type FieldErrors } from '#libs/core';
import { type EditSpec, layerPixelLimit, outputKind, RENDER_BUDGET, renderCost, type Timing } from '#libs/edit-spec';
import { type Plan } from '#libs/workspaces';

const mp = (pixels: number) => `${Math.round(pixels / 1e5) / 10} megapixels`;
const million = (n: number) => `${Math.round(n / 1e6).toLocaleString('en')} million`;
const HOUSE = 'house limit, docs/decisions.md';

/**
 * The render budget (docs/decisions.md "Hostile input (issue 27): budget"), checked on the render and
 * the estimate before anything is held, queued or drawn: clips, the largest layer, a frame's layer
 * pixels and blur, and a video's output pixels × frames (the plan's). Over it is 422
 * VALIDATION_FAILED naming each limit at its path. One layer may be RENDER_BUDGET.layerPixels or the
 * output frame, whichever is larger (`layerPixelLimit`), and only one clip may be over the house value. A decoded image's size is known only once it is
 * downloaded: the still engine refuses one over RENDER_BUDGET.mediaPixels (sharp's limitInputPixels).
 */
export function checkBudget(edit: EditSpec, timing: Timing, plan: Plan, opts: { scale?: number; root?: string } = {}): void {
  const root = opts.root ?? 'edit';
  const cost = renderCost(edit, timing, opts);
  const errors: FieldErrors = {};
  const add = (path: string, message: string) => (errors[path] ??= []).push(message);
  if (cost.clips > RENDER_BUDGET.clips) add(`${root}.timeline.tracks`, `at most ${RENDER_BUDGET.clips} clips in a render (${HOUSE}); this edit has ${cost.clips}`);
  const layerLimit = layerPixelLimit(cost.outputPixels);
  if (cost.largest && cost.largest.pixels > layerLimit) {
    const why = layerLimit > RENDER_BUDGET.layerPixels ? 'the output frame' : HOUSE;
    add(cost.largest.path, `at most ${mp(layerLimit)} in one clip drawn at output scale (${why}); this clip is ${mp(cost.largest.pixels)}`);
  }
  // A still over the house layer limit may have one frame-sized clip (its background), not two.
  if (cost.runnerUp && cost.runnerUp.pixels > RENDER_BUDGET.layerPixels && cost.runnerUp.pixels <= layerLimit) {
    add(cost.runnerUp.path, `at most one clip over ${mp(RENDER_BUDGET.layerPixels)} drawn at output scale (${HOUSE}); this clip is ${mp(cost.runnerUp.pixels)}, and ${cost.largest!.path} is ${mp(cost.largest!.pixels)}`);
  }
  if (cost.framePixels > RENDER_BUDGET.framePixels) {
    add(`${root}.timeline.tracks`, `at most ${mp(RENDER_BUDGET.framePixels)} of clips drawn for one frame at output scale (${HOUSE}); this edit draws ${mp(cost.framePixels)}`);
  }
  if (cost.frameBlur > RENDER_BUDGET.frameBlur) {
    add(`${root}.timeline.tracks`, `at most ${million(RENDER_BUDGET.frameBlur)} pixels × blur radius of blurred clips and text shadows in one frame (${HOUSE}); this edit blurs ${million(cost.frameBlur)}`);
  }
  if (outputKind(edit.output.format) === 'video' && cost.pixelFrames > plan.maxVideoPixelFrames) {
    add(`${root}.output`, `at most ${million(plan.maxVideoPixelFrames)} output pixels × frames on the ${plan.name} plan (its largest 16:9 video at its top frame rate for its longest duration); this video is ${million(cost.pixelFrames)}`);
  }
  if (Object.keys(errors).length) throw validationFailed(errors, 'The render is over its budget');
}
