import { randomBytes } from 'node:crypto';
import type { EntityManager, FilterQuery, MikroORM } from '@mikro-orm/core';
import { ApiError, assertModeMayAct, likeTerm, newId, type KeyMode, type ListQuery, type ListSpec, type SortOrder } from '#libs/core';
import { underWorkspaceLock, type Plan } from '#libs/workspaces';
import { allWorkspaces, forWorkspace, queries, retryBusy, type Tables } from '#libs/db';
import { writeEvent } from '#libs/events';
import type { StorageDriver } from '#libs/storage';
import { Asset, ASSET_STATUSES, ASSET_TYPES, type AssetErrorInfo, type AssetMeta, type AssetStatus, type AssetType } from './entities.js';

export const ASSET_SORTS = ['createdAt', 'name', 'sizeBytes', 'type', 'durationSec'] as const;
export type AssetSort = (typeof ASSET_SORTS)[number];

/** §4.4 limits (§8) and the shapes of folder names and tags. */
export const ASSET_LIMITS = { tags: 20, tagLength: 50, description: 2000, folder: 128, name: 255 } as const;
const TAG = /^[^\p{Cc},]{1,50}$/u;
const FOLDER = /^[^\p{Cc},]{1,128}$/u;

/**
 * §4.4 list query. `tags` names several tags that must all be on an asset (docs/decisions.md
 * "Assets"); `folder` several folders, any of them; `scope` workspace (default), global or all.
 */
export const ASSET_LIST: ListSpec<AssetSort> = {
  sort: ASSET_SORTS,
  defaultSort: 'createdAt',
  limit: { default: 24, max: 100 },
  sets: {
    scope: ['workspace', 'global', 'all'],
    type: ASSET_TYPES,
    status: ASSET_STATUSES,
    folder: { pattern: FOLDER, describe: 'folder names of 1 to 128 characters without commas or control characters' },
    tags: { pattern: TAG, describe: 'tags of 1 to 50 characters without commas or control characters' },
  },
  search: { maxLength: 128 },
};

/** §4.4 "default desc for dates and counts": names and types ascend. */
const NATURAL_ORDER: Record<AssetSort, SortOrder> = { createdAt: 'desc', name: 'asc', sizeBytes: 'desc', type: 'asc', durationSec: 'desc' };

/** What a render, a template review or a transcription checks of an asset it names (AssetsService.findMany). */
export type AssetRef = Pick<Asset, 'id' | 'workspaceId' | 'type' | 'status' | 'fileKey' | 'thumbnailKey' | 'waveformKey' | 'error'>;

/** An asset id of the stock library (`ast_lib_<slug>`), stable across seeds. */
export function stockAssetId(slug: string): string {
  return `ast_lib_${slug.replace(/-/g, '_')}`;
}

/** The folder of an asset's stored files: deleting it removes them all. */
export function assetPrefix(id: string): string {
  return `a/${id}/`;
}

/** A key under the asset's folder that cannot be derived from its id (the URL is the capability). */
export function assetKey(id: string, suffix: string): string {
  return `${assetPrefix(id)}${randomBytes(16).toString('base64url')}${suffix}`;
}

/** The fields a client sets at upload (§4.4), tidied. */
export interface AssetUploadFields {
  tags: string[];
  description: string | null;
  folder: string | null;
}

export interface NewUpload {
  /** The caller's mode (issue 28). */
  mode: KeyMode;
  name: string;
  type: AssetType;
  mimeType: string;
  ext: string;
  /** The room held for the bytes until their size is known. */
  reserveBytes: number;
}

/** What processing found, written when the asset becomes ready. */
export interface AssetFindings {
  width: number | null;
  height: number | null;
  durationSec: number | null;
  fontFamily?: string | null;
  thumbnailKey?: string | null;
  waveformKey?: string | null;
  meta?: AssetMeta | null;
  /** The served file when processing wrote a new one (an SVG, sanitised). */
  fileKey?: string;
  /** What processing found the file to be when its leading bytes could not tell (an mp4 holding only audio). */
  type?: AssetType;
  mimeType?: string;
}

const assets = queries<Tables<typeof Asset>>();

/** Ids a `findMany` statement names at most: more are read in several. */
const IDS_A_STATEMENT = 16;

/**
 * `findMany`'s statement for `n` ids (1 to IDS_A_STATEMENT), compiled once (`shaped`): every still that
 * names a library picture asks, and building it with Kysely per call cost ~0.4 ms a still on a 2-core
 * VM, as much as the rest of the media library's check. The workspace's assets and the stock
 * library's: the rule of Asset's workspace filter written out, hence declared across workspaces.
 */
const assetsByIds = (n: number) => assets.shaped(`assets by ${n} ids`, (db, p: Record<string, string>) => db.selectFrom('asset')
  .select(['id', 'workspace_id', 'type', 'status', 'file_key', 'thumbnail_key', 'waveform_key', 'error'])
  .where('id', 'in', Array.from({ length: n }, (_, i) => p[`id${i}`] as string))
  .where((eb) => eb.or([eb('workspace_id', '=', p.workspaceId as string), eb('workspace_id', 'is', null)])), { allWorkspaces: true });

/** Lower-cased name, description and tags: the `searchText` column `search` matches. */
export function searchTextOf(name: string, description: string | null, tags: readonly string[]): string {
  return [name, description ?? '', ...tags].join('\n').toLowerCase();
}

function notFound(id: string): ApiError {
  return new ApiError('ASSET_NOT_FOUND', `Asset ${id} does not exist`);
}

/**
 * The media library (§2 Asset, §4.4, docs/assets.md): the records, the storage allowance and the
 * status changes with their events. Bytes move through the storage driver; the API streams uploads
 * in (`reserve` → `stored` | `discard`) and the worker processes them (`processing` → `ready` |
 * `failed`).
 */
export class AssetsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly storage: StorageDriver,
  ) {}

  // --- reads -------------------------------------------------------------------------------------

  /** §4.4 list: the workspace's assets, the stock library, or both (`scope`). */
  async list(workspaceId: string, q: ListQuery<AssetSort>, opts: { orderGiven?: boolean } = {}): Promise<{ rows: Asset[]; total: number }> {
    const scope = q.sets.scope ?? ['workspace'];
    const whose = scope.includes('all') || (scope.includes('workspace') && scope.includes('global'))
      ? { $or: [{ workspaceId }, { workspaceId: null }] }
      : scope.includes('global') ? { workspaceId: null } : { workspaceId };
    const and: FilterQuery<Asset>[] = [whose];
    if (q.sets.type) and.push({ type: { $in: q.sets.type as AssetType[] } });
    if (q.sets.status) and.push({ status: { $in: q.sets.status as AssetStatus[] } });
    if (q.sets.folder) and.push({ folder: { $in: q.sets.folder.map(tidyFolder) } });
    for (const tag of q.sets.tags ?? []) and.push({ tagsText: { $like: likeTerm(`,${tag.trim()},`) } });
    if (q.search) and.push({ searchText: { $like: likeTerm(q.search) } });
    const order = opts.orderGiven ? q.order : NATURAL_ORDER[q.sort];
    const [rows, total] = await forWorkspace(this.orm, workspaceId).findAndCount(Asset, { $and: and }, {
      orderBy: [{ [q.sort]: order }, { id: order }] as never,
      limit: q.limit,
      offset: q.offset,
    });
    return { rows, total };
  }

  /** An asset the workspace may read (its own, or the stock library's); else 404 ASSET_NOT_FOUND. */
  async get(workspaceId: string, id: string): Promise<Asset> {
    const row = await forWorkspace(this.orm, workspaceId).findOne(Asset, { id });
    if (!row) throw notFound(id);
    return row;
  }

  /** The assets of `ids` the workspace may read, by id (renders check them: only `ready` ones render). */
  async findMany(workspaceId: string, ids: readonly string[]): Promise<Map<string, AssetRef>> {
    if (!ids.length) return new Map();
    // Plain rows from prepared statements (assetsByIds; the ORM's find and its entities took ~1 ms).
    const unique = [...new Set(ids)];
    const rows = [];
    for (let from = 0; from < unique.length; from += IDS_A_STATEMENT) {
      const part = unique.slice(from, from + IDS_A_STATEMENT);
      const params: Record<string, string> = { workspaceId };
      part.forEach((id, i) => { params[`id${i}`] = id; });
      rows.push(...(await assetsByIds(part.length).all(this.orm.em, params)));
    }
    return new Map(rows.map((r) => [r.id, {
      id: r.id, workspaceId: r.workspace_id ?? null, type: r.type, status: r.status, fileKey: r.file_key,
      thumbnailKey: r.thumbnail_key ?? null, waveformKey: r.waveform_key ?? null, error: r.error ?? null,
    }]));
  }

  /** An asset by id whatever its workspace (the worker's read by a job's id). */
  async byId(id: string): Promise<Asset | null> {
    return allWorkspaces(this.orm).findOne(Asset, { id });
  }

  /** §2 Asset as the API shows it, with the house fields (docs/assets.md). */
  view(row: Asset) {
    const url = (key: string | null | undefined) => (key ? this.storage.url(key) : null);
    return {
      id: row.id,
      type: row.type,
      scope: row.workspaceId === null ? 'global' : 'workspace',
      mode: row.mode,
      name: row.name,
      description: row.description ?? null,
      url: this.storage.url(row.fileKey),
      mimeType: row.mimeType,
      sizeBytes: row.sizeBytes,
      width: row.width ?? null,
      height: row.height ?? null,
      durationSec: row.durationSec ?? null,
      tags: row.tags,
      folder: row.folder ?? null,
      status: row.status,
      error: row.error ?? null,
      thumbnailUrl: url(row.thumbnailKey),
      waveformUrl: url(row.waveformKey),
      fontFamily: row.fontFamily ?? null,
      ...(row.meta?.lottie ? { frames: row.meta.lottie.frames, fps: row.meta.lottie.fps } : {}),
      ...(row.workspaceId === null ? { source: row.source ?? null, licence: row.licence ?? null } : {}),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  /** Bytes the workspace's assets hold (uploads in flight count what they reserved). */
  async usedBytes(workspaceId: string, em: EntityManager = forWorkspace(this.orm, workspaceId)): Promise<number> {
    const row = await assets.one(em, (db) => db.selectFrom('asset').select((eb) => eb.fn.sum<number | string | null>('size_bytes').as('n')).where('workspace_id', '=', workspaceId));
    return Number(row?.n ?? 0);
  }

  // --- uploads (the API) -------------------------------------------------------------------------

  /**
   * 402 LIMIT_STORAGE now if `bytes` cannot fit, before a transfer whose size is announced (a Drive
   * import): nothing is fetched for a file that could not be kept. Not a reservation: `reserve`, once
   * the bytes are here, decides under the lock.
   */
  async assertRoom(workspaceId: string, plan: Plan, bytes: number): Promise<void> {
    const used = await this.usedBytes(workspaceId);
    if (used + bytes > plan.storageBytes) throw storageFull(plan, used, bytes);
  }

  /**
   * The record of an upload, `uploading`, holding `reserveBytes` of the plan's storage allowance
   * (402 LIMIT_STORAGE when they do not fit). The workspace's row is locked first (PostgreSQL: a row
   * lock; SQLite: the write lock), so concurrent uploads are counted one after another and the
   * allowance is never overshot.
   */
  async reserve(workspaceId: string, plan: Plan, upload: NewUpload): Promise<Asset> {
    const id = newId('asset');
    return underWorkspaceLock(this.orm, workspaceId, async (em) => {
      const used = await this.usedBytes(workspaceId, em);
      if (used + upload.reserveBytes > plan.storageBytes) throw storageFull(plan, used, upload.reserveBytes);
      const fileKey = assetKey(id, `.${upload.ext}`);
      const row = em.create(Asset, {
        id, workspaceId, type: upload.type, status: 'uploading', mode: upload.mode, name: upload.name, description: null, folder: null, tags: [],
        tagsText: tagsTextOf([]), searchText: searchTextOf(upload.name, null, []), mimeType: upload.mimeType, sizeBytes: upload.reserveBytes,
        fileKey,
        // An SVG is served only once processing has sanitised it: its bytes wait under a key of their own.
        uploadKey: upload.type === 'svg' ? `${fileKey}.upload` : null,
        thumbnailKey: null, waveformKey: null, fontFamily: null, meta: null, error: null, source: null, licence: null, readyAt: null,
      });
      await em.flush();
      return row;
    });
  }

  /** The bytes are stored: `processing`, with their size and the client's fields. */
  async stored(row: Asset, sizeBytes: number, fields: AssetUploadFields): Promise<Asset> {
    const changes = {
      status: 'processing' as const, sizeBytes, tags: fields.tags, tagsText: tagsTextOf(fields.tags), description: fields.description,
      folder: fields.folder, searchText: searchTextOf(row.name, fields.description, fields.tags), updatedAt: new Date(),
    };
    await retryBusy(() => forWorkspace(this.orm, row.workspaceId as string).nativeUpdate(Asset, { id: row.id, status: 'uploading' }, changes));
    return Object.assign(row, changes);
  }

  /** An upload that did not complete: its record and whatever bytes reached storage go (the room is given back). */
  async discard(row: Asset): Promise<void> {
    await retryBusy(() => forWorkspace(this.orm, row.workspaceId as string).nativeDelete(Asset, { id: row.id }));
    await this.storage.deletePrefix(assetPrefix(row.id)).catch(() => undefined);
  }

  /**
   * §4.4 delete: the record, then the files (a sweeper removes files whose record is gone if this stops
   * half-way). A test caller deletes only test-mode assets (403 LIVE_MODE_REQUIRED).
   */
  async delete(workspaceId: string, callerMode: KeyMode, id: string): Promise<void> {
    const em = forWorkspace(this.orm, workspaceId);
    const row = await em.findOne(Asset, { id });
    if (!row) throw notFound(id);
    if (row.workspaceId === null) throw new ApiError('ASSET_READ_ONLY', `Asset ${id} is in the stock library, which is read-only`);
    assertModeMayAct(callerMode, row.mode, 'asset');
    await retryBusy(() => em.nativeDelete(Asset, { id, workspaceId }));
    await this.storage.deletePrefix(assetPrefix(id)).catch(() => undefined);
  }

  // --- processing (the worker) -------------------------------------------------------------------

  /** `ready` with what processing found, and `asset.ready` in the same transaction; false when the asset is gone or settled. */
  async markReady(id: string, found: AssetFindings): Promise<boolean> {
    return this.settle(id, 'asset.ready', {
      status: 'ready', width: found.width, height: found.height, durationSec: found.durationSec, fontFamily: found.fontFamily ?? null,
      thumbnailKey: found.thumbnailKey ?? null, waveformKey: found.waveformKey ?? null, meta: found.meta ?? null,
      ...(found.fileKey ? { fileKey: found.fileKey } : {}), ...(found.type ? { type: found.type, mimeType: found.mimeType } : {}),
      uploadKey: null, readyAt: new Date(),
    });
  }

  /** `failed` with the reason, and `asset.failed` in the same transaction; false when the asset is gone or settled. */
  async markFailed(id: string, error: AssetErrorInfo): Promise<boolean> {
    return this.settle(id, 'asset.failed', { status: 'failed', error });
  }

  private settle(id: string, type: 'asset.ready' | 'asset.failed', changes: Partial<Asset>): Promise<boolean> {
    return retryBusy(() => allWorkspaces(this.orm).fork().transactional(async (em) => {
      const won = await em.nativeUpdate(Asset, { id, status: 'processing' }, { ...changes, updatedAt: new Date() });
      if (won === 0) return false;
      const row = await em.findOneOrFail(Asset, { id });
      if (row.workspaceId) await writeEvent(em, row.workspaceId, type, this.view(row), { mode: row.mode });
      return true;
    }));
  }

  /**
   * Stored folders (`a/<id>/`) no record owns, last written before `before` (an upload that stopped
   * before its record was written, a delete that stopped after it): removed. Answers their ids.
   */
  async sweepOrphans(before: Date): Promise<string[]> {
    const newest = new Map<string, number>();
    for await (const o of this.storage.list('a/')) {
      const id = o.key.split('/')[1];
      if (id) newest.set(id, Math.max(newest.get(id) ?? 0, o.modifiedAt.getTime()));
    }
    const old = [...newest].filter(([, at]) => at < before.getTime()).map(([id]) => id);
    const orphans: string[] = [];
    for (let i = 0; i < old.length; i += 500) {
      const batch = old.slice(i, i + 500);
      const owned = new Set((await allWorkspaces(this.orm).find(Asset, { id: { $in: batch } }, { fields: ['id'] })).map((r) => r.id));
      for (const id of batch.filter((b) => !owned.has(b))) {
        await this.storage.deletePrefix(assetPrefix(id));
        orphans.push(id);
      }
    }
    return orphans;
  }

  /** Assets `processing` since before `before` (their job may be lost: Redis restarted without its data). */
  async stalledProcessing(before: Date): Promise<string[]> {
    return (await allWorkspaces(this.orm).find(Asset, { status: 'processing', updatedAt: { $lt: before } }, { fields: ['id'], limit: 500 })).map((r) => r.id);
  }

  /** Uploads that stopped half-way (`uploading` since before `before`): records and bytes removed. */
  async sweepStalledUploads(before: Date): Promise<string[]> {
    const rows = await allWorkspaces(this.orm).find(Asset, { status: 'uploading', updatedAt: { $lt: before } }, { limit: 500 });
    for (const row of rows) await this.discard(row);
    return rows.map((r) => r.id);
  }
}

/** `,a,b,` lower-cased: the `tagsText` column the `tags` filter matches `,tag,` inside. */
export function tagsTextOf(tags: readonly string[]): string {
  return `,${tags.map((t) => t.toLowerCase()).join(',')},`;
}

/** Folder names are kept as given, without surrounding spaces and slashes. */
export function tidyFolder(folder: string): string {
  return folder.trim().replace(/^\/+|\/+$/g, '');
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(n % 1024 ** 3 === 0 ? 0 : 1)} GB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${n} bytes`;
}

function storageFull(plan: Plan, used: number, needed: number): ApiError {
  return new ApiError('LIMIT_STORAGE', `The ${plan.name} plan allows ${formatBytes(plan.storageBytes)} of stored media and the workspace uses ${formatBytes(used)}; this upload needs ${formatBytes(needed)}. Delete assets or change plan`, {
    data: { limitBytes: plan.storageBytes, usedBytes: used, neededBytes: needed },
  });
}
