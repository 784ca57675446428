#!/usr/bin/env node
// Renders a preview of every library template with its default values into seed/previews/<id>.jpg
// (640 px wide JPEG), with the still engine. Video templates show the frame at 40 % of their
// duration. Templates the still engine cannot draw yet (video assets) are listed and skipped.
// Run after `npm run -s build`:  node libs/templates/seed/render-previews.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { STOCK_ITEMS, stockAssetId, stockFilesDir } from '../../../dist/libs/assets/src/index.js';
import { applyMerge, assertEdit, assertTiming } from '../../../dist/libs/edit-spec/src/index.js';
import { sniff } from '../../../dist/libs/media/src/index.js';
import { FontCatalog, StillEngine } from '../../../dist/libs/still/src/index.js';
import { librarySeeds } from '../../../dist/libs/templates/src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'previews');
mkdirSync(out, { recursive: true });
// The templates name stock pictures by asset id (ast_lib_…), as renders do: each is read from the
// stock library's bundled file (libs/assets/stock/files).
const MEDIA = 'https://stock.invalid/';
const stockFiles = new Map(STOCK_ITEMS.filter((i) => 'bundled' in i.file).map((i) => [stockAssetId(i.slug), i.file.bundled]));
const withStockFiles = (value) => JSON.parse(JSON.stringify(value).replace(/"(ast_lib_[A-Za-z0-9_]+)"/g, (_, id) => `"${MEDIA}${stockFiles.get(id)}"`));
const engine = new StillEngine({
  fonts: await FontCatalog.system(),
  fetch: async (url) => {
    const bytes = readFileSync(join(stockFilesDir(), url.slice(MEDIA.length)));
    return { url, bytes, ...sniff(bytes) };
  },
});
for (const seed of librarySeeds()) {
  // Defaults, else the field's placeholder text (a required name on a certificate has no default).
  const defaults = Object.fromEntries(seed.fields.map((f) => [f.key, f.defaultValue ?? f.placeholder]).filter(([, v]) => v !== null && v !== undefined));
  const edit = assertEdit(withStockFiles(applyMerge(seed.edit, defaults).value));
  const video = !['png', 'jpeg', 'pdf'].includes(edit.output.format);
  const capture = video ? Math.round(assertTiming(edit).duration * 0.4 * 100) / 100 : undefined;
  const still = { ...edit, output: { ...edit.output, format: 'png', ...(capture === undefined ? {} : { poster: { capture } }) } };
  try {
    const { bytes } = await engine.render(still);
    const jpeg = await sharp(bytes).resize({ width: 640, withoutEnlargement: true }).jpeg({ quality: 82, mozjpeg: true }).toBuffer();
    writeFileSync(join(out, `${seed.id}.jpg`), jpeg);
    console.log(`${seed.id}.jpg ${jpeg.length} bytes`);
  } catch (err) {
    console.log(`${seed.id}: skipped (${err.code ?? ''} ${err.message})`);
  }
}
