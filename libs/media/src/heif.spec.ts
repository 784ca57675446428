import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { ASSET_HEAD_BYTES, detectAssetType } from './asset-type.js';
import { RenderMediaCache, type FetchedMedia } from './fetch.js';
import { decodeHeif, HeifDecodeError } from './heif.js';
import { DEFAULT_ASSET_LIMITS, inspectAsset, THUMBNAIL_SIZE } from './inspect.js';
import { AssetRejected } from './rejected.js';
import { sniff } from './sniff.js';
import { heicFromPng, heicOfPictures, heicWithSize, redBlue } from '#testing/media';

// Issue 32: HEIF/HEIC pictures (what phones upload) are read like every other image, under the same limits.
let dir: string;
let heic: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'heif-spec-'));
  heic = await heicFromPng(await redBlue(400, 200));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function pixel(png: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}
const near = (got: number[], want: number[]) => got.every((v, i) => Math.abs(v - want[i]!) <= 24);

async function inspectBytes(bytes: Buffer, limits = DEFAULT_ASSET_LIMITS) {
  const detected = detectAssetType(bytes.subarray(0, ASSET_HEAD_BYTES));
  if (!detected) throw new Error('not detected');
  const file = join(dir, `f-${Math.random()}`);
  await writeFile(file, bytes);
  return inspectAsset(file, detected, limits);
}
async function rejection(bytes: Buffer, limits = DEFAULT_ASSET_LIMITS): Promise<string> {
  const err = await inspectBytes(bytes, limits).then(() => new Error('accepted'), (e: unknown) => e);
  if (err instanceof AssetRejected) return err.reason;
  throw err;
}

describe('HEIF/HEIC detection', () => {
  it('types a phone HEIC as image/heic by its bytes, in the media library and for the engines', () => {
    expect(detectAssetType(heic.subarray(0, ASSET_HEAD_BYTES))).toEqual({ type: 'image', mimeType: 'image/heic', ext: 'heic' });
    expect(sniff(heic)).toEqual({ kind: 'image', mime: 'image/heic' });
  });

  it('keeps an AVIF an AVIF (sharp decodes those itself)', async () => {
    const avif = await sharp(await redBlue(16, 16)).avif().toBuffer();
    expect(sniff(avif)?.mime).toBe('image/avif');
    expect(detectAssetType(avif)?.ext).toBe('avif');
  });
});

describe('decodeHeif', () => {
  const plain = (width: number, height: number, background: string) => sharp({ create: { width, height, channels: 3, background } }).png().toBuffer();

  it('takes the primary picture of a file that holds several, wherever it is in the file', async () => {
    const pictures = [await plain(64, 48, '#ff0000'), await plain(32, 24, '#0000ff')];
    for (const [primary, size, colour] of [[0, [64, 48], [255, 0, 0]], [1, [32, 24], [0, 0, 255]]] as const) {
      const png = await decodeHeif(await heicOfPictures(pictures, primary), { maxPixels: 40_000_000 });
      const meta = await sharp(png).metadata();
      expect([meta.width, meta.height]).toEqual(size);
      expect(near(await pixel(png, 5, 5), [...colour])).toBe(true);
    }
  });

  it('refuses a file whose other picture is over the limit before anything is decoded (heif-convert decodes them all)', async () => {
    const two = await heicOfPictures([await plain(64, 48, '#ff0000'), await plain(32, 24, '#0000ff')], 0);
    // The other picture's declared size (the ispe box saying 32 × 24) made 20000 × 20000.
    let second = two.indexOf('ispe');
    while (two.readUInt32BE(second + 8) !== 32) second = two.indexOf('ispe', second + 4);
    two.writeUInt32BE(20_000, second + 8);
    two.writeUInt32BE(20_000, second + 12);
    await expect(decodeHeif(two, { maxPixels: 40_000_000 })).rejects.toThrow(new HeifDecodeError('The file holds a picture of 400 megapixels; at most 40 megapixels are decoded'));
  });

  it('decodes to a PNG of the same size with the same colours in the same places', async () => {
    const png = await decodeHeif(heic, { maxPixels: 40_000_000 });
    const meta = await sharp(png).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 400, 200]);
    expect(near(await pixel(png, 50, 100), [255, 0, 0])).toBe(true);
    expect(near(await pixel(png, 350, 100), [0, 0, 255])).toBe(true);
  });

  it('refuses a picture over the pixel limit from its header, before decoding', async () => {
    await expect(decodeHeif(heic, { maxPixels: 50_000 })).rejects.toThrow(/400 × 200 pixels .*at most/);
  });

  it('refuses a truncated file and garbage behind a HEIC header with a clear reason', async () => {
    const truncated = heic.subarray(0, Math.floor(heic.length * 0.6));
    const garbage = Buffer.concat([heic.subarray(0, 32), Buffer.alloc(4000, 0x5a)]);
    for (const bad of [truncated, garbage]) {
      const err = await decodeHeif(bad, { maxPixels: 40_000_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HeifDecodeError);
      expect((err as Error).message).toMatch(/HEIF\/HEIC/);
    }
  });

  it('refuses a file whose header reads but whose HEVC data does not decode (heif-convert fails): the reason, not a 5xx', async () => {
    const damaged = Buffer.from(heic).fill(0, heic.indexOf('mdat') + 4);
    expect((await sharp(damaged).metadata()).width).toBe(400); // the header is intact
    await expect(decodeHeif(damaged, { maxPixels: 40_000_000 })).rejects.toThrow(/HEIF\/HEIC image data is damaged or truncated: it cannot be decoded/);
  });

  it('refuses a HEIC bomb (a header declaring 50000 × 50000) before decoding', async () => {
    await expect(decodeHeif(heicWithSize(heic, 50_000, 50_000), { maxPixels: 40_000_000 })).rejects.toThrow(/50000 × 50000 pixels/);
  });

  it('stops a decode that runs past its time', async () => {
    // Three megapixels of noise take heif-convert ~0.5 s of CPU: far past 20 ms however the timer is
    // late on a loaded machine (a 400 × 200 picture could finish before a 1 ms timer fired).
    const noise = await sharp({ create: { width: 2000, height: 1500, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    const slow = await heicFromPng(noise, 50);
    await expect(decodeHeif(slow, { maxPixels: 40_000_000, timeoutMs: 20 })).rejects.toThrow(/took longer than 20 ms/);
  });
});

describe('HEIC in the media library (inspectAsset)', () => {
  it('measures it and makes its thumbnail', async () => {
    const inspection = await inspectBytes(heic);
    expect([inspection.width, inspection.height]).toEqual([400, 200]);
    const thumb = await sharp(inspection.thumbnail!.bytes).metadata();
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['webp', THUMBNAIL_SIZE, THUMBNAIL_SIZE / 2]);
    expect(near(await pixel(inspection.thumbnail!.bytes, 10, 80), [255, 0, 0])).toBe(true);
  });

  it('rejects a bomb, a truncated file and garbage like any other bad image', async () => {
    expect(await rejection(heic, { ...DEFAULT_ASSET_LIMITS, maxPixels: 50_000 })).toMatch(/400 × 200 pixels/);
    expect(await rejection(heic.subarray(0, Math.floor(heic.length * 0.6)))).toMatch(/damaged|truncated|cannot be read/);
    expect(await rejection(Buffer.concat([heic.subarray(0, 32), Buffer.alloc(4000, 0x5a)]))).toMatch(/damaged|truncated|cannot be read/);
  });
});

describe('HEIC for the engines (RenderMediaCache)', () => {
  it('hands both engines a PNG, decoded once per URL', async () => {
    let fetched = 0;
    const cache = new RenderMediaCache(async (url): Promise<FetchedMedia> => {
      fetched++;
      return { url, bytes: heic, ...sniff(heic)! };
    }, { maxPixels: 40_000_000 });
    const [a, b] = await Promise.all([cache.get('http://x/p.heic', ['image']), cache.get('http://x/p.heic', ['image'])]);
    expect(fetched).toBe(1);
    expect(a).toBe(b);
    expect([a.mime, (await sharp(a.bytes).metadata()).format]).toEqual(['image/png', 'png']);
  });

  it('turns a damaged HEIC into the MediaFetchError that names the clip (422)', async () => {
    const bad = Buffer.concat([heic.subarray(0, 32), Buffer.alloc(4000, 0x5a)]);
    const cache = new RenderMediaCache(async (url) => ({ url, bytes: bad, ...sniff(bad)! }), { maxPixels: 40_000_000 });
    await expect(cache.get('http://x/bad.heic', ['image'])).rejects.toMatchObject({ name: 'MediaFetchError', url: 'http://x/bad.heic' });
  });
});
