import type { FieldErrors } from '#libs/core';
import { ASSET_LIMITS, tidyFolder, type AssetUploadFields } from './assets.service.js';

/** The text parts of an upload (§4.4) besides `file`. */
export const UPLOAD_FIELDS = ['tags', 'description', 'folder'] as const;

/**
 * §4.4/§8 upload fields: `tags` comma-separated (≤ 20, each 1–50 characters, kept lower-cased and
 * once), `description` ≤ 2000 characters, `folder` ≤ 128. Problems come back by path (`tags`, …).
 */
export function tidyUploadFields(raw: Partial<Record<(typeof UPLOAD_FIELDS)[number], string>>): { fields: AssetUploadFields; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const fail = (path: string, message: string) => (errors[path] ??= []).push(message);
  const control = /\p{Cc}/u;

  const tags = [...new Set((raw.tags ?? '').split(',').map((t) => t.trim().toLowerCase()).filter(Boolean))];
  if (tags.length > ASSET_LIMITS.tags) fail('tags', `At most ${ASSET_LIMITS.tags} tags (${tags.length} given)`);
  for (const tag of tags) {
    if (tag.length > ASSET_LIMITS.tagLength || control.test(tag)) fail('tags', `Tag "${tag.slice(0, 60)}" must be 1 to ${ASSET_LIMITS.tagLength} characters without control characters`);
  }

  const description = raw.description?.trim() ? raw.description.trim() : null;
  if (description && description.length > ASSET_LIMITS.description) fail('description', `description may hold at most ${ASSET_LIMITS.description} characters (${description.length} given)`);

  const folder = raw.folder !== undefined && tidyFolder(raw.folder) ? tidyFolder(raw.folder) : null;
  if (folder && (folder.length > ASSET_LIMITS.folder || control.test(folder) || folder.includes(','))) {
    fail('folder', `folder must be 1 to ${ASSET_LIMITS.folder} characters without commas or control characters`);
  }
  return { fields: { tags, description, folder }, errors };
}

/**
 * The name an asset is listed under, from the client's file name: its last path segment, control
 * characters dropped, at most 255 characters. It is only ever shown: files are stored under keys of
 * our own (docs/storage.md), so `../` or a long name reaches nothing.
 */
export function assetName(filename: string | undefined, fallback: string): string {
  const last = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = last.replace(/\p{Cc}/gu, '').trim();
  return (clean || fallback).slice(0, ASSET_LIMITS.name);
}
