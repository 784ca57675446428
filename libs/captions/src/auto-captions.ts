import { ApiError, ERROR_STATUS, type ErrorCode, type KeyMode } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import { aliasTarget, assertTiming, type EditSpec, type TimedClip } from '#libs/edit-spec';
import { outputKey, type StorageDriver } from '#libs/storage';
import { CaptionsService } from './captions.service.js';
import { CUE_DEFAULTS, toWebVtt, type Cue } from './cues.js';
import type { TranscriptionRunner } from './runner.js';

/** A caption clip whose `src` is `alias://NAME`, and the audio or video clip NAME names. */
interface AliasCaption {
  caption: TimedClip;
  target: TimedClip;
  path: string;
}

/** The caption clips of an edit that transcribe another clip (`src: "alias://NAME"`). */
export function aliasCaptions(edit: EditSpec): AliasCaption[] {
  const timing = assertTiming(edit);
  const clips = timing.tracks.flat();
  const byAlias = new Map(clips.flatMap((c) => (c.clip.alias ? [[c.clip.alias, c] as const] : [])));
  return clips.flatMap((c) => {
    const asset = c.clip.asset;
    if (asset.type !== 'caption') return [];
    const name = aliasTarget(asset.src);
    const target = name === undefined ? undefined : byAlias.get(name);
    return target ? [{ caption: c, target, path: `edit.timeline.tracks[${c.track}].clips[${c.index}].asset.src` }] : [];
  });
}

/** Whether an edit has captions that need a speech provider. */
export function hasAliasCaptions(edit: EditSpec): boolean {
  return edit.timeline.tracks.some((t) => t.clips.some((c) => c.asset.type === 'caption' && aliasTarget(c.asset.src) !== undefined));
}

/** The `trim`/`speed` of a clip's media (audio and video assets have both; 0 and 1 otherwise). */
function mediaPlay(clip: TimedClip): { trim: number; speed: number } {
  const asset = clip.clip.asset as { trim?: number; speed?: number };
  return { trim: asset.trim ?? 0, speed: asset.speed && asset.speed > 0 ? asset.speed : 1 };
}

/**
 * Cues of the target's media (seconds into its file) moved into the caption's own file time: the
 * caption shows the cue at `trim + (t - start) * speed` of its clip (libs/video CaptionView), the
 * target plays its file from its `trim` at its `speed`.
 */
export function shiftCues(cues: readonly Cue[], target: TimedClip, caption: TimedClip): Cue[] {
  const t = mediaPlay(target);
  const c = mediaPlay(caption);
  const move = (fileSec: number) => c.trim + (target.start + (fileSec - t.trim) / t.speed - caption.start) * c.speed;
  return cues
    .map((cue) => ({ ...cue, start: move(cue.start), end: move(cue.end), words: cue.words.map((w) => ({ ...w, start: move(w.start), end: move(w.end) })) }))
    .filter((cue) => cue.end > 0);
}

/**
 * Auto-captions (docs/captions.md "Captions in videos"): each `alias://` caption of a video render
 * gets the cues of its clip's speech — the workspace's speech provider (cache first: the same file
 * is never sent twice), a transcription record of route `render` for each file — written as a WebVTT
 * file into the render's folder; the edit returned points the captions at those files.
 */
export class AutoCaptions {
  /** The captions' rules (provider choice, cache) over no queue: the transcription runs here, in the video job. */
  private readonly captions: CaptionsService;

  constructor(private readonly deps: Omit<ConstructorParameters<typeof CaptionsService>[0], 'enqueue'> & {
    runner: TranscriptionRunner;
    storage: StorageDriver;
  }) {
    this.captions = new CaptionsService({ ...deps, enqueue: async () => undefined });
  }

  /** The edit with its `alias://` captions resolved, or null when it has none (libs/renders CaptionResolver). */
  async resolveAny(render: { id: string; workspaceId: string; mode: KeyMode }, plan: Plan, edit: EditSpec, signal: AbortSignal): Promise<EditSpec | null> {
    return hasAliasCaptions(edit) ? this.resolve(render, plan, edit, signal) : null;
  }

  async resolve(render: { id: string; workspaceId: string; mode: KeyMode }, plan: Plan, edit: EditSpec, signal: AbortSignal): Promise<EditSpec> {
    const found = aliasCaptions(edit);
    if (!found.length) return edit;
    const bySource = new Map<string, Promise<Cue[]>>();
    const resolved = structuredClone(edit);
    for (const { caption, target, path } of found) {
      const src = (target.clip.asset as { src: string }).src;
      let cues = bySource.get(src);
      if (!cues) {
        cues = this.transcribe(render.workspaceId, render.mode, plan, src, path, signal);
        bySource.set(src, cues);
      }
      const key = outputKey(render.id, 'vtt');
      await this.deps.storage.put(key, Buffer.from(toWebVtt(shiftCues(await cues, target, caption)), 'utf8'));
      const clip = resolved.timeline.tracks[caption.track]!.clips[caption.index]!;
      (clip.asset as { src: string }).src = this.deps.storage.url(key);
    }
    return resolved;
  }

  /** The cues of one media file (seconds into it). */
  private async transcribe(workspaceId: string, mode: KeyMode, plan: Plan, src: string, path: string, signal: AbortSignal): Promise<Cue[]> {
    const { captions } = this;
    const { transcriptions, runner } = this.deps;
    const { transcription } = await captions.generate(workspaceId, plan, {
      mode, route: 'render', source: { kind: 'audioUrl', value: src }, cache: true, save: false,
      settings: { alternativeLanguageCodes: [], model: null, diarize: false, keywords: [], punctuation: true, filterProfanity: false },
      cueOptions: { ...CUE_DEFAULTS },
    });
    if (transcription.status !== 'done') await runner.run(transcription.id, signal, true);
    const row = await transcriptions.byId(transcription.id);
    if (row?.status === 'done') return row.cues ?? [];
    const error = row?.error ?? { code: 'PROVIDER_UNAVAILABLE', message: 'the transcription did not finish' };
    // An outage: the render runs again (its own retries); anything else is the edit's or the account's.
    if (error.code === 'PROVIDER_UNAVAILABLE') throw new Error(`Auto-captions: ${error.message}`);
    const code: ErrorCode = error.code in ERROR_STATUS ? (error.code as ErrorCode) : 'UNSUPPORTED_ASSET';
    throw new ApiError(code, `The captions of ${path} could not be made: ${error.message}`, { errors: { [path]: [error.message] } });
  }
}
