import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { STOCK_ITEMS, stockAssetId, stockFilesDir } from '#libs/assets';
import { applyMerge, assertEdit, type EditSpec, type JsonValue } from '#libs/edit-spec';
import { categoryProblem } from '../categories.js';
import { Issues } from '../check.js';
import { readFieldDefinitions } from '../fields.js';
import { checkTemplateEdit, placeholderNames } from '../template-edit.js';
import { checkValues } from '../values.js';
import { libraryPreviewsDir, librarySeeds, STOCK_PICTURES } from './index.js';

// The seeded public library (issue 5): at least 8 image and 6 video templates, each a valid edit
// with a field schema, a category, installed fonts and only pictures of the stock library, named by
// asset id (issue 14: one copy of each picture, no URL stored in an edit).

const FONTS = ['Open Sans', 'Roboto', 'DejaVu Sans', 'DejaVu Serif', 'Liberation Sans', 'Liberation Serif', 'Noto Sans', 'Noto Serif', 'Noto Sans CJK SC', 'Noto Color Emoji'];
const seeds = librarySeeds();
const STOCK_ID = /"(ast_[A-Za-z0-9_]+)"/g;

/** What the renders module does before it parses an edit: each asset id becomes its file's URL. */
const resolvedIds = (value: JsonValue): JsonValue => JSON.parse(JSON.stringify(value).replace(STOCK_ID, '"https://media.test/files/a/$1/file"'));
const idsIn = (value: unknown): string[] => [...JSON.stringify(value).matchAll(STOCK_ID)].map((m) => m[1] as string);

/** Sample values for required fields without a default (what a caller would send). */
function sampleValues(seed: (typeof seeds)[number]): Record<string, string> {
  return Object.fromEntries(seed.fields.filter((f) => f.required && f.defaultValue === null).map((f) => [f.key, f.placeholder ?? 'Sample']));
}

describe('the template library', () => {
  it('holds at least 8 image and 6 video templates with stable, unique ids', () => {
    const kinds = seeds.map((s) => ['png', 'jpeg', 'pdf'].includes(String((s.edit.output as { format: string }).format)) ? 'image' : 'video');
    expect(kinds.filter((k) => k === 'image').length).toBeGreaterThanOrEqual(8);
    expect(kinds.filter((k) => k === 'video').length).toBeGreaterThanOrEqual(6);
    expect(new Set(seeds.map((s) => s.id)).size).toBe(seeds.length);
    for (const s of seeds) expect(s.id).toMatch(/^tpl_lib_[a-z0-9_]+$/);
    expect(seeds.some((s) => (s.edit.output as { format: string }).format === 'pdf')).toBe(true);
    expect(seeds.find((s) => s.id === 'tpl_lib_og_image')?.edit.output).toMatchObject({ size: { width: 1200, height: 630 } });
  });

  it.each(seeds.map((s) => [s.id, s] as const))('%s: valid schema, category, placeholders ↔ fields, and renders with its defaults', (_id, seed) => {
    const issues = new Issues();
    const read = readFieldDefinitions(seed.fields, seed.fieldGroups, issues);
    expect(issues.errors).toEqual({});
    expect(read.fields).toEqual(seed.fields);
    expect(categoryProblem(seed.categoryId, seed.subcategoryId, true)).toBeNull();
    expect(seed.tags.length).toBeGreaterThan(0);
    expect(new Set(placeholderNames(seed.edit))).toEqual(new Set(seed.fields.map((f) => f.key)));
    const checked = checkTemplateEdit(seed.edit, seed.fields);
    expect(checked.ok && !checked.empty).toBe(true);
    // What a render does: validate values, merge them, parse the result.
    const values = checkValues(seed, sampleValues(seed));
    expect(values.ok).toBe(true);
    const merged = applyMerge(seed.edit, values.ok ? values.values : {});
    expect(merged.unresolved).toEqual([]);
    const edit: EditSpec = assertEdit(resolvedIds(merged.value));
    const families = new Set<string>();
    for (const t of edit.timeline.tracks) for (const c of t.clips) if (c.asset.type === 'rich-text') families.add(c.asset.font.family);
    for (const family of families) expect(FONTS).toContain(family);
    // No URL is stored (SVG markup names its namespace); media are stock assets by id.
    const urls = `${JSON.stringify(seed.edit)}${JSON.stringify(seed.fields)}`.match(/https?:\/\/[^"\\\s]+/g) ?? [];
    expect(urls.filter((url) => !url.startsWith('http://www.w3.org/'))).toEqual([]);
  });

  it('uses only pictures of the stock library, each an image with its file bundled and its licence recorded', async () => {
    const used = new Set(seeds.flatMap((s) => [...idsIn(s.edit), ...idsIn(s.fields)]));
    const pictures = STOCK_PICTURES.map((slug) => stockAssetId(slug));
    expect([...used].sort()).toEqual([...pictures].sort());
    for (const slug of STOCK_PICTURES) {
      const item = STOCK_ITEMS.find((i) => i.slug === slug);
      expect(item).toMatchObject({ type: 'image', licence: 'CC0-1.0', file: { bundled: expect.any(String) } });
      const file = join(stockFilesDir(), (item?.file as { bundled: string }).bundled);
      expect((await sharp(file).metadata()).width).toBeGreaterThan(0);
    }
  });

  it('has a preview picture of every template', () => {
    const previews = readdirSync(libraryPreviewsDir());
    for (const seed of seeds) expect(previews).toContain(`${seed.id}.jpg`);
  });
});
