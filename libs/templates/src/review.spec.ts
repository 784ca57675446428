import { Issues } from './check.js';
import { readFieldDefinitions } from './fields.js';
import { reviewTemplate, type AssetChecker, type ReachabilityChecker } from './review.js';
import { checkTemplateEdit, mediaSources, ratioOf } from './template-edit.js';

// decisions.md "done in the dashboard": the publish review and its checks; §2 aspectRatio W:H.

const fieldsOf = (raw: unknown[]) => {
  const issues = new Issues();
  const { fields } = readFieldDefinitions(raw, undefined, issues);
  expect(issues.errors).toEqual({});
  return fields;
};

const edit = {
  timeline: {
    background: '{{BG}}',
    tracks: [
      { clips: [{ asset: { type: 'rich-text', text: '{{TITLE}}' }, start: 0, length: 3 }] },
      { clips: [{ asset: { type: 'image', src: '{{PHOTO}}' }, start: 0, length: 3 }] },
      { clips: [{ asset: { type: 'image', src: 'https://cdn.test/fixed.png' }, start: 0, length: 3 }] },
    ],
  },
  output: { format: 'png', size: { width: 1200, height: 630 } },
};

describe('template edits with placeholders', () => {
  it('parse with stand-ins and report the geometry with a reduced ratio', () => {
    const fields = fieldsOf([{ key: 'TITLE' }, { key: 'PHOTO', type: 'image', required: true }, { key: 'BG', type: 'color', defaultValue: '#ffffff' }]);
    const r = checkTemplateEdit(edit, fields);
    expect(r.ok && r.geometry).toEqual({ kind: 'image', width: 1200, height: 630, aspectRatio: '40:21' });
    // The stand-in of a media field without a default is not a source to probe; fixed ones are.
    expect(r.ok && mediaSources(r.edit)).toEqual({ urls: ['https://cdn.test/fixed.png'], assetIds: [] });
    expect(ratioOf(1920, 1080)).toBe('16:9');
  });

  it('names a placeholder left where a value of another type is needed', () => {
    const r = checkTemplateEdit(edit, fieldsOf([{ key: 'TITLE' }, { key: 'PHOTO', type: 'image', required: true }]));
    expect(r.ok ? null : r.errors['edit.timeline.background']?.[0]).toContain('(a merge placeholder with no value)');
  });
});

describe('reviewTemplate', () => {
  const reachable: ReachabilityChecker = async () => ({ ok: true });
  const noAssets: AssetChecker = async () => {
    throw new Error('no asset id to check');
  };

  it('passes a complete template and lists every check', async () => {
    const fields = fieldsOf([{ key: 'TITLE' }, { key: 'PHOTO', type: 'image', defaultValue: 'https://cdn.test/p.png' }, { key: 'BG', type: 'color', defaultValue: '#ffffff' }]);
    const probed: string[] = [];
    const review = await reviewTemplate({ edit, fields, categoryId: 'web', subcategoryId: 'og-image' }, { reachability: async (url) => (probed.push(url), { ok: true }), assets: noAssets });
    expect(review.passed).toBe(true);
    expect(review.checks.map((c) => c.name)).toEqual(['category', 'edit-valid', 'timeline-not-empty', 'placeholders-defined', 'fields-referenced', 'media-reachable']);
    expect(probed.sort()).toEqual(['https://cdn.test/fixed.png', 'https://cdn.test/p.png']);
  });

  it('reports undefined placeholders, unused fields, unreachable media and a bad category together', async () => {
    const fields = fieldsOf([{ key: 'TITLE' }, { key: 'UNUSED' }, { key: 'BG', type: 'color', defaultValue: '#ffffff' }]);
    const review = await reviewTemplate({ edit, fields, categoryId: 'web', subcategoryId: 'intro' }, { reachability: async (url) => ({ ok: false, reason: `HTTP 404 for ${url}` }), assets: noAssets });
    const byName = Object.fromEntries(review.checks.map((c) => [c.name, c]));
    expect(review.passed).toBe(false);
    expect(byName.category).toMatchObject({ passed: false, message: expect.stringContaining('subcategory "intro" is not in category "web"') });
    expect(byName['placeholders-defined']).toMatchObject({ passed: false, message: 'Placeholders with no field: {{PHOTO}}' });
    expect(byName['fields-referenced']).toMatchObject({ passed: false, message: 'Fields no placeholder uses: UNUSED' });
    // PHOTO has no field, so the edit itself does not parse (a src holding a placeholder).
    expect(byName['edit-valid']?.passed).toBe(false);
    expect(byName['media-reachable']).toMatchObject({ passed: false, message: 'Not checked: the edit spec is not valid' });
  });

  it('fails on an empty timeline and on a missing category', async () => {
    const empty = { timeline: { tracks: [{ clips: [] }] }, output: { format: 'png' } };
    const review = await reviewTemplate({ edit: empty, fields: [], categoryId: null }, { reachability: reachable, assets: noAssets });
    expect(review.checks.filter((c) => !c.passed).map((c) => c.name)).toEqual(['category', 'timeline-not-empty']);
  });

  it('checks asset ids (fixed sources and field defaults) in the template\'s workspace, naming each one it cannot use', async () => {
    const withAssets = {
      timeline: {
        tracks: [
          { clips: [{ asset: { type: 'image', src: 'ast_lib_seal_gold' }, start: 0, length: 3 }] },
          { clips: [{ asset: { type: 'image', src: '{{PHOTO}}' }, start: 0, length: 3 }] },
          { clips: [{ asset: { type: 'audio', src: 'https://cdn.test/a.mp3' }, start: 0, length: 3 }] },
        ],
      },
      output: { format: 'mp4', size: { width: 640, height: 360 } },
    };
    const fields = fieldsOf([{ key: 'PHOTO', type: 'image', defaultValue: 'ast_01JD0000000000000000000001' }]);
    const asked: [string | null, readonly string[]][] = [];
    const assets: AssetChecker = async (workspaceId, ids) => {
      asked.push([workspaceId, ids]);
      return ids.filter((id) => id !== 'ast_lib_seal_gold').map((id) => ({ id, reason: 'is processing' }));
    };
    const review = await reviewTemplate({ workspaceId: 'org_1', edit: withAssets, fields, categoryId: 'web', subcategoryId: 'og-image' }, { reachability: reachable, assets });
    expect(asked).toEqual([['org_1', ['ast_lib_seal_gold', 'ast_01JD0000000000000000000001']]]);
    expect(review.checks.find((c) => c.name === 'edit-valid')?.passed).toBe(true);
    expect(review.checks.find((c) => c.name === 'media-reachable')).toMatchObject({ passed: false, message: 'Assets that cannot be used: ast_01JD0000000000000000000001 (is processing)' });
    const ready = await reviewTemplate({ workspaceId: null, edit: withAssets, fields, categoryId: 'web', subcategoryId: 'og-image' }, { reachability: reachable, assets: async () => [] });
    expect(ready.checks.find((c) => c.name === 'media-reachable')).toMatchObject({ passed: true, message: 'Every media file answered (1); every asset is ready (2)' });
  });
});
