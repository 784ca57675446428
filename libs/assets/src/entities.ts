import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import { workspaceFilter } from '#libs/db';

export const ASSET_TYPES = ['image', 'video', 'audio', 'font', 'lottie', 'svg'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];
export const ASSET_STATUSES = ['ready', 'processing', 'uploading', 'failed'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

/** Why an asset failed (shown as `error`). */
export interface AssetErrorInfo {
  code: string;
  message: string;
}

/** What processing learnt beyond the §2 fields. */
export interface AssetMeta {
  lottie?: { frames: number; fps: number };
}

/**
 * An asset of the media library (§2 Asset, §3 Asset status, docs/assets.md). `workspaceId` null marks
 * the stock library the service seeds (read-only, readable by every workspace). `sizeBytes` holds the
 * room an upload reserved until its bytes are stored, then their size: the storage allowance is the
 * sum over a workspace's rows.
 */
export const Asset = defineEntity({
  name: 'Asset',
  tableName: 'asset',
  filters: workspaceFilter({ readable: (workspaceId) => ({ $or: [{ workspaceId }, { workspaceId: null }] }) }),
  indexes: [
    { properties: ['workspaceId', 'createdAt'] },
    { properties: ['workspaceId', 'status'] },
    { properties: ['status', 'updatedAt'] },
  ],
  properties: {
    id: p.string().primary().length(64),
    workspaceId: p.string().length(32).nullable(),
    type: p.string().length(8).$type<AssetType>(),
    status: p.string().length(10).$type<AssetStatus>(),
    /** The mode of the caller that made it (issue 28; stock items: live): a test caller deletes only test assets. */
    mode: p.string().length(4).$type<KeyMode>().default('live'),
    name: p.string().length(255),
    description: p.text().nullable(),
    folder: p.string().length(128).nullable(),
    tags: p.json<string[]>(),
    /** `,tag,tag,` lower-cased: what the `tags` filter matches. */
    tagsText: p.text(),
    /** Lower-cased name, description and tags: what `search` matches. */
    searchText: p.text(),
    mimeType: p.string().length(64),
    sizeBytes: p.bigint('number'),
    width: p.integer().nullable(),
    height: p.integer().nullable(),
    durationSec: p.double().nullable(),
    /** The served file (an SVG's is written by processing, sanitised). */
    fileKey: p.text(),
    /** Where the upload's bytes wait for processing when they are not served as they are (SVG). */
    uploadKey: p.text().nullable(),
    thumbnailKey: p.text().nullable(),
    waveformKey: p.text().nullable(),
    fontFamily: p.string().length(255).nullable(),
    meta: p.json<AssetMeta>().nullable(),
    error: p.json<AssetErrorInfo>().nullable(),
    /** Stock items: where the file comes from and its licence. */
    source: p.text().nullable(),
    licence: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    readyAt: p.datetime().nullable(),
  },
});
export type Asset = InferEntity<typeof Asset>;
