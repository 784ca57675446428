import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { runBinary } from '#libs/media';
import { framesOf, makeTestVideo, mapFetcher, MP4_COLOUR, probeColour, probeStreams } from '#testing/video';
// The still engine's perceptual comparison (test helper of libs/still).
import { compareImages } from '#testing/still';
import { VideoEngine, type VideoOutput } from './engine.js';

/**
 * Issue 33, "where only one layer changes, the static layers … drawn once and composited, so the
 * browser draws only what moves": played frames whose only moving part is a plain video at the
 * bottom, under clips that hold still or only fade or move (a picture of each such clip, faded and
 * moved outside the browser), are composed outside the browser (spans.ts composedSpans,
 * overlayGroups, composite.ts). Each render here is compared with the same edit drawn frame by frame in the page
 * (`staticSpans: false`), on real Chromium and ffmpeg: every frame must match (SSIM ≥ 0.99), and so
 * must the frame count, the duration and the colour tags. What is compared is the drawing: both
 * engines take the page's frames as JPEGs of quality 100 and encode at CRF 1 (the engine's `crf`),
 * as at the default quality (80) and the output's CRF (18) JPEG's and x264's losses over this grain
 * alone cost 0.987–0.99 (a composed frame never goes through a JPEG).
 */
const CDN = 'https://cdn.example.com';
const files = new Map<string, Buffer>();
let composing: VideoEngine;
const failures: { frames: [number, number]; reason: string }[] = [];
let frameByFrame: VideoEngine;
let out: string;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'video-compose-test-'));
  files.set(`${CDN}/clip.mp4`, await makeTestVideo({ width: 320, height: 180, seconds: 5, fps: 24 }));
  files.set(`${CDN}/alpha.webm`, await alphaWebm());
  files.set(`${CDN}/clip-601.mp4`, await bt601(files.get(`${CDN}/clip.mp4`)!));
  files.set(`${CDN}/logo.png`, await sharp({ create: { width: 80, height: 40, channels: 4, background: { r: 240, g: 200, b: 40, alpha: 0.85 } } }).png().toBuffer());
  [composing, frameByFrame] = await Promise.all([
    VideoEngine.start({ fetch: mapFetcher(files), crf: 1, jpegQuality: 100, onComposeFailure: (f) => failures.push(f) }),
    VideoEngine.start({ fetch: mapFetcher(files), crf: 1, staticSpans: false, jpegQuality: 100, workDir: join(tmpdir(), 'video-engine-compose-frame-by-frame') }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([composing?.close(), frameByFrame?.close()]);
  await rm(out, { recursive: true, force: true });
});

/** A 1 s VP9 webm with an alpha channel (half-transparent red), as the shipped ffmpeg writes it. */
async function alphaWebm(): Promise<Buffer> {
  const png = join(out, 'alpha.png');
  const webm = join(out, 'alpha.webm');
  await sharp({ create: { width: 160, height: 90, channels: 4, background: { r: 200, g: 50, b: 50, alpha: 0.5 } } }).png().toFile(png);
  await runBinary('ffmpeg', ['-v', 'error', '-loop', '1', '-framerate', '12', '-t', '4', '-i', png, '-c:v', 'libvpx-vp9', '-pix_fmt', 'yuva420p', '-y', webm]);
  return readFile(webm);
}

/** The same pictures stored with the BT.601 matrix and tagged so (Chromium converts them to show them; so must the compositor). */
async function bt601(mp4: Buffer): Promise<Buffer> {
  const input = join(out, 'in.mp4');
  const output = join(out, 'clip-601.mp4');
  await writeFile(input, mp4);
  await runBinary('ffmpeg', ['-v', 'error', '-i', input, '-vf', 'zscale=matrixin=709:matrix=170m,format=yuv420p', '-colorspace', 'smpte170m', '-c:v', 'libx264', '-preset', 'ultrafast', '-y', output]);
  return readFile(output);
}

/** Output at 12 fps, CRF 18 (two x264 runs over grainy pictures differ by SSIM ~0.98 at CRF 23: the comparison is of the drawing). */
const output = { format: 'mp4', size: { width: 320, height: 180 }, fps: 12, quality: 'veryhigh' } as const;

/** A title rising word by word for 0.5 s, then holding; a logo fading in at 2 s; over `video`. */
const overVideo = (video: Record<string, JsonValue>, background = '#000000') => assertEdit({
  timeline: {
    background,
    tracks: [
      { clips: [{ asset: { type: 'rich-text', text: 'Summer edit', font: { family: 'Open Sans', size: 28, weight: 700, color: '#ffffff' }, shadow: { offsetX: 0, offsetY: 2, blur: 4, color: '#000000', opacity: 0.6 }, animation: { preset: 'ascend', duration: 0.5 } }, start: 0, length: 4, width: 300, height: 50, position: 'top' }] },
      { clips: [{ asset: { type: 'image', src: `${CDN}/logo.png` }, start: 2, length: 2, fit: 'none', position: 'bottomRight', offset: { x: -0.02, y: 0.03 }, transition: { in: 'fade' } }] },
      { clips: [{ asset: { type: 'video', src: `${CDN}/clip.mp4` }, start: 0, length: 4, ...video }] },
    ],
  },
  output,
});

/** Frame pairs whose SSIM is under 0.99 or whose luma differs by more than 2 (of 255) on average: a shift of colour matrix moves it by ~10. */
async function compare(a: VideoOutput, b: VideoOutput): Promise<{ frames: number; below: { frame: number; ssim: number; meanAbsDiff: number }[] }> {
  const [x, y] = await Promise.all([framesOf(a.file), framesOf(b.file)]);
  expect(x).toHaveLength(y.length);
  const similar = await Promise.all(x.map((frame, k) => compareImages(frame, y[k]!)));
  return {
    frames: x.length,
    below: similar.map((v, k) => ({ frame: k, ssim: Math.round(v.ssim * 1e4) / 1e4, meanAbsDiff: Math.round(v.meanAbsDiff * 100) / 100 })).filter((f) => f.ssim < 0.99 || f.meanAbsDiff > 2),
  };
}

describe('Played frames composed outside the browser (issue 33: only what moves is drawn)', () => {
  describe.each([
    // A full-frame video zooming in slowly: every frame is scaled (bilinear) and the picture over it holds from 0.5 s to 2 s, and from 3 s (the logo's fade) to the end.
    ['a full-frame video zooming in', { effect: 'zoomInSlow' }, '#000000'],
    // Half the frame, on the left, three quarters opaque over a coloured background, trimmed and faster than life (frames picked by time, 24 fps into 12).
    ['a smaller, faded, trimmed and sped-up video', { scale: 0.5, position: 'left', offset: { x: 0.05 }, opacity: 0.75, asset: { type: 'video', src: `${CDN}/clip.mp4`, trim: 0.4, speed: 1.25 } }, '#204060'],
    // Stored in BT.601 and tagged so: converted to the output's BT.709 as Chromium converts it to show it.
    ['a video tagged BT.601', { asset: { type: 'video', src: `${CDN}/clip-601.mp4` } }, '#000000'],
  ] as const)('%s', (_name, video, background) => {
    let composed: VideoOutput;
    let reference: VideoOutput;

    beforeAll(async () => {
      const edit = () => overVideo(video as unknown as Record<string, JsonValue>, background);
      composed = await composing.render(edit(), { outputDir: out });
      reference = await frameByFrame.render(edit(), { outputDir: out });
    }, 240_000);

    it('the page draws only the frames where a clip over the video changes by itself, and a picture per clip that fades for each run', () => {
      expect(reference.drawnFrames).toBe(48);
      // Drawn by the page: the title's rise (0–0.5 s: 6 frames) with the video. Composed: 0.5–2 s (18
      // frames: the title, one picture) and 2–4 s (24 frames: the logo fading in, a picture of its
      // own faded frame by frame, and the title, one picture).
      expect(composed.drawnFrames).toBe(6 + 1 + 2);
    });

    it('has the same frames, duration, colour tags and streams as the frame-by-frame render', async () => {
      const [a, b] = await Promise.all([probeStreams(composed.file), probeStreams(reference.file)]);
      expect(a).toMatchObject({ codec: 'h264', width: 320, height: 180, frames: 48 });
      expect(a).toEqual(b);
      expect(composed).toMatchObject({ frames: 48, durationSec: 4, fps: 12 });
      expect(await probeColour(composed.file)).toEqual(MP4_COLOUR);
    });

    it('every frame matches the frame-by-frame render: SSIM >= 0.99 and luma within 2 on average, on each of the 48 frames', async () => {
      const { frames, below } = await compare(composed, reference);
      expect(frames).toBe(48);
      expect(below).toEqual([]);
    });
  });

  describe('clips that slide and fade over the video (a picture of each, moved by whole pixels and faded outside the browser)', () => {
    // The footage bench's overlay at 320×180: a price tag sliding up from below the frame with an
    // overshoot while it fades in, and sliding down out at its end; a logo fading in, and sliding out
    // to the right at its end; a title that holds and fades out at its end.
    const sliding = () => assertEdit({
      timeline: {
        background: '#000000',
        tracks: [
          { clips: [{ asset: { type: 'rich-text', text: 'Summer edit', font: { family: 'Open Sans', size: 28, weight: 700, color: '#ffffff' }, shadow: { offsetX: 0, offsetY: 2, blur: 4, color: '#000000', opacity: 0.6 } }, start: 0, length: 4, width: 300, height: 50, position: 'top', transition: { out: 'fade' } }] },
          { clips: [{ asset: { type: 'text', text: 'Up to 50 % off', width: 220, height: 36, font: { family: 'Open Sans', size: 18, color: '#111111' }, background: { color: '#ffffff', opacity: 0.9, padding: 6, borderRadius: 8 } }, start: 0.5, length: 3.5, position: 'bottom', offset: { y: [{ from: -0.3, to: 0.05, start: 0, length: 1, interpolation: 'bezier', easing: 'easeOutBack' }] }, transition: { in: 'fade', out: 'slideDown' } }] },
          { clips: [{ asset: { type: 'image', src: `${CDN}/logo.png` }, start: 0, length: 4, fit: 'none', position: 'topRight', offset: { x: -0.02, y: -0.03 }, opacity: [{ from: 0, to: 1, start: 0, length: 1 }], transition: { out: 'slideRight' } }] },
          { clips: [{ asset: { type: 'video', src: `${CDN}/clip.mp4` }, start: 0, length: 4, effect: 'zoomInSlow' }] },
        ],
      },
      output,
    });
    let composed: VideoOutput;
    let reference: VideoOutput;

    beforeAll(async () => {
      composed = await composing.render(sliding(), { outputDir: out });
      reference = await frameByFrame.render(sliding(), { outputDir: out });
    }, 240_000);

    it('the page draws a picture per clip that moves or fades and one of the clips that hold, per piece: the frames themselves only before the tag appears', () => {
      expect(reference.drawnFrames).toBe(48);
      // Frames 0–5 (before the tag, a run under 12 frames) are played by the page. 6–47 are one composed
      // run, cut in two pieces (6–29, 30–47: shares of the 48 played frames): in the first the logo
      // (fading in), the tag (sliding up) and the title (holding) are three pictures; in the second the
      // logo slides out, the tag slides down and the title fades out: three again.
      expect(composed.drawnFrames).toBe(6 + 3 + 3);
    });

    it('every frame matches the frame-by-frame render: SSIM >= 0.99 and luma within 2 on average, on each of the 48 frames', async () => {
      const { frames, below } = await compare(composed, reference);
      expect(frames).toBe(48);
      expect(below).toEqual([]);
    });
  });

  it('the page plays what composing would not draw as it does: a video shown under half its size, a video with an alpha channel', async () => {
    const small = await composing.render(overVideo({ scale: 0.2 }), { outputDir: out });
    const alpha = await composing.render(overVideo({ asset: { type: 'video', src: `${CDN}/alpha.webm` }, fit: 'none' }), { outputDir: out });
    // Every frame played by the page with its video (the title's rise included), none composed.
    expect(small).toMatchObject({ frames: 48, drawnFrames: 48 });
    expect(alpha).toMatchObject({ frames: 48, drawnFrames: 48 });
  }, 120_000);

  it('a composed piece that fails is played by the page: the render goes on, the failure reported with its frames', async () => {
    // The page that draws the clips over the video fails (a fault injected where the engine asks for it).
    const engine = composing as unknown as { drawOverlays: (...args: unknown[]) => Promise<void> };
    const drawOverlays = engine.drawOverlays;
    engine.drawOverlays = () => Promise.reject(new Error('the page is gone'));
    failures.length = 0;
    try {
      const done = await composing.render(overVideo({ effect: 'zoomInSlow' }), { outputDir: out });
      expect(done).toMatchObject({ frames: 48, drawnFrames: 48, durationSec: 4 });
      expect(failures.map((f) => f.frames).sort((a, b) => a[0] - b[0])).toEqual([[6, 23], [24, 47]]);
      expect(failures.every((f) => f.reason === 'the page is gone')).toBe(true);
      expect((await probeStreams(done.file)).frames).toBe(48);
    } finally {
      engine.drawOverlays = drawOverlays;
    }
  }, 120_000);
});
