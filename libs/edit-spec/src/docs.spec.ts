import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ASSET_TYPES } from './model.js';
import { parseEdit } from './parse.js';
import { resolveTiming } from './timing.js';

/** The ```json blocks of docs/edit-spec.md: the examples users copy. */
function examples(): { heading: string; json: string }[] {
  const markdown = readFileSync(join(process.cwd(), 'docs/edit-spec.md'), 'utf8');
  const blocks: { heading: string; json: string }[] = [];
  let heading = '';
  for (const part of markdown.split(/^```/m).entries()) {
    const [index, text] = part;
    if (index % 2 === 0) {
      heading = [...text.matchAll(/^#+ (.+)$/gm)].at(-1)?.[1] ?? heading;
    } else if (text.startsWith('json\n')) {
      blocks.push({ heading, json: text.slice('json\n'.length) });
    }
  }
  return blocks;
}

describe('docs/edit-spec.md examples', () => {
  const blocks = examples();

  it('has one example per asset type', () => {
    expect(blocks.map((b) => b.heading)).toEqual([...ASSET_TYPES]);
  });

  for (const { heading, json } of blocks) {
    it(`the ${heading} example parses and its timing resolves`, () => {
      const result = parseEdit(JSON.parse(json));
      if (!result.ok) throw new Error(`${heading}: ${JSON.stringify(result.errors)}`);
      const types = result.edit.timeline.tracks.flatMap((t) => t.clips.map((c) => c.asset.type));
      expect(types).toContain(heading);
      const srcs = result.edit.timeline.tracks.flatMap((t) => t.clips.map((c) => ('src' in c.asset ? c.asset.src : '')));
      const timing = resolveTiming(result.edit, { durations: Object.fromEntries(srcs.map((s) => [s, 10])) });
      expect(timing.ok).toBe(true);
    });
  }
});
