import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { applyMerge, assertEdit, type EditSpec } from '#libs/edit-spec';
import { categoryProblem } from '../categories.js';
import { Issues } from '../check.js';
import { readFieldDefinitions } from '../fields.js';
import { checkTemplateEdit, placeholderNames } from '../template-edit.js';
import { checkValues } from '../values.js';
import { LIBRARY_MEDIA, libraryMediaDir, librarySeeds } from './index.js';

// The seeded public library (issue 5): at least 8 image and 6 video templates, each a valid edit
// with a field schema, a category and only bundled, licensed media and installed fonts.

const FONTS = ['Open Sans', 'Roboto', 'DejaVu Sans', 'DejaVu Serif', 'Liberation Sans', 'Liberation Serif', 'Noto Sans', 'Noto Serif', 'Noto Sans CJK SC', 'Noto Color Emoji'];
const base = 'https://media.test/files/library';
const seeds = librarySeeds((file) => `${base}/${file}`);

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
    const edit: EditSpec = assertEdit(merged.value);
    const families = new Set<string>();
    for (const t of edit.timeline.tracks) for (const c of t.clips) if (c.asset.type === 'rich-text') families.add(c.asset.font.family);
    for (const family of families) expect(FONTS).toContain(family);
    const text = JSON.stringify(seed.edit);
    for (const url of text.match(/https?:\/\/[^"\\]+/g) ?? []) {
      if (url.startsWith('http://www.w3.org/')) continue;
      expect(url.startsWith(`${base}/`)).toBe(true);
    }
  });

  it('bundles every media file it uses, each listed with its licence', async () => {
    const dir = libraryMediaDir();
    const licences = readFileSync(join(dir, '..', 'MEDIA-LICENCES.md'), 'utf8');
    const used = new Set(seeds.flatMap((s) => JSON.stringify(s.edit).concat(JSON.stringify(s.fields)).match(new RegExp(`${base}/([a-z0-9.-]+)`, 'g')) ?? []).map((u) => u.slice(base.length + 1)));
    for (const file of used) expect(LIBRARY_MEDIA).toContain(file);
    for (const file of LIBRARY_MEDIA) {
      expect(existsSync(join(dir, file))).toBe(true);
      expect(licences).toContain(`| ${file} |`);
      const meta = await sharp(join(dir, file)).metadata();
      expect(meta.width).toBeGreaterThan(0);
    }
  });
});
