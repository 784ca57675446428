import type { PublishCheck } from '#libs/core';
import { categoryProblem } from './categories.js';
import type { FieldDefinition } from './fields.js';
import { checkTemplateEdit, mediaSources, placeholderNames } from './template-edit.js';

/** Whether a media URL answers; replaced in tests, and by the renderer's own fetcher one day. */
export type ReachabilityChecker = (url: string) => Promise<{ ok: true } | { ok: false; reason: string }>;

/**
 * The assets of the media library (by id) a template cannot use, each with the reason: an id that
 * names no asset its workspace may read (its own or the stock library's; the shared library's
 * templates, `workspaceId` null: the stock library's only), or an asset that is not ready.
 */
export type AssetChecker = (workspaceId: string | null, ids: readonly string[]) => Promise<{ id: string; reason: string }[]>;

/** How the review's media check reaches media: URLs over HTTP (or in storage), asset ids in the media library. */
export interface MediaCheckers {
  reachability: ReachabilityChecker;
  assets: AssetChecker;
}

export interface ReviewSubject {
  /** The template's workspace (null: the shared library), whose assets it may name. */
  workspaceId?: string | null;
  edit: unknown;
  fields: readonly FieldDefinition[];
  categoryId?: string | null;
  subcategoryId?: string | null;
}

export const REVIEW_CHECKS = ['category', 'edit-valid', 'timeline-not-empty', 'placeholders-defined', 'fields-referenced', 'media-reachable'] as const;
export type ReviewCheckName = (typeof REVIEW_CHECKS)[number];

export interface Review {
  passed: boolean;
  checks: PublishCheck[];
}

/** URLs probed at once. */
const PROBE_CONCURRENCY = 6;

async function probeAll(urls: readonly string[], probe: ReachabilityChecker): Promise<{ url: string; reason: string }[]> {
  const failures: { url: string; reason: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const url = urls[next++] as string;
      const result = await probe(url).catch((err: unknown) => ({ ok: false as const, reason: (err as Error).message }));
      if (!result.ok) failures.push({ url, reason: result.reason });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, urls.length) }, worker));
  return failures.sort((a, b) => urls.indexOf(a.url) - urls.indexOf(b.url));
}

function list(names: readonly string[]): string {
  return names.map((n) => `{{${n}}}`).join(', ');
}

/**
 * The publish review (decisions.md "done in the dashboard"): a valid main category, a valid edit, a
 * timeline that is not empty, every placeholder defined as a field and every field used by a
 * placeholder, every media file reachable and every asset named by id ready for the template's
 * workspace (sources from field defaults included; sources a render supplies are not known yet).
 * Every check runs and reports, so one answer lists all there is to fix.
 */
export async function reviewTemplate(t: ReviewSubject, media: MediaCheckers): Promise<Review> {
  const checks: PublishCheck[] = [];
  const add = (name: ReviewCheckName, passed: boolean, message: string) => checks.push({ name, passed, message });

  const category = categoryProblem(t.categoryId, t.subcategoryId, true);
  add('category', category === null, category ?? `Category ${t.categoryId}${t.subcategoryId ? ` / ${t.subcategoryId}` : ''}`);

  const parsed = checkTemplateEdit(t.edit, t.fields);
  if (parsed.ok) add('edit-valid', true, 'The edit spec is valid');
  else {
    const [path, messages] = Object.entries(parsed.errors)[0] ?? ['edit', ['is not valid']];
    add('edit-valid', false, `${path} ${messages[0]}`);
  }
  if (!parsed.ok) add('timeline-not-empty', false, 'Not checked: the edit spec is not valid');
  else add('timeline-not-empty', !parsed.empty, parsed.empty ? 'The timeline has no clips, so it has no duration' : 'The timeline has clips');

  const used = placeholderNames(t.edit);
  const keys = t.fields.map((f) => f.key);
  const undefinedNames = used.filter((n) => !keys.includes(n));
  const unused = keys.filter((k) => !used.includes(k));
  add('placeholders-defined', undefinedNames.length === 0, undefinedNames.length ? `Placeholders with no field: ${list(undefinedNames)}` : `Every placeholder is a field (${used.length})`);
  add('fields-referenced', unused.length === 0, unused.length ? `Fields no placeholder uses: ${unused.join(', ')}` : `Every field is used in the edit (${keys.length})`);

  if (!parsed.ok) add('media-reachable', false, 'Not checked: the edit spec is not valid');
  else {
    const { urls, assetIds } = mediaSources(parsed.edit);
    const [unreachable, unusable] = await Promise.all([
      probeAll(urls, media.reachability),
      assetIds.length ? media.assets(t.workspaceId ?? null, assetIds) : [],
    ]);
    const problems = [
      ...(unreachable.length ? [`Unreachable media: ${unreachable.map((f) => `${f.url} (${f.reason})`).join('; ')}`] : []),
      ...(unusable.length ? [`Assets that cannot be used: ${unusable.map((f) => `${f.id} (${f.reason})`).join('; ')}`] : []),
    ];
    const found = [`Every media file answered (${urls.length})`, ...(assetIds.length ? [`every asset is ready (${assetIds.length})`] : [])];
    add('media-reachable', problems.length === 0, problems.length ? problems.join('; ') : found.join('; '));
  }
  return { passed: checks.every((c) => c.passed), checks };
}
