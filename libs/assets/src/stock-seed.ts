import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { MikroORM } from '@mikro-orm/core';
import { allWorkspaces, retryBusy } from '#libs/db';
import { ASSET_HEAD_BYTES, detectAssetType } from '#libs/media';
import type { StorageDriver } from '#libs/storage';
import { assetPrefix, searchTextOf, stockAssetId, tagsTextOf } from './assets.service.js';
import { Asset } from './entities.js';
import { STOCK_ITEMS, stockFilesDir, type StockItem } from './stock.js';

export interface StockSeedResult {
  /** Items stored (new or changed) and handed to processing. */
  queued: string[];
  /** Items whose file is missing here (a Debian package not installed) or is not its declared type. */
  skipped: string[];
  /** Rows of items no longer in the catalog, removed. */
  removed: string[];
}

/**
 * Seeds the stock (`global`) library from the catalog (libs/assets/src/stock.ts), idempotently: an
 * item whose stored file has the same size keeps its record (its descriptive fields refreshed); a
 * new or changed one is stored under `a/<ast_lib_…>/<file name>` and queued for processing, like an
 * upload (`enqueue`), so its dimensions, durations, thumbnails and families come from the same code.
 * Several API processes may start at once: every write is an upsert by the item's stable id.
 */
export async function seedStock(orm: MikroORM, storage: StorageDriver, enqueue: (assetId: string, run: string) => Promise<void>, items: readonly StockItem[] = STOCK_ITEMS): Promise<StockSeedResult> {
  const em = allWorkspaces(orm);
  const result: StockSeedResult = { queued: [], skipped: [], removed: [] };
  const existing = new Map((await em.find(Asset, { workspaceId: null })).map((r) => [r.id, r]));
  const dir = stockFilesDir();
  for (const item of items) {
    const path = 'debian' in item.file ? item.file.debian : join(dir, item.file.bundled);
    const id = stockAssetId(item.slug);
    if (!existsSync(path)) {
      result.skipped.push(id);
      continue;
    }
    const bytes = await readFile(path);
    const detected = detectAssetType(bytes.subarray(0, ASSET_HEAD_BYTES));
    if (!detected || detected.type !== item.type) {
      result.skipped.push(id);
      continue;
    }
    const fileKey = `${assetPrefix(id)}${basename(path).replace(/[^A-Za-z0-9._-]/g, '_')}`;
    const described = {
      name: item.name, description: item.description, folder: item.folder, tags: item.tags, tagsText: tagsTextOf(item.tags),
      searchText: searchTextOf(item.name, item.description, item.tags), source: item.source, licence: item.licence,
    };
    const row = existing.get(id);
    if (row && row.sizeBytes === bytes.length && row.fileKey === fileKey && row.status !== 'failed') {
      await retryBusy(() => em.nativeUpdate(Asset, { id }, described));
      continue;
    }
    const uploadKey = item.type === 'svg' ? `${fileKey}.upload` : null;
    await storage.put(uploadKey ?? fileKey, bytes);
    const record = {
      ...described, workspaceId: null, type: detected.type, status: 'processing' as const, mimeType: detected.mimeType, sizeBytes: bytes.length,
      width: null, height: null, durationSec: null, fileKey, uploadKey, thumbnailKey: null, waveformKey: null, fontFamily: null, meta: null,
      error: null, readyAt: null, updatedAt: new Date(),
    };
    await retryBusy(async () => {
      if ((await em.nativeUpdate(Asset, { id }, record)) === 0) {
        await em.fork().upsert(Asset, { id, ...record, createdAt: new Date() });
      }
    });
    await enqueue(id, `${id}-${bytes.length}`);
    result.queued.push(id);
  }
  const kept = new Set(items.map((i) => stockAssetId(i.slug)));
  for (const id of existing.keys()) {
    if (kept.has(id)) continue;
    await retryBusy(() => em.nativeDelete(Asset, { id, workspaceId: null }));
    await storage.deletePrefix(assetPrefix(id)).catch(() => undefined);
    result.removed.push(id);
  }
  return result;
}
