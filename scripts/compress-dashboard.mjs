// Writes a brotli (.br) and a gzip (.gz) copy beside each text file of the built dashboard's assets
// (apps/dashboard/dist/assets, or the folder given), once at build time: the API's static handler
// sends the one the browser accepts (@fastify/static preCompressed), never compressing per request.
// A copy that would not be smaller is not written.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const TEXT = /\.(js|mjs|css|html|svg|json|map|txt)$/;
const dir = process.argv[2] ?? 'apps/dashboard/dist/assets';
let before = 0;
let after = 0;
for (const name of readdirSync(dir)) {
  if (!TEXT.test(name)) continue;
  const file = join(dir, name);
  const bytes = readFileSync(file);
  const br = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
  const gz = gzipSync(bytes, { level: 9 });
  if (br.length < bytes.length) writeFileSync(`${file}.br`, br);
  if (gz.length < bytes.length) writeFileSync(`${file}.gz`, gz);
  before += bytes.length;
  after += Math.min(br.length, bytes.length);
}
if (process.argv.includes('--verbose')) console.log(`dashboard assets: ${(before / 1024).toFixed(1)} KB, ${(after / 1024).toFixed(1)} KB with brotli`);
