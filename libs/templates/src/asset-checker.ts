import type { AssetRef, AssetsService } from '#libs/assets';
import type { AssetChecker } from './review.js';

/**
 * The template review's check of asset ids: each must name a ready asset the template's workspace may
 * read (its own or the stock library's; the shared library's templates: the stock library's only).
 */
export function templateAssets(assets: AssetsService): AssetChecker {
  return async (workspaceId, ids) => {
    const found = workspaceId !== null
      ? await assets.findMany(workspaceId, ids)
      : new Map((await Promise.all(ids.map((id) => assets.byId(id)))).flatMap((a): [string, AssetRef][] => (a?.workspaceId === null ? [[a.id, a]] : [])));
    return ids.flatMap((id) => {
      const asset = found.get(id);
      if (!asset) return [{ id, reason: `no asset of ${workspaceId !== null ? 'this workspace or ' : ''}the stock library has this id` }];
      if (asset.status === 'failed') return [{ id, reason: `failed processing (${asset.error?.message ?? 'no reason recorded'})` }];
      if (asset.status !== 'ready') return [{ id, reason: `is ${asset.status}; publish once it is ready (asset.ready)` }];
      return [];
    });
  };
}
