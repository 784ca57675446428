import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseEdit } from '#libs/edit-spec';

/*
 * Issue 32: "Which Shotstack assets and properties we render, render differently or refuse: one table
 * in docs/edit-spec.md, kept true by a test that walks the Edit API's model." The model is the
 * `shotstack-sdk` client's (its generated model classes), walked from `Edit` through the models each
 * one builds its fields from.
 */

const MODELS = join(dirname(createRequire(import.meta.url).resolve('shotstack-sdk/package.json')), 'src/model');

/** Model → its properties, walked from Edit; `Asset` (the union of every asset's fields) and field-less unions left out. */
function walk(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const queue = ['Edit'];
  const seen = new Set<string>();
  while (queue.length) {
    const model = queue.shift()!;
    if (seen.has(model)) continue;
    seen.add(model);
    const src = readFileSync(join(MODELS, `${model}.js`), 'utf8');
    const props = [...src.matchAll(new RegExp(`^${model}\\.prototype\\['(\\w+)'\\]`, 'gm'))].map((m) => m[1]!);
    if (props.length && model !== 'Asset') found.set(model, props);
    queue.push(...[...src.matchAll(/_(\w+)\["default"\]/g)].map((m) => m[1]!).filter((ref) => ref !== 'ApiClient' && ref !== model));
  }
  return found;
}

const STATUSES = ['rendered', 'rendered differently', 'accepted, not used', 'refused'] as const;

/** The table's rows: model, property, status. */
function table(): { model: string; prop: string; status: string }[] {
  const doc = readFileSync(new URL('../docs/edit-spec.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf("## Shotstack's Edit API, property by property"));
  const body = section.slice(0, section.indexOf('\n## ', 5));
  return [...body.matchAll(/^\| (\w+) \| `(\w+)` \| ([^|]+?) \|/gm)].map((m) => ({ model: m[1]!, prop: m[2]!, status: m[3]! }));
}

const SRC = 'https://media.example.com/file';
const ASSETS: Record<string, Record<string, unknown>> = {
  VideoAsset: { type: 'video', src: `${SRC}.mp4`, crop: { top: 0.1 }, chromaKey: { color: '#00ff00' } },
  ImageAsset: { type: 'image', src: `${SRC}.png`, crop: { top: 0.1 } },
  TextAsset: { type: 'text', text: 'Hello', font: { family: 'Open Sans' }, background: { color: '#000000' }, alignment: { horizontal: 'center' } },
  AudioAsset: { type: 'audio', src: `${SRC}.mp3` },
  LumaAsset: { type: 'luma', src: `${SRC}.mp4` },
  CaptionAsset: { type: 'caption', src: `${SRC}.vtt`, font: { family: 'Open Sans' }, background: { color: '#000000' }, margin: { top: 0.1 } },
  HtmlAsset: { type: 'html', html: '<p>Hello</p>', width: 200, height: 100 },
  TitleAsset: { type: 'title', text: 'Hello', offset: { x: 0, y: 0 } },
};

/** Where each model sits in an edit, and which asset the clip holds there. */
const CLIP = ['timeline', 'tracks', 0, 'clips', 0];
const PLACES: Record<string, { path: (string | number)[]; asset?: string }> = {
  Edit: { path: [] },
  Timeline: { path: ['timeline'] },
  Output: { path: ['output'] },
  MergeField: { path: ['merge', 0] },
  Soundtrack: { path: ['timeline', 'soundtrack'] },
  Font: { path: ['timeline', 'fonts', 0] },
  Track: { path: ['timeline', 'tracks', 0] },
  Size: { path: ['output', 'size'] },
  Range: { path: ['output', 'range'] },
  Poster: { path: ['output', 'poster'] },
  Thumbnail: { path: ['output', 'thumbnail'] },
  Clip: { path: CLIP },
  Offset: { path: [...CLIP, 'offset'] },
  Transition: { path: [...CLIP, 'transition'] },
  Transformation: { path: [...CLIP, 'transform'] },
  RotateTransformation: { path: [...CLIP, 'transform', 'rotate'] },
  SkewTransformation: { path: [...CLIP, 'transform', 'skew'] },
  FlipTransformation: { path: [...CLIP, 'transform', 'flip'] },
  Tween: { path: [...CLIP, 'opacity', 0] },
  ...Object.fromEntries(Object.keys(ASSETS).map((model) => [model, { path: [...CLIP, 'asset'], asset: model }])),
  Crop: { path: [...CLIP, 'asset', 'crop'], asset: 'VideoAsset' },
  ChromaKey: { path: [...CLIP, 'asset', 'chromaKey'], asset: 'VideoAsset' },
  TextFont: { path: [...CLIP, 'asset', 'font'], asset: 'TextAsset' },
  TextBackground: { path: [...CLIP, 'asset', 'background'], asset: 'TextAsset' },
  TextAlignment: { path: [...CLIP, 'asset', 'alignment'], asset: 'TextAsset' },
  CaptionFont: { path: [...CLIP, 'asset', 'font'], asset: 'CaptionAsset' },
  CaptionBackground: { path: [...CLIP, 'asset', 'background'], asset: 'CaptionAsset' },
  CaptionMargin: { path: [...CLIP, 'asset', 'margin'], asset: 'CaptionAsset' },
};

/** A whole edit with every model present (a Shotstack payload as its client writes it). */
function baseEdit(asset: string): Record<string, unknown> {
  return {
    timeline: {
      background: '#000000',
      fonts: [{ src: `${SRC}.ttf` }],
      soundtrack: { src: `${SRC}.mp3` },
      tracks: [{
        clips: [{
          asset: structuredClone(ASSETS[asset]!), start: 0, length: 1, offset: { x: 0, y: 0 }, transition: { in: 'fade' },
          transform: { rotate: { angle: 0 }, skew: { x: 0, y: 0 }, flip: { horizontal: false } }, opacity: [{ from: 0, to: 1, start: 0, length: 1 }],
        }],
      }],
    },
    output: { format: 'mp4', size: { width: 640, height: 360 }, range: { start: 0, length: 1 }, poster: { capture: 0 }, thumbnail: { capture: 0, scale: 0.5 } },
    merge: [{ find: 'NAME', replace: 'World' }],
  };
}

const pathText = (path: (string | number)[]) => path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : `${out}.${p}`), 'edit');

describe("docs/edit-spec.md: Shotstack's Edit API, property by property (issue 32)", () => {
  const model = walk();
  const rows = table();

  it('lists every property of the client\'s model once, and nothing else', () => {
    expect(model.size).toBeGreaterThan(30);
    const want = [...model].flatMap(([m, props]) => props.map((p) => `${m}.${p}`)).sort();
    expect(rows.map((r) => `${r.model}.${r.prop}`).sort()).toEqual(want);
    expect(rows.filter((r) => !(STATUSES as readonly string[]).includes(r.status))).toEqual([]);
  });

  it('every model has a place in the probe edit, and the probe edit parses', () => {
    expect([...model.keys()].filter((m) => !PLACES[m])).toEqual([]);
    for (const asset of Object.keys(ASSETS)) {
      const parsed = parseEdit(baseEdit(asset));
      expect(parsed.ok ? 'ok' : parsed.errors).toBe('ok');
    }
  });

  it('the parser agrees with each row: a refused property is an unknown field, any other is known', () => {
    const wrong: string[] = [];
    for (const row of rows) {
      const place = PLACES[row.model]!;
      const edit = baseEdit(place.asset ?? 'ImageAsset');
      const parent = place.path.reduce<Record<string | number, unknown>>((node, key) => node[key] as Record<string | number, unknown>, edit);
      parent[row.prop] = { probe: true };
      const parsed = parseEdit(edit);
      const at = pathText([...place.path, row.prop]);
      const unknown = !parsed.ok && (parsed.errors[at] ?? []).some((m) => m.startsWith('unknown field'));
      if (unknown !== (row.status === 'refused')) wrong.push(`${row.model}.${row.prop} (${row.status}): ${unknown ? 'the parser does not know it' : 'the parser accepts it'}`);
    }
    expect(wrong).toEqual([]);
  });
});
