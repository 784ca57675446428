import { ASSET_FIELDS, EDIT_FIELDS, parseEdit } from '#libs/edit-spec';
import { cursorAt, lineOfPath, suggestions } from '../apps/dashboard/src/edit-json.js';

// Issue 29 "Design templates": the dashboard's edit editor completes what the API's parser accepts
// (the same lists, libs/edit-spec keys.ts) and shows a 422's paths on the lines they point at.

/** The cursor where `|` is in `text` (the bar removed). */
const at = (text: string) => cursorAt(text.replace('|', ''), text.indexOf('|'));

const base = () => ({
  timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi' }, start: 0, length: 1 } as Record<string, unknown>] }] },
  output: { format: 'png', size: { width: 100, height: 100 } } as Record<string, unknown>,
});
const unknownFields = (edit: unknown) => Object.values(parseEdit(edit).ok ? {} : (parseEdit(edit) as { errors: Record<string, string[]> }).errors).flat().filter((m) => m.startsWith('unknown field'));

describe('the template editor\'s completion', () => {
  it('offers a clip\'s fields not yet written, starting with what is typed', () => {
    const c = at('{"timeline":{"tracks":[{"clips":[{"asset":{"type":"image","src":"x"},"start":0,"le|');
    expect(c).toMatchObject({ path: ['timeline', 'tracks', 0, 'clips', 0], expecting: 'key', prefix: 'le' });
    expect(suggestions(c)).toEqual(['length']);
    expect(suggestions(at('{"timeline":{"tracks":[{"clips":[{"asset":{},"start":0,"|'))).toEqual(EDIT_FIELDS.clip.filter((k) => k !== 'asset' && k !== 'start'));
  });

  it('offers an asset\'s fields by its type, and the asset types as the value of type', () => {
    expect(suggestions(at('{"timeline":{"tracks":[{"clips":[{"asset":{"type":"text","text":"a","|'))).toEqual(ASSET_FIELDS.text.filter((k) => k !== 'type' && k !== 'text'));
    expect(suggestions(at('{"timeline":{"tracks":[{"clips":[{"asset":{"type":"ri|'))).toEqual(['rich-text']);
    expect(suggestions(at('{"output":{"format":"|'))).toEqual(['png', 'jpeg', 'pdf', 'mp4', 'gif']);
    expect(suggestions(at('{"output":{"size":{"width":1,"|'))).toEqual(['height']);
  });

  it('never offers a field or value the API refuses: each one parses without "unknown field"', () => {
    for (const key of EDIT_FIELDS.clip) {
      const edit = base();
      edit.timeline.tracks[0]!.clips[0]![key] ??= 1;
      expect([key, unknownFields(edit)]).toEqual([key, []]);
    }
    for (const [type, keys] of Object.entries(ASSET_FIELDS)) {
      for (const key of keys) {
        const edit = base();
        edit.timeline.tracks[0]!.clips[0]!.asset = { type, [key]: key === 'type' ? type : 1 };
        expect([type, key, unknownFields(edit)]).toEqual([type, key, []]);
      }
    }
    for (const key of EDIT_FIELDS.output) {
      const edit = base();
      edit.output[key] ??= 1;
      expect([key, unknownFields(edit)]).toEqual([key, []]);
    }
    // Each value offered for a field with a fixed list is accepted there.
    for (const [prefix, field] of [['{"output":{"format":"png","quality":"', 'quality'], ['{"timeline":{"tracks":[{"clips":[{"fit":"', 'fit'], ['{"timeline":{"tracks":[{"clips":[{"transition":{"in":"', 'in']] as const) {
      for (const value of suggestions(cursorAt(prefix, prefix.length))) {
        const edit = base();
        if (field === 'quality') edit.output.quality = value;
        else if (field === 'fit') edit.timeline.tracks[0]!.clips[0]!.fit = value;
        else edit.timeline.tracks[0]!.clips[0]!.transition = { in: value };
        expect([field, value, parseEdit(edit).ok]).toEqual([field, value, true]);
      }
    }
  });
});

describe('the template editor\'s inline errors', () => {
  const text = JSON.stringify({ timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'A' }, start: 0, length: 1 }, { asset: { type: 'image', src: 'x' }, start: 1, length: -2 }] }] }, output: { format: 'png' } }, null, 2);
  const lineOf = (needle: string, nth = 0) => text.split('\n').map((l, i) => [l, i + 1] as const).filter(([l]) => l.includes(needle))[nth]![1];

  it('puts a 422\'s path on the line it points at', () => {
    expect(lineOfPath(text, 'edit.timeline.tracks[0].clips[1].length')).toBe(lineOf('"length": -2'));
    expect(lineOfPath(text, 'template.edit.timeline.tracks[0].clips[1].asset.src')).toBe(lineOf('"src": "x"'));
    expect(lineOfPath(text, 'edit.output.format')).toBe(lineOf('"format"'));
  });

  it('a field that is missing points at the object that lacks it', () => {
    expect(lineOfPath(text, 'edit.output.size')).toBe(lineOf('"output"'));
    expect(lineOfPath(text, 'edit.timeline.tracks[0].clips[1].fit')).toBe(lineOf('{', 5));
  });
});
