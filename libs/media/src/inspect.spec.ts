import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { ASSET_HEAD_BYTES, detectAssetType } from './asset-type.js';
import { DEFAULT_ASSET_LIMITS, inspectAsset, type AssetInspection, type AssetLimits } from './inspect.js';
import { AssetRejected } from './rejected.js';
import { lottieJson, pngBomb, redBlue, sampleMedia, silentMp3, woff2FromSfnt } from '#testing/media';

let dir: string;
let count = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'inspect-spec-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function save(bytes: Buffer | string): Promise<string> {
  const file = join(dir, `upload-${++count}`);
  await writeFile(file, bytes);
  return file;
}

/** What the worker does: type from the first bytes, then inspect the stored file. */
async function inspect(bytes: Buffer | string, limits: Partial<AssetLimits> = {}, signal?: AbortSignal): Promise<AssetInspection> {
  const buf = Buffer.from(bytes);
  const detected = detectAssetType(buf.subarray(0, ASSET_HEAD_BYTES));
  if (!detected) throw new Error('not an accepted type');
  return inspectAsset(await save(buf), detected, { ...DEFAULT_ASSET_LIMITS, ...limits }, signal);
}

/** The reason of the AssetRejected the inspection throws. */
async function rejection(bytes: Buffer | string, limits: Partial<AssetLimits> = {}): Promise<string> {
  const err = await inspect(bytes, limits).then(
    () => new Error('the file was accepted'),
    (e: unknown) => e,
  );
  if (err instanceof AssetRejected) return err.reason;
  throw err;
}

/** Colour (r, g, b) of the pixel at fractions (fx, fy) of a picture. */
async function colourAt(picture: Buffer, fx: number, fy: number): Promise<number[]> {
  const { data, info } = await sharp(picture).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (Math.floor(fy * info.height) * info.width + Math.floor(fx * info.width)) * info.channels;
  return [...data.subarray(at, at + 3)];
}

const near = (actual: number[], expected: number[]) => actual.every((v, i) => Math.abs(v - expected[i]!) < 40);

describe('asset inspection (issue 14: processing and bad input)', () => {
  describe('images', () => {
    it('measures each format and makes a webp thumbnail at most 320 px on the long side', async () => {
      const picture = await redBlue(640, 480);
      const png = await inspect(picture);
      expect(png).toMatchObject({ width: 640, height: 480, durationSec: null, thumbnail: { mimeType: 'image/webp', ext: 'webp' } });
      const thumb = await sharp(png.thumbnail!.bytes).metadata();
      expect([thumb.format, thumb.width, thumb.height]).toEqual(['webp', 320, 240]);
      expect(near(await colourAt(png.thumbnail!.bytes, 0.25, 0.5), [255, 0, 0])).toBe(true);
      expect(near(await colourAt(png.thumbnail!.bytes, 0.75, 0.5), [0, 0, 255])).toBe(true);
      for (const format of ['jpeg', 'webp', 'gif', 'avif'] as const) {
        const result = await inspect(await sharp(picture).toFormat(format).toBuffer());
        expect([format, result.width, result.height, result.thumbnail?.bytes.length]).toEqual([format, 640, 480, expect.any(Number)]);
      }
      // A small picture is not enlarged.
      expect(await sharp((await inspect(await redBlue(40, 20))).thumbnail!.bytes).metadata()).toMatchObject({ width: 40, height: 20 });
    });

    it('reports the displayed size of a rotated (EXIF) photo and turns its thumbnail', async () => {
      const jpeg = await sharp(await redBlue(200, 100)).jpeg().withMetadata({ orientation: 6 }).toBuffer();
      const result = await inspect(jpeg);
      expect([result.width, result.height]).toEqual([100, 200]);
      expect(await sharp(result.thumbnail!.bytes).metadata()).toMatchObject({ width: 100, height: 200 });
    });

    it('refuses a 50 000 × 50 000 PNG from its header, quickly and without allocating it', async () => {
      const bomb = pngBomb(50_000, 50_000);
      const rss = process.memoryUsage().rss;
      const started = Date.now();
      expect(await rejection(bomb)).toBe('The image is 50000 × 50000 pixels (2500 megapixels); at most 100 megapixels are accepted');
      expect(Date.now() - started).toBeLessThan(2000);
      expect(process.memoryUsage().rss - rss).toBeLessThan(100 * 1024 * 1024);
    });

    it('rejects a PNG header on garbage, a truncated PNG and a file that lies about its format', async () => {
      const picture = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
      const garbage = Buffer.concat([picture.subarray(0, 8), Buffer.from('this is not an image, only words after a PNG signature'.repeat(20))]);
      expect(await rejection(garbage)).toMatch(/PNG image but its header cannot be read/);
      expect(await rejection(picture.subarray(0, picture.length / 2))).toMatch(/damaged or truncated/);
      // The IHDR of a real PNG followed by garbage where the pixels should be.
      const ihdrThenGarbage = Buffer.concat([picture.subarray(0, 33), Buffer.alloc(5000, 0x41)]);
      expect(await rejection(ihdrThenGarbage)).toMatch(/PNG image/);
    });
  });

  describe('video', () => {
    it('measures mp4, mov and webm and takes a thumbnail frame', async () => {
      const mp4 = await inspect(await sampleMedia.mp4(2, 640, 360));
      expect(mp4).toMatchObject({ width: 640, height: 360, thumbnail: { mimeType: 'image/webp', ext: 'webp' } });
      expect(mp4.durationSec).toBeCloseTo(2, 1);
      expect(await sharp(mp4.thumbnail!.bytes).metadata()).toMatchObject({ width: 320, height: 180 });
      expect(near(await colourAt(mp4.thumbnail!.bytes, 0.2, 0.5), [255, 0, 0])).toBe(true);
      expect(near(await colourAt(mp4.thumbnail!.bytes, 0.8, 0.5), [0, 0, 255])).toBe(true);
      for (const make of [sampleMedia.mov, sampleMedia.webm]) {
        const result = await inspect(await make(1, 64, 48));
        expect([result.width, result.height, result.thumbnail && (await sharp(result.thumbnail.bytes).metadata()).width]).toEqual([64, 48, 64]);
        expect(result.durationSec).toBeCloseTo(1, 1);
      }
    });

    it('rejects an mp4 without frames: no description of them, frames cut off, frames that are garbage', async () => {
      const mp4 = await sampleMedia.mp4(2);
      const box = (type: string, body: Buffer) => Buffer.concat([Buffer.from([0, 0, (body.length + 8) >> 8, (body.length + 8) & 0xff]), Buffer.from(type, 'latin1'), body]);
      const ftyp = mp4.subarray(0, mp4.readUInt32BE(0));
      expect(await rejection(Buffer.concat([ftyp, box('mdat', Buffer.alloc(4096, 0x41))]))).toMatch(/^The file cannot be read as video/);
      // Faststart: the moov (every frame described) comes first, then the mdat holding the frames.
      const mdat = mp4.indexOf('mdat') - 4;
      expect(await rejection(mp4.subarray(0, mdat + 16))).toBe('The file is truncated: it ends before the data its header describes');
      const blanked = Buffer.from(mp4);
      blanked.fill(0, mdat + 8);
      expect(await rejection(blanked)).toBe('No frame of the video can be decoded: it is damaged, truncated or empty');
    });

    it('types an mp4 whose only track is audio as audio (m4a), and refuses an audio-only WebM', async () => {
      const result = await inspect(await sampleMedia.audioOnlyMp4(1));
      expect(result.detected).toEqual({ type: 'audio', mimeType: 'audio/mp4', ext: 'm4a' });
      expect(result.waveform?.mimeType).toBe('image/png');
      expect(result.durationSec).toBeCloseTo(1, 1);
      expect(await rejection(await sampleMedia.audioOnlyWebm(1))).toMatch(/no video stream; audio is accepted as mp3/);
    });

    it('refuses a video over the pixel or the duration limit', async () => {
      const mp4 = await sampleMedia.mp4(2, 64, 48);
      expect(await rejection(mp4, { maxPixels: 1000 })).toMatch(/The video is 64 × 48 pixels/);
      expect(await rejection(mp4, { maxDurationSec: 1 })).toBe('The video lasts 2 s; at most 1 s is accepted');
    });
  });

  describe('audio', () => {
    it('measures mp3, wav, ogg, flac and m4a and draws a waveform', async () => {
      for (const [name, make] of Object.entries({ mp3: sampleMedia.mp3, wav: sampleMedia.wav, ogg: sampleMedia.ogg, flac: sampleMedia.flac, m4a: sampleMedia.m4a })) {
        const result = await inspect(await make(2));
        expect([name, result.width, result.height, result.thumbnail, result.detected]).toEqual([name, null, null, undefined, undefined]);
        expect([name, Math.round(result.durationSec! * 10) / 10]).toEqual([name, 2]);
        expect(await sharp(result.waveform!.bytes).metadata()).toMatchObject({ format: 'png', width: 800, height: 160 });
      }
    });

    it('draws the waveform of what it hears: loud where the tone is, flat where it is silent', async () => {
      const { waveform } = await inspect(await sampleMedia.toneThenSilence(1, 1));
      const { data, info } = await sharp(waveform!.bytes).raw().toBuffer({ resolveWithObject: true });
      const painted = (x: number) => Array.from({ length: info.height }, (_, y) => data[(y * info.width + x) * info.channels + 3]!).filter((a) => a > 0).length;
      expect(painted(Math.round(info.width * 0.25))).toBeGreaterThan(info.height * 0.9);
      expect(painted(Math.round(info.width * 0.75))).toBeLessThanOrEqual(2);
    });

    it('refuses a 10-hour silent MP3 from its header, without decoding it', async () => {
      const started = Date.now();
      expect(await rejection(await silentMp3(10), { timeoutMs: 20_000 })).toMatch(/^The audio lasts 1[01]:\d\d:\d\d; at most 3:00:00 is accepted$/);
      expect(Date.now() - started).toBeLessThan(15_000);
    });

    it('rejects audio cut short or damaged: the header promises more than decodes', async () => {
      const mp3 = await sampleMedia.mp3(4); // its Xing header counts the frames
      expect(await rejection(mp3.subarray(0, mp3.length / 2))).toMatch(/^The audio stops after 2(\.\d)? s but its header says 4 s: the file is truncated or damaged$/);
      const wav = await sampleMedia.wav(4);
      expect(await rejection(wav.subarray(0, wav.length / 4))).toBe('The file is truncated: it ends before the data its header describes');
      const flac = await sampleMedia.flac(4);
      const damaged = Buffer.from(flac);
      damaged.fill(0x41, 40_000, flac.length - 2000); // the first four frames (0.37 s) survive
      expect(await rejection(damaged)).toMatch(/^The audio stops after 0\.\d s but its header says 4 s: the file is truncated or damaged$/);
      damaged.fill(0x41, 100);
      expect(await rejection(damaged)).toBe('No audio can be decoded from the file: it is damaged, truncated or empty');
      expect(await rejection((await sampleMedia.m4a(4)).subarray(0, 3000))).toBe('The file is truncated: it ends before the data its header describes');
    });
  });

  describe('bounded work', () => {
    const longAudio = () => silentMp3(10);
    const ffmpegRunningOn = (file: string) => execFileSync('ps', ['-eo', 'args']).toString().split('\n').some((l) => l.includes(file));

    it('kills the decoder when the caller aborts', async () => {
      const file = await save(await longAudio());
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('shutting down')), 500);
      const started = Date.now();
      const limits = { ...DEFAULT_ASSET_LIMITS, maxDurationSec: 100_000 };
      await expect(inspectAsset(file, { type: 'audio', mimeType: 'audio/mpeg', ext: 'mp3' }, limits, controller.signal)).rejects.toThrow('shutting down');
      expect(Date.now() - started).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 200));
      expect(ffmpegRunningOn(file)).toBe(false);
    });

    it('stops at the time limit and rejects the file', async () => {
      const file = await save(await longAudio());
      const started = Date.now();
      const limits = { ...DEFAULT_ASSET_LIMITS, maxDurationSec: 100_000, timeoutMs: 1000 };
      await expect(inspectAsset(file, { type: 'audio', mimeType: 'audio/mpeg', ext: 'mp3' }, limits)).rejects.toThrow(new AssetRejected('Reading the file took longer than 1 s; it was stopped'));
      expect(Date.now() - started).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 200));
      expect(ffmpegRunningOn(file)).toBe(false);
    });
  });

  describe('fonts', () => {
    it('reads the family name, and rejects a broken font', async () => {
      const lato = readFileSync('/usr/share/fonts/truetype/lato/Lato-Medium.ttf');
      expect(await inspect(lato)).toEqual({ width: null, height: null, durationSec: null, fontFamily: 'Lato' });
      expect((await inspect(woff2FromSfnt(lato))).fontFamily).toBe('Lato');
      expect(await rejection(lato.subarray(0, 4096))).toMatch(/The font file is damaged/);
    });
  });

  describe('svg', () => {
    it('serves the sanitised file, measures it and draws a thumbnail', async () => {
      const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32" onload="alert(1)"><script>alert(2)</script><rect width="32" height="32" fill="red"/><rect x="32" width="32" height="32" fill="blue"/></svg>';
      const result = await inspect(svg);
      expect(result).toMatchObject({ width: 64, height: 32, durationSec: null });
      const served = result.sanitized!.toString();
      expect(served).not.toMatch(/script|onload/);
      expect(served).toContain('<rect width="32" height="32" fill="red"/>');
      // Vector art is drawn at the thumbnail size, not enlarged from its declared one.
      expect(await sharp(result.thumbnail!.bytes).metadata()).toMatchObject({ width: 320, height: 160 });
      expect(near(await colourAt(result.thumbnail!.bytes, 0.25, 0.5), [255, 0, 0])).toBe(true);
    });

    it('refuses an SVG over the size limit, or declaring more pixels than allowed', async () => {
      const big = `<svg xmlns="http://www.w3.org/2000/svg">${'<g/>'.repeat(2000)}</svg>`;
      expect(await rejection(big, { maxSvgBytes: 4096 })).toBe('The SVG file is 8 KB; at most 4 KB is accepted');
      expect(await rejection('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>')).toMatch(/The SVG is 100000 × 100000 pixels/);
    });
  });

  describe('lottie', () => {
    it('reads frames, rate, size and duration', async () => {
      expect(await inspect(lottieJson())).toEqual({ width: 512, height: 256, durationSec: 2, lottie: { frames: 60, fps: 30 } });
    });

    it('refuses a Lottie over the size or frame limit, and invalid numbers', async () => {
      expect(await rejection(lottieJson({ op: 20_001 }))).toBe('The Lottie animation has 20,001 frames; at most 10,000 are accepted');
      expect(await rejection(lottieJson(), { maxLottieBytes: 100 })).toMatch(/^The Lottie file is \d+ bytes; at most 100 bytes is accepted$/);
      expect(await rejection(lottieJson({ fr: 0 }))).toMatch(/"fr" must be a frame rate/);
      expect(await rejection(lottieJson({ fr: '30' }))).toMatch(/"fr" must be/);
      expect(await rejection(lottieJson({ ip: 50, op: 10 }))).toMatch(/"op" must be a frame number after "ip"/);
      expect(await rejection(lottieJson({ w: -5 }))).toMatch(/"w" must be a whole number/);
      expect(await rejection(lottieJson({ layers: 'none' }))).toMatch(/"layers" must be an array/);
      expect(await rejection(lottieJson().replace('"h":256,', ''))).toBe('The Lottie animation lacks its "h" key');
      // Valid as far as the upload's first 64 KB go, broken after.
      expect(await rejection(`${lottieJson({ nm: 'x'.repeat(70_000) }).slice(0, -1)},"x":}`)).toBe('The Lottie file is not valid JSON');
    });
  });
});
