import type { FieldErrors } from '#libs/core';
import {
  applyMerge, ASSET_ID, clipCount, findPlaceholders, outputKind, outputSize, parseEdit,
  type EditSpec, type JsonValue,
} from '#libs/edit-spec';
import { isBlank, type FieldDefinition } from './fields.js';

/** Host of the sample media URLs that stand in for media fields without a default (`.invalid` never resolves). */
const STAND_IN_HOST = 'field-value.invalid';

/** Values that stand in for fields while a template's edit is validated (never stored). */
const SAMPLE_MEDIA: Record<'image' | 'video' | 'audio', string> = {
  image: `https://${STAND_IN_HOST}/sample.png`,
  video: `https://${STAND_IN_HOST}/sample.mp4`,
  audio: `https://${STAND_IN_HOST}/sample.mp3`,
};

/**
 * A stand-in per field: its default, else a sample of its type. Text fields without a default are
 * left out, so their placeholders stay as written: valid wherever text is expected, and named
 * ("a merge placeholder with no value") where the edit needs a number.
 */
export function standIns(fields: readonly FieldDefinition[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const f of fields) {
    if (!isBlank(f.defaultValue)) {
      out[f.key] = f.defaultValue;
      continue;
    }
    switch (f.type) {
      case 'image':
      case 'video':
      case 'audio':
        out[f.key] = SAMPLE_MEDIA[f.type];
        break;
      case 'number':
        out[f.key] = Math.max(f.config.min ?? 1, 1);
        break;
      case 'color':
        out[f.key] = '#000000';
        break;
      case 'boolean':
        out[f.key] = true;
        break;
      case 'select':
        out[f.key] = f.config.options?.[0] ?? '';
        break;
      case 'text':
        break;
    }
  }
  return out;
}

export interface TemplateGeometry {
  kind: 'image' | 'video';
  width: number;
  height: number;
  /** Reduced `W:H` (1200×630 → `40:21`). */
  aspectRatio: string;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export function ratioOf(width: number, height: number): string {
  const d = gcd(width, height) || 1;
  return `${width / d}:${height / d}`;
}

export function geometryOf(edit: EditSpec): TemplateGeometry {
  const { width, height } = outputSize(edit.output);
  return { kind: outputKind(edit.output.format), width, height, aspectRatio: ratioOf(width, height) };
}

export type TemplateEditCheck =
  | { ok: true; edit: EditSpec; geometry: TemplateGeometry; empty: boolean }
  | { ok: false; errors: FieldErrors };

/**
 * Parses a template's edit with its fields' stand-ins merged in (placeholders may sit anywhere). Media
 * sources may be asset ids (`ast_…`): the renders module swaps them for their files when it renders.
 */
export function checkTemplateEdit(rawEdit: unknown, fields: readonly FieldDefinition[], root = 'edit'): TemplateEditCheck {
  const merged = applyMerge(rawEdit, standIns(fields)).value;
  const result = parseEdit(merged, { root, assetIds: true });
  if (!result.ok) return result;
  return { ok: true, edit: result.edit, geometry: geometryOf(result.edit), empty: clipCount(result.edit) === 0 };
}

/** Placeholder names used in an edit (the `edit.merge` pairs excluded: they are defaults, not uses). */
export function placeholderNames(rawEdit: unknown): string[] {
  const body = rawEdit !== null && typeof rawEdit === 'object' && !Array.isArray(rawEdit) ? { ...(rawEdit as Record<string, unknown>), merge: undefined } : rawEdit;
  return findPlaceholders(body).map((u) => u.name);
}

/** The media files an edit uses: URLs fetched when it renders, and assets of the media library named by id. */
export interface MediaSources {
  urls: string[];
  assetIds: string[];
}

/**
 * Every media file an edit uses when rendered: image, video, audio and luma sources, SVG and caption
 * files given by URL or asset id, the soundtrack and fonts. A source that comes from a field without
 * a default (a stand-in; its value arrives with the render) is not listed.
 */
export function mediaSources(edit: EditSpec): MediaSources {
  const urls = new Set<string>();
  const assetIds = new Set<string>();
  const add = (src: string | undefined) => {
    if (!src || /\{\{/.test(src)) return;
    if (ASSET_ID.test(src)) assetIds.add(src);
    else if (/^https?:\/\//i.test(src) && new URL(src).hostname !== STAND_IN_HOST) urls.add(src);
  };
  for (const font of edit.timeline.fonts) add(font.src);
  add(edit.timeline.soundtrack?.src);
  for (const track of edit.timeline.tracks) {
    for (const clip of track.clips) {
      const a = clip.asset;
      if (a.type === 'image' || a.type === 'video' || a.type === 'audio' || a.type === 'luma' || a.type === 'svg' || a.type === 'caption') add(a.src);
    }
  }
  return { urls: [...urls], assetIds: [...assetIds] };
}
