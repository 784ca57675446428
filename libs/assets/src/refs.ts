import { validationFailed, type FieldErrors } from '#libs/core';
import { ASSET_ID } from '#libs/edit-spec';
import type { StorageDriver } from '#libs/storage';
import type { AssetRef, AssetsService } from './assets.service.js';
import type { AssetType } from './entities.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A `src` of an edit that may name an asset, the asset types it takes, and its path. */
interface SrcSlot {
  holder: Record<string, Json>;
  path: string;
  accepts: readonly AssetType[];
}

/** The asset types each clip asset type's `src` takes. */
const CLIP_ACCEPTS: Record<string, readonly AssetType[]> = {
  image: ['image', 'svg'],
  video: ['video'],
  audio: ['audio', 'video'],
  luma: ['image', 'video'],
  svg: ['svg'],
  lottie: ['lottie'],
};

const isObject = (v: Json | undefined): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every `src` of an edit (as sent, before its validation) that could name an asset. */
function srcSlots(edit: Json, root: string): SrcSlot[] {
  const slots: SrcSlot[] = [];
  if (!isObject(edit) || !isObject(edit.timeline)) return slots;
  const t = edit.timeline;
  const at = `${root}.timeline`;
  if (Array.isArray(t.fonts)) t.fonts.forEach((f, i) => isObject(f) && slots.push({ holder: f, path: `${at}.fonts[${i}]`, accepts: ['font'] }));
  if (isObject(t.soundtrack)) slots.push({ holder: t.soundtrack, path: `${at}.soundtrack`, accepts: ['audio', 'video'] });
  if (Array.isArray(t.tracks)) {
    t.tracks.forEach((track, i) => {
      if (!isObject(track) || !Array.isArray(track.clips)) return;
      track.clips.forEach((clip, j) => {
        if (!isObject(clip) || !isObject(clip.asset) || typeof clip.asset.type !== 'string') return;
        const accepts = CLIP_ACCEPTS[clip.asset.type];
        if (accepts) slots.push({ holder: clip.asset, path: `${at}.tracks[${i}].clips[${j}].asset`, accepts });
      });
    });
  }
  return slots;
}

/**
 * Renders use the media library (docs/assets.md "Renders"): an edit's `src` may be an asset id
 * (`ast_…`) or the URL of an asset's file; either must name a `ready` asset of the workspace or of
 * the stock library, of a type the slot takes, else 422 VALIDATION_FAILED naming the path. Ids are
 * replaced by the file's URL, which the renderers map back to its storage key (they read stored files
 * directly, never through the public URL). Other URLs are left as they are.
 */
export class AssetRefs {
  constructor(
    private readonly assets: Pick<AssetsService, 'findMany'>,
    private readonly storage: Pick<StorageDriver, 'url' | 'keyFromUrl'>,
  ) {}

  /** The asset a `src` names (by id or by one of its files' URLs), or undefined when it names none. */
  private named(src: string): { id: string; key?: string } | undefined {
    if (ASSET_ID.test(src)) return { id: src };
    if (!/^https?:\/\//i.test(src)) return undefined;
    const key = this.storage.keyFromUrl(src);
    const m = key ? /^a\/([^/]+)\//.exec(key) : null;
    return m && key ? { id: m[1] as string, key } : undefined;
  }

  /**
   * Resolves the asset references of `edit` (a copy is answered; the input is not changed) and
   * answers the URL each id became, for values that travel beside the edit (aspect-ratio rules).
   */
  async resolve(workspaceId: string, edit: Json, root: string): Promise<{ edit: Json; urls: Map<string, string> }> {
    const copy = structuredClone(edit);
    const refs = srcSlots(copy, root).flatMap((slot) => {
      const src = slot.holder.src;
      const named = typeof src === 'string' ? this.named(src.trim()) : undefined;
      return named ? [{ slot, ...named }] : [];
    });
    const urls = new Map<string, string>();
    if (!refs.length) return { edit: copy, urls };
    const found = await this.assets.findMany(workspaceId, refs.map((r) => r.id));
    const errors: FieldErrors = {};
    for (const { slot, id, key } of refs) {
      const problem = this.problem(found.get(id), id, key, slot.accepts);
      if (problem) {
        (errors[`${slot.path}.src`] ??= []).push(problem);
        continue;
      }
      const asset = found.get(id) as AssetRef;
      if (!key) {
        const url = this.storage.url(asset.fileKey);
        urls.set(id, url);
        slot.holder.src = url;
      }
    }
    if (Object.keys(errors).length) throw validationFailed(errors, 'The edit names assets it cannot use');
    return { edit: copy, urls };
  }

  private problem(asset: AssetRef | undefined, id: string, key: string | undefined, accepts: readonly AssetType[]): string | undefined {
    if (!asset) return `Asset ${id} does not exist`;
    if (asset.status !== 'ready') return `Asset ${id} is ${asset.status}${asset.status === 'failed' ? '' : ' (wait for asset.ready)'}; only ready assets can be used in renders`;
    if (key && ![asset.fileKey, asset.thumbnailKey, asset.waveformKey].includes(key)) return `Asset ${id} has no such file`;
    if (!accepts.includes(asset.type)) return `Asset ${id} is ${asset.type === 'image' || asset.type === 'audio' ? `an ${asset.type}` : `a ${asset.type}`}; this src takes ${accepts.join(' or ')}`;
    return undefined;
  }
}
