import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { assertEdit } from '#libs/edit-spec';
import { runBinary } from '#libs/media';
import { framesOf, makeTestVideo, mapFetcher, MP4_COLOUR, probeColour, probeStreams, sineWav } from '#testing/video';
// The still engine's perceptual comparison (test helper of libs/still).
import { compareImages } from '#testing/still';
import { VideoEngine, type VideoOutput } from './engine.js';

/**
 * Issue 33, "Video: draw each distinct frame once": a render that draws each held span once (the
 * default) against the same edit drawn frame by frame (`staticSpans: false`), on real Chromium and
 * ffmpeg. Every frame must match (SSIM ≥ 0.99, frame by frame: the shipped ffmpeg has no ssim filter,
 * so each decoded frame pair goes through the still tests' SSIM), and so must the
 * frame count, the duration, the colour tags and the sound.
 */
const CDN = 'https://cdn.example.com';
const files = new Map<string, Buffer>();
let spans: VideoEngine;
let frameByFrame: VideoEngine;
let out: string;

/** A photo-like picture: a gradient with shapes, so a wrong, shifted or half-faded frame cannot pass. */
async function photo(hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${hue},60%,55%)"/><stop offset="1" stop-color="hsl(${(hue + 90) % 360},50%,25%)"/></linearGradient></defs><rect width="320" height="180" fill="url(#g)"/><circle cx="${100 + hue / 3}" cy="90" r="50" fill="#ffffff" opacity="0.6"/><rect x="${20 + hue / 4}" y="20" width="60" height="40" fill="hsl(${(hue + 180) % 360},70%,40%)"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

/**
 * 5 s at 12 fps (60 frames): a title rising word by word (0–0.5 s) then holding, a small video playing
 * from 1.5 s to 2 s, a caption line changing at 3 s while a second photo fades in over the first
 * for 1 s (the first ends at 4 s), a soundtrack with fades: held, drawn and played spans, the sound rendered apart.
 */
const edit = () => assertEdit({
  timeline: {
    background: '#102030',
    soundtrack: { src: `${CDN}/tone.wav`, effect: 'fadeInFadeOut', volume: 0.8 },
    tracks: [
      { clips: [{ asset: { type: 'rich-text', text: 'Autumn edit', font: { family: 'Open Sans', size: 28, weight: 700, color: '#ffffff' }, animation: { preset: 'ascend', duration: 0.5 } }, start: 0, length: 5, width: 300, height: 50, position: 'top' }] },
      { clips: ['Handmade in Lisbon', 'Free returns'].map((text, i) => ({ asset: { type: 'text', text, width: 260, height: 40, font: { family: 'Open Sans', size: 18, color: '#111111' }, background: { color: '#ffffff', opacity: 0.9, padding: 6, borderRadius: 8 } }, start: i * 3, length: i ? 2 : 3, position: 'bottom' })) },
      { clips: [{ asset: { type: 'video', src: `${CDN}/clip.mp4` }, start: 1.5, length: 0.5, scale: 0.3, position: 'topRight' }] },
      { clips: [{ asset: { type: 'image', src: `${CDN}/b.jpg` }, start: 3, length: 2, fit: 'cover', transition: { in: 'fade' } }] },
      { clips: [{ asset: { type: 'image', src: `${CDN}/a.jpg` }, start: 0, length: 4, fit: 'cover' }] },
    ],
  },
  // veryhigh (CRF 18): two x264 runs over the same grainy pictures (a part starts where the other
  // render's does not) differ by SSIM ~0.98 at CRF 23; the comparison is of the drawing, not of x264.
  output: { format: 'mp4', size: { width: 320, height: 180 }, fps: 12, quality: 'veryhigh' },
});

/** The sound as mono 16-bit samples at 48 kHz (a WAV's data chunk). */
async function samples(file: string): Promise<Int16Array> {
  const wav = join(out, `${randomUUID()}.wav`);
  await runBinary('ffmpeg', ['-v', 'error', '-i', file, '-vn', '-ac', '1', '-ar', '48000', '-c:a', 'pcm_s16le', '-f', 'wav', '-y', wav]);
  const buf = await readFile(wav);
  const data = buf.indexOf('data', 12) + 8;
  return new Int16Array(buf.buffer.slice(buf.byteOffset + data, buf.byteOffset + data + ((buf.length - data) & ~1)));
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'video-spans-test-'));
  files.set(`${CDN}/a.jpg`, await photo(20));
  files.set(`${CDN}/b.jpg`, await photo(200));
  files.set(`${CDN}/clip.mp4`, await makeTestVideo({ width: 160, height: 90, seconds: 1, fps: 12 }));
  files.set(`${CDN}/tone.wav`, sineWav(5, 330));
  [spans, frameByFrame] = await Promise.all([
    VideoEngine.start({ fetch: mapFetcher(files) }),
    VideoEngine.start({ fetch: mapFetcher(files), staticSpans: false, workDir: join(tmpdir(), 'video-engine-frame-by-frame') }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([spans?.close(), frameByFrame?.close()]);
  await rm(out, { recursive: true, force: true });
});

describe('A render drawn span by span (issue 33: draw each distinct frame once)', () => {
  let skipped: VideoOutput;
  let reference: VideoOutput;

  beforeAll(async () => {
    skipped = await spans.render(edit(), { outputDir: out });
    reference = await frameByFrame.render(edit(), { outputDir: out });
  }, 240_000);

  it('draws fewer frames than it outputs: held spans are drawn once', () => {
    expect(reference.drawnFrames).toBe(60);
    // Drawn: the title's rise (6 frames), the video (6), the crossfade (12); held: 0.5–1.5 s, 2–3 s and 4–5 s, a picture each.
    expect(skipped.drawnFrames).toBe(24 + 3);
  });

  it('has the same frames, duration, colour tags and streams as the frame-by-frame render ("yuv420p BT.709", ffprobe)', async () => {
    const [a, b] = await Promise.all([probeStreams(skipped.file), probeStreams(reference.file)]);
    expect(a).toMatchObject({ codec: 'h264', width: 320, height: 180, frames: 60, audio: 'aac' });
    expect(a).toEqual(b);
    expect(skipped).toMatchObject({ frames: 60, durationSec: 5, fps: 12 });
    expect(await probeColour(skipped.file)).toEqual(MP4_COLOUR);
  });

  it('every frame matches the frame-by-frame render: SSIM >= 0.99 on each of the 60 frames', async () => {
    const [a, b] = await Promise.all([framesOf(skipped.file), framesOf(reference.file)]);
    expect(a).toHaveLength(60);
    expect(b).toHaveLength(60);
    const ssim = await Promise.all(a.map(async (frame, k) => (await compareImages(frame, b[k]!)).ssim));
    const below = ssim.map((v, k) => ({ frame: k, ssim: Math.round(v * 1e4) / 1e4 })).filter((f) => f.ssim < 0.99);
    expect(below).toEqual([]);
  });

  it('sounds the same: the soundtrack rendered apart matches the frame-by-frame sound sample for sample (within AAC noise)', async () => {
    const [a, b] = await Promise.all([samples(skipped.file), samples(reference.file)]);
    expect(Math.abs(a.length - b.length)).toBeLessThanOrEqual(1024);
    const n = Math.min(a.length, b.length);
    let energy = 0;
    let error = 0;
    for (let i = 0; i < n; i++) {
      energy += b[i]! * b[i]!;
      error += (a[i]! - b[i]!) ** 2;
    }
    expect(energy / n).toBeGreaterThan(1e5);
    // Error energy under 1 % of the signal's (a sound shifted by one 1/12 s frame, or missing a fade, is far above).
    expect(error / energy).toBeLessThan(0.01);
  });
});
