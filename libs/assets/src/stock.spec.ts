import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import decompressWoff2 from 'wawoff2/decompress.js';
import { runBinary } from '#libs/media';
import { STOCK_DEBIAN_PACKAGES, STOCK_ITEMS, type StockAssetType, type StockItem, stockFilesDir } from './stock.js';

/** The stock library's catalog against its files: every item is there, of its type, with its licence. */
const ALLOWED_LICENCES = new Set(['CC0-1.0', 'OFL-1.1', 'Apache-2.0', 'Bitstream-Vera', 'CC-BY-3.0', 'CC-BY-SA-3.0', 'CC-BY-SA-4.0', 'GPL-2.0-or-later']);
const TYPES: StockAssetType[] = ['image', 'video', 'audio', 'font', 'lottie', 'svg'];

const pathOf = (item: StockItem) => ('debian' in item.file ? item.file.debian : join(stockFilesDir(), item.file.bundled));
const bytesOf = (item: StockItem) => readFileSync(pathOf(item));
const extensionOf = (item: StockItem) => /\.([a-z0-9]+)$/.exec(pathOf(item))?.[1];
const ofType = (type: StockAssetType) => STOCK_ITEMS.filter((item) => item.type === type);

/** The container or format the bytes start with, checked by hand (not by the upload sniffer). */
function magic(buf: Buffer): string | null {
  const ascii = (from: number, to: number) => buf.toString('latin1', from, to);
  if (buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpg';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(4, 8) === 'ftyp') return 'mp4';
  if (buf.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (ascii(0, 3) === 'ID3' || (buf[0] === 0xff && (buf[1]! & 0xe0) === 0xe0)) return 'mp3';
  if (ascii(0, 4) === 'OggS') return 'oga';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  if (buf.readUInt32BE(0) === 0x00010000 || ascii(0, 4) === 'true') return 'ttf';
  if (ascii(0, 4) === 'OTTO') return 'otf';
  if (ascii(0, 4) === 'wOFF') return 'woff';
  if (ascii(0, 4) === 'wOF2') return 'woff2';
  const text = buf.toString('utf8').trimStart();
  if (text.startsWith('<svg')) return 'svg';
  if (text.startsWith('{')) return 'json';
  return null;
}

const TYPE_OF_FORMAT: Record<string, StockAssetType> = {
  png: 'image', jpg: 'image', webp: 'image', mp4: 'video', webm: 'video', mp3: 'audio', wav: 'audio', oga: 'audio', flac: 'audio',
  ttf: 'font', otf: 'font', woff: 'font', woff2: 'font', svg: 'svg', json: 'lottie',
};

async function probe(file: string): Promise<{ codec: string; pixFmt?: string; duration: number }> {
  const { stdout } = await runBinary('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', file]);
  const data = JSON.parse(stdout) as { streams: { codec_name: string; pix_fmt?: string }[]; format: { duration: string } };
  return { codec: data.streams[0]!.codec_name, ...(data.streams[0]!.pix_fmt ? { pixFmt: data.streams[0]!.pix_fmt } : {}), duration: Number(data.format.duration) };
}

describe('stock library catalog', () => {
  it('holds at least 48 items, at least 4 of each type', () => {
    expect(STOCK_ITEMS.length).toBeGreaterThanOrEqual(48);
    for (const type of TYPES) expect([type, ofType(type).length >= 4]).toEqual([type, true]);
  });

  it('gives every item a stable, unique slug (and so a unique asset id)', () => {
    for (const item of STOCK_ITEMS) expect(item.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    const ids = STOCK_ITEMS.map((item) => `ast_lib_${item.slug.replaceAll('-', '_')}`);
    expect(new Set(ids).size).toBe(STOCK_ITEMS.length);
  });

  it('describes every item: name, description, folder and at most 20 distinct lower-case tags', () => {
    for (const item of STOCK_ITEMS) {
      expect([item.slug, item.name.trim().length > 0, item.description.trim().length > 0]).toEqual([item.slug, true, true]);
      expect(item.folder).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(item.tags.length).toBeGreaterThan(0);
      expect(item.tags.length).toBeLessThanOrEqual(20);
      expect(new Set(item.tags).size).toBe(item.tags.length);
      for (const tag of item.tags) expect(tag).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
    expect(new Set(STOCK_ITEMS.map((item) => item.name)).size).toBe(STOCK_ITEMS.length);
  });

  it('records a licence from the allowed SPDX ids for every item', () => {
    for (const item of STOCK_ITEMS) {
      const ids = item.licence.split(' AND ');
      expect([item.slug, ids.every((id) => ALLOWED_LICENCES.has(id))]).toEqual([item.slug, true]);
    }
  });

  it('names the Debian package that really installs each Debian file, and the scripts install those packages', () => {
    const listed = readFileSync(join(process.cwd(), 'scripts/stock-packages.txt'), 'utf8').split('\n').map((line) => line.trim()).filter(Boolean);
    expect([...STOCK_DEBIAN_PACKAGES].sort()).toEqual([...listed].sort());
    for (const item of STOCK_ITEMS) {
      if (!('debian' in item.file)) {
        expect(item.source).toMatch(/^(Made by the project: libs\/(assets\/stock\/make-stock|templates\/seed\/generate-media)\.mjs|Debian package [a-z0-9.+-]+: \/usr\/share\/\S+, packed as WOFF2? by libs\/assets\/stock\/make-stock\.mjs)/);
        continue;
      }
      const path = item.file.debian;
      expect(path.startsWith('/usr/share/')).toBe(true);
      const pkg = /^Debian package ([a-z0-9.+-]+): (\S+)$/.exec(item.source);
      expect([item.slug, pkg?.[2]]).toEqual([item.slug, path]);
      expect(STOCK_DEBIAN_PACKAGES).toContain(pkg![1]);
      const owner = execFileSync('dpkg-query', ['-S', path], { encoding: 'utf8' }).split(':')[0];
      expect([path, owner]).toEqual([path, pkg![1]]);
    }
  });

  it('finds every file, and its bytes are of the item\'s type and match its extension', () => {
    for (const item of STOCK_ITEMS) {
      expect([item.slug, existsSync(pathOf(item))]).toEqual([item.slug, true]);
      const format = magic(bytesOf(item));
      expect([item.slug, format, format && TYPE_OF_FORMAT[format]]).toEqual([item.slug, extensionOf(item) === 'jpeg' ? 'jpg' : extensionOf(item), item.type]);
    }
  });

  it('bundles exactly the catalog\'s files, small (≤ 6 MB in all), each listed in LICENCES.md', () => {
    const bundled = STOCK_ITEMS.flatMap((item) => ('bundled' in item.file ? [item.file.bundled] : []));
    expect(new Set(bundled).size).toBe(bundled.length);
    expect(readdirSync(stockFilesDir()).sort()).toEqual([...bundled].sort());
    const total = bundled.reduce((sum, file) => sum + statSync(join(stockFilesDir(), file)).size, 0);
    expect(total).toBeLessThanOrEqual(6 * 1024 * 1024);
    const licences = readFileSync(join(stockFilesDir(), '..', 'LICENCES.md'), 'utf8');
    for (const item of STOCK_ITEMS) {
      const row = licences.split('\n').find((line) => line.startsWith(`| ${item.slug} |`));
      expect([item.slug, row?.includes(`| ${item.licence} |`)]).toEqual([item.slug, true]);
    }
  });

  it('decodes every image with its stated format and a real size', async () => {
    for (const item of ofType('image')) {
      const meta = await sharp(pathOf(item)).metadata();
      expect([item.slug, meta.format]).toEqual([item.slug, { jpg: 'jpeg', png: 'png', webp: 'webp' }[extensionOf(item)!]]);
      expect(meta.width).toBeGreaterThanOrEqual(256);
      expect(meta.height).toBeGreaterThanOrEqual(256);
    }
  });

  it('ships short, small video loops: H.264 yuv420p MP4 and a VP9 WebM, 2 to 4 s, at most 300 KB', async () => {
    for (const item of ofType('video')) {
      const probed = await probe(pathOf(item));
      expect([item.slug, probed.codec, probed.pixFmt]).toEqual([item.slug, extensionOf(item) === 'webm' ? 'vp9' : 'h264', 'yuv420p']);
      expect(probed.duration).toBeGreaterThanOrEqual(1.95);
      expect(probed.duration).toBeLessThanOrEqual(4.05);
      expect(statSync(pathOf(item)).size).toBeLessThanOrEqual(300 * 1024);
    }
    expect(ofType('video').map(extensionOf)).toContain('webm');
  });

  it('ships audio an audio decoder reads, with a duration', async () => {
    const codecs = new Set<string>();
    for (const item of ofType('audio')) {
      const probed = await probe(pathOf(item));
      codecs.add(probed.codec);
      expect([item.slug, probed.duration > 0.1 && probed.duration < 10]).toEqual([item.slug, true]);
    }
    expect([...codecs].sort()).toEqual(['flac', 'mp3', 'pcm_s16le', 'vorbis']);
  });

  it('ships fonts whose web packings unpack to the font', async () => {
    const fonts = ofType('font').map(extensionOf);
    for (const format of ['ttf', 'otf', 'woff', 'woff2']) expect(fonts).toContain(format);
    for (const item of ofType('font')) {
      const buf = bytesOf(item);
      if (extensionOf(item) === 'woff2') expect(magic(Buffer.from(await decompressWoff2(buf)))).toBe('ttf');
      if (extensionOf(item) === 'woff') expect(buf.readUInt32BE(8)).toBe(buf.length);
    }
  });

  it('ships Lottie animations with bodymovin\'s top-level keys and shape layers', () => {
    for (const item of ofType('lottie')) {
      const json = JSON.parse(bytesOf(item).toString('utf8')) as Record<string, unknown> & { layers: { ty: number; shapes?: unknown[] }[] };
      for (const key of ['v', 'fr', 'ip', 'op', 'w', 'h', 'nm', 'layers']) expect([item.slug, key in json]).toEqual([item.slug, true]);
      expect(json.op as number).toBeGreaterThan(json.ip as number);
      expect(json.layers.length).toBeGreaterThan(0);
      for (const layer of json.layers) expect([layer.ty, Array.isArray(layer.shapes)]).toEqual([4, true]);
    }
  });

  it('ships SVGs with nothing a sanitiser would strip (no script, handler, external reference)', () => {
    for (const item of ofType('svg')) {
      const text = bytesOf(item).toString('utf8');
      expect(text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* viewBox="[\d. ]+"/);
      expect(text).not.toMatch(/<script|<foreignObject|\son[a-z]+=|href=|url\((?!#)/i);
    }
  });
});
