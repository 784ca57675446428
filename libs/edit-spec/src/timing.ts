import { ApiError, type FieldErrors } from '#libs/core';
import type { Clip, EditSpec } from './model.js';
import { aliasTarget } from './parse-assets.js';
import { Issues, summarise } from './validate.js';

/**
 * Timing rules (docs/edit-spec.md, "Timing"):
 * - `start: "auto"` starts when the previous clip of the same track ends (0 for the first clip);
 * - `length: "auto"` is the asset's own duration: (duration − trim) / speed for video and audio
 *   (from `durations`), the same for luma when known, else 3 s, as for every other asset (Shotstack);
 *   a caption lasts as long as the clip it transcribes (`alias://`) or its file (`durations`);
 * - `length: "end"` lasts until the end of the timeline, which is the latest end of the clips whose
 *   length is not `end` (directly or through an alias);
 * - `alias://NAME` takes the start or length of the clip whose `alias` is NAME.
 */
export const DEFAULT_AUTO_LENGTH = 3;

/** Media durations in seconds, keyed by `src` (from probing the files). */
export type Durations = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

export interface TimedClip {
  track: number;
  index: number;
  clip: Clip;
  start: number;
  length: number;
  end: number;
}

export interface Timing {
  /** Seconds from 0 to the end of the last clip. */
  duration: number;
  /** Per track, per clip, in the edit's order. */
  tracks: TimedClip[][];
  /** The part of the timeline that is output (`output.range`, clamped to the timeline). */
  window: { start: number; length: number };
}

export interface TimingOptions {
  durations?: Durations;
  /** Prefix of error paths (default `edit`). */
  root?: string;
}

interface Slot {
  track: number;
  index: number;
  clip: Clip;
}

type Value = number | null;

/** Times are kept to the microsecond so 0.1 + 0.2 stays 0.3. */
function roundTime(t: number): number {
  return Math.round(t * 1e6) / 1e6;
}

function lookup(durations: Durations | undefined, src: string): number | undefined {
  if (!durations) return undefined;
  if (durations instanceof Map) return durations.get(src);
  const record = durations as Readonly<Record<string, number>>;
  return Object.hasOwn(record, src) ? record[src] : undefined;
}

/**
 * Evaluates starts and lengths on demand, memoised, with cycle detection. In static mode (parsing,
 * before media are probed) an unknown media duration yields null ("not known yet") without an error;
 * in strict mode (rendering) it is an error.
 */
class TimingEvaluator {
  private readonly memo = new Map<string, Value>();
  private readonly stack: string[] = [];
  private readonly slots: Slot[][];
  private readonly aliases = new Map<string, Slot>();

  constructor(
    edit: EditSpec,
    private readonly issues: Issues,
    private readonly root: string,
    private readonly strict: boolean,
    private readonly durations?: Durations,
  ) {
    this.slots = edit.timeline.tracks.map((t, track) => t.clips.map((clip, index) => ({ track, index, clip })));
    for (const slot of this.slots.flat()) {
      const name = slot.clip.alias;
      if (name === undefined) continue;
      const first = this.aliases.get(name);
      if (first) this.issues.add(this.path(slot, 'alias'), `alias "${name}" is already used by tracks[${first.track}].clips[${first.index}]`);
      else this.aliases.set(name, slot);
    }
  }

  all(): Slot[] {
    return this.slots.flat();
  }

  private path(slot: Slot, field: string): string {
    return `${this.root}.timeline.tracks[${slot.track}].clips[${slot.index}].${field}`;
  }

  /** `tracks[0].clips[2].start` for a node key, `the end of the timeline` for the timeline end. */
  private label(key: string): string {
    if (key === 'end') return 'the end of the timeline';
    const [kind, track, index] = key.split(':');
    return `tracks[${track}].clips[${index}].${kind === 's' ? 'start' : 'length'}`;
  }

  private node(key: string, compute: () => Value): Value {
    if (this.memo.has(key)) return this.memo.get(key) ?? null;
    const open = this.stack.indexOf(key);
    if (open >= 0) {
      this.reportCycle(this.stack.slice(open));
      return null;
    }
    this.stack.push(key);
    const value = compute();
    this.stack.pop();
    const rounded = value === null ? null : roundTime(value);
    this.memo.set(key, rounded);
    return rounded;
  }

  private reportCycle(cycle: string[]): void {
    const first = cycle.findIndex((k) => k !== 'end');
    const rotated = [...cycle.slice(first), ...cycle.slice(0, first)];
    const reported = rotated[0] ?? 'end';
    const [kind, track, index] = reported.split(':');
    const slot = this.slots[Number(track)]?.[Number(index)];
    if (!slot) return;
    const trail = [...rotated, reported].map((k) => this.label(k)).join(' → ');
    this.issues.add(this.path(slot, kind === 's' ? 'start' : 'length'), `circular timing reference: ${trail}`);
  }

  private target(value: string, slot: Slot, field: string): Slot | undefined {
    const name = aliasTarget(value) ?? '';
    const found = this.aliases.get(name);
    if (!found) this.issues.add(this.path(slot, field), `refers to alias "${name}", which no clip defines`);
    return found;
  }

  start(slot: Slot): Value {
    return this.node(`s:${slot.track}:${slot.index}`, () => {
      const start = slot.clip.start;
      if (typeof start === 'number') return start;
      if (start === 'auto') {
        const previous = this.slots[slot.track]?.[slot.index - 1];
        return previous ? this.end(previous) : 0;
      }
      const source = this.target(start, slot, 'start');
      return source ? this.start(source) : null;
    });
  }

  length(slot: Slot): Value {
    return this.node(`l:${slot.track}:${slot.index}`, () => {
      const length = slot.clip.length;
      if (typeof length === 'number') return length;
      if (length === 'auto') return this.intrinsic(slot);
      if (length === 'end') return this.untilEnd(slot);
      const source = this.target(length, slot, 'length');
      return source ? this.length(source) : null;
    });
  }

  end(slot: Slot): Value {
    const start = this.start(slot);
    const length = this.length(slot);
    return start === null || length === null ? null : start + length;
  }

  /** True when the clip's length is `end`, directly or through aliases. */
  private endBound(slot: Slot, seen = new Set<Slot>()): boolean {
    const length = slot.clip.length;
    if (length === 'end') return true;
    if (typeof length !== 'string' || length === 'auto' || seen.has(slot)) return false;
    const source = this.aliases.get(aliasTarget(length) ?? '');
    return source ? this.endBound(source, seen.add(slot)) : false;
  }

  timelineEnd(): Value {
    return this.node('end', () => {
      const bounded = this.all().filter((s) => !this.endBound(s));
      const ends = bounded.map((s) => this.end(s));
      if (ends.some((e) => e === null)) return null;
      return Math.max(0, ...(ends as number[]));
    });
  }

  private untilEnd(slot: Slot): Value {
    if (this.all().every((s) => this.endBound(s))) {
      this.issues.add(this.path(slot, 'length'), '"end" needs at least one clip with a set length to mark the end of the timeline');
      return null;
    }
    const end = this.timelineEnd();
    const start = this.start(slot);
    if (end === null || start === null) return null;
    if (end - start <= 0) {
      this.issues.add(this.path(slot, 'length'), `"end" leaves no time: the clip starts at ${start}s, at or after the end of the timeline (${end}s)`);
      return null;
    }
    return end - start;
  }

  private intrinsic(slot: Slot): Value {
    const asset = slot.clip.asset;
    switch (asset.type) {
      case 'video':
      case 'audio':
        return this.mediaLength(slot, asset.src, asset.trim, asset.speed);
      case 'luma': {
        const known = lookup(this.durations, asset.src);
        return known === undefined ? DEFAULT_AUTO_LENGTH : this.mediaLength(slot, asset.src, asset.trim, 1);
      }
      case 'caption': {
        if (aliasTarget(asset.src) !== undefined) {
          const source = this.aliases.get(aliasTarget(asset.src) ?? '');
          return source ? this.length(source) : null;
        }
        return this.mediaLength(slot, asset.src, asset.trim, asset.speed);
      }
      default:
        return DEFAULT_AUTO_LENGTH;
    }
  }

  private mediaLength(slot: Slot, src: string, trim: number, speed: number): Value {
    const duration = lookup(this.durations, src);
    if (duration === undefined) {
      if (this.strict) this.issues.add(this.path(slot, 'length'), `"auto" needs the duration of ${src}, which is not known`);
      return null;
    }
    const remaining = duration - trim;
    if (remaining <= 0) {
      this.issues.add(this.path(slot, 'length'), `"auto" leaves no time: trim ${trim}s is at or past the end of the ${duration}s source`);
      return null;
    }
    return speed > 0 ? remaining / speed : remaining;
  }

  /** Caption `src: "alias://NAME"` must name an audio or video clip. */
  checkCaptionSources(): void {
    for (const slot of this.all()) {
      const asset = slot.clip.asset;
      if (asset.type !== 'caption' || aliasTarget(asset.src) === undefined) continue;
      const name = aliasTarget(asset.src) ?? '';
      const source = this.aliases.get(name);
      if (!source) this.issues.add(this.path(slot, 'asset.src'), `refers to alias "${name}", which no clip defines`);
      else if (source.clip.asset.type !== 'video' && source.clip.asset.type !== 'audio') {
        this.issues.add(this.path(slot, 'asset.src'), `alias "${name}" names a ${source.clip.asset.type} clip; captions need an audio or video clip`);
      }
    }
  }
}

/**
 * Static checks done while parsing: duplicate aliases, unknown aliases, circular references, `end`
 * with nothing to end on, caption sources. Media durations need not be known.
 */
export function checkTimingReferences(edit: EditSpec, issues: Issues, root = 'edit'): void {
  const evaluator = new TimingEvaluator(edit, issues, root, false);
  for (const slot of evaluator.all()) {
    evaluator.start(slot);
    evaluator.length(slot);
  }
  evaluator.checkCaptionSources();
}

export type TimingResult = { ok: true; timing: Timing } | { ok: false; errors: FieldErrors };

/**
 * Absolute start and length of every clip, the timeline duration and the output window. Needs the
 * durations of media whose length is `auto` (errors name the clip's `length` otherwise).
 */
export function resolveTiming(edit: EditSpec, opts: TimingOptions = {}): TimingResult {
  const root = opts.root ?? 'edit';
  const issues = new Issues();
  const evaluator = new TimingEvaluator(edit, issues, root, true, opts.durations);
  const tracks: TimedClip[][] = edit.timeline.tracks.map(() => []);
  for (const slot of evaluator.all()) {
    const start = evaluator.start(slot);
    const length = evaluator.length(slot);
    if (start === null || length === null) continue;
    tracks[slot.track]?.push({ track: slot.track, index: slot.index, clip: slot.clip, start, length, end: roundTime(start + length) });
  }
  if (issues.count > 0) return { ok: false, errors: issues.errors };
  const duration = Math.max(0, ...tracks.flat().map((c) => c.end));
  const window = outputWindow(edit, duration, issues, root);
  if (!window) return { ok: false, errors: issues.errors };
  return { ok: true, timing: { duration, tracks, window } };
}

function outputWindow(edit: EditSpec, duration: number, issues: Issues, root: string): Timing['window'] | undefined {
  const range = edit.output.range;
  const start = range?.start ?? 0;
  if (duration > 0 && start >= duration) {
    issues.add(`${root}.output.range.start`, `must be before the end of the timeline (${duration}s), got ${start}`);
    return undefined;
  }
  const available = Math.max(0, duration - start);
  return { start, length: roundTime(Math.min(range?.length ?? available, available)) };
}

/**
 * The media whose durations the timing needs: `src` of every video, audio and luma clip with
 * `length: "auto"` (their own duration), with the path of that `src` for errors. Probing these
 * before `assertTiming` lets an edit with `auto` media lengths be timed, checked and priced.
 */
export function autoLengthSources(edit: EditSpec, root = 'edit'): { src: string; path: string; type: 'video' | 'audio' | 'luma' }[] {
  const out: { src: string; path: string; type: 'video' | 'audio' | 'luma' }[] = [];
  edit.timeline.tracks.forEach((track, t) => track.clips.forEach((clip, c) => {
    const asset = clip.asset;
    if (clip.length !== 'auto') return;
    if (asset.type === 'video' || asset.type === 'audio' || asset.type === 'luma') {
      out.push({ src: asset.src, path: `${root}.timeline.tracks[${t}].clips[${c}].asset.src`, type: asset.type });
    }
  }));
  return out;
}

/** Number of clips over all tracks. */
export function clipCount(edit: EditSpec): number {
  return edit.timeline.tracks.reduce((n, t) => n + t.clips.length, 0);
}

/**
 * resolveTiming for the render path: throws 422 EMPTY_TIMELINE when the timeline has no duration,
 * or 422 TEMPLATE_VALIDATION_FAILED with the `errors` object.
 */
export function assertTiming(edit: EditSpec, opts: TimingOptions = {}): Timing {
  if (clipCount(edit) === 0) {
    throw new ApiError('EMPTY_TIMELINE', 'The timeline has no clips, so it has no duration');
  }
  const result = resolveTiming(edit, opts);
  if (!result.ok) {
    throw new ApiError('TEMPLATE_VALIDATION_FAILED', `The edit's timing is not valid: ${summarise(result.errors)}`, { errors: result.errors });
  }
  if (result.timing.duration === 0) throw new ApiError('EMPTY_TIMELINE', 'The timeline has no duration');
  return result.timing;
}

/**
 * Clips showing at time `t` (start ≤ t < end), bottom layer first (the last track is the bottom,
 * tracks[0] the top), ready to be painted in order.
 */
export function clipsAt(timing: Timing, t: number): TimedClip[] {
  return [...timing.tracks].reverse().flatMap((track) => track.filter((c) => c.start <= t && t < c.end));
}
