import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { FontCatalog, StillEngine } from '#libs/still';
import { compareCells } from '#testing/still';
import { framesOf, makeTestVideo, mapFetcher } from '#testing/video';
import { VideoEngine } from './engine.js';

/**
 * Issue 32, "a still is the frame": a still at time T of an edit (the still engine: sharp, or the
 * browser for frames with a video clip) is the frame at T of the same edit rendered as video, to
 * SSIM 0.97 over the frame and in each cell of a 16 × 9 grid, with a mean difference of at most 3
 * levels (a BT.601/BT.709 or range mix-up shifts saturated colours by more). Each scene is rendered
 * once as a short 640 × 360 mp4 at 25 fps, from its first still's frame to its last; the stills are
 * at times on the output's frame grid that fall between two frames of the 24 fps source.
 *
 * What is compared is the two renderers, so the video is encoded at its best (JPEG 100 frames,
 * quality veryhigh): at the defaults (JPEG 80, CRF 23) the encoder alone costs a cell of moving,
 * grainy footage up to 0.03 (docs/decisions.md "Fidelity (issue 32): still-frame").
 */
const CDN = 'https://cdn.example.com';
const FPS = 25;
const MIN_SSIM = 0.97;
const MAX_MEAN_DIFF = 3;
const files = new Map<string, Buffer>();
let engine: VideoEngine;
let stills: StillEngine;
let out: string;
let workDir: string;

/** A 3:2 "photo": a sky gradient, a sun, hills and two houses (edges and gradients, no flat frame). */
function photo(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400">
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#2a5b9c"/><stop offset="1" stop-color="#f0c27a"/></linearGradient></defs>
    <rect width="600" height="400" fill="url(#sky)"/>
    <circle cx="430" cy="120" r="55" fill="#ffe9a8"/>
    <path d="M0 300 Q120 200 260 290 T600 260 V400 H0 Z" fill="#3f6b3a"/>
    <path d="M0 350 Q180 290 330 350 T600 330 V400 H0 Z" fill="#2c4a2a"/>
    <rect x="80" y="230" width="40" height="70" fill="#8a4b2f"/><rect x="140" y="250" width="30" height="50" fill="#b0703c"/>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'still-frame-test-'));
  // A 4:3 source at 24 fps: a grainy striped picture panning 120 px/s, so each frame differs.
  files.set(`${CDN}/clip.mp4`, await makeTestVideo({ width: 240, height: 180, seconds: 2, fps: 24 }));
  files.set(`${CDN}/photo.png`, await photo());
  // An engine of its own (bundle and browser): the default work folder's bundle is rebuilt by any
  // other checkout of the sources that runs its tests on this machine.
  workDir = join(tmpdir(), 'video-engine-still-frame');
  engine = await VideoEngine.start({ fetch: mapFetcher(files), workDir, jpegQuality: 100 });
  stills = new StillEngine({ fonts: await FontCatalog.system(), fetch: mapFetcher(files), browserStill: (e, o) => engine.renderHtmlStill(e, o) });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  await rm(out, { recursive: true, force: true });
});

const video = (extra: Record<string, JsonValue> = {}, asset: Record<string, JsonValue> = {}): JsonValue => ({ asset: { type: 'video', src: `${CDN}/clip.mp4`, ...asset }, start: 0, length: 1, ...extra });
const image = (extra: Record<string, JsonValue> = {}): JsonValue => ({ asset: { type: 'image', src: `${CDN}/photo.png` }, start: 0, length: 1, ...extra });

interface Scene {
  name: string;
  /** Tracks, top first: each a clip or a list of clips. */
  tracks: JsonValue[];
  /** Timeline seconds of the stills (on the 25 fps grid). */
  times: number[];
}

const SCENES: Scene[] = [
  {
    name: 'picture in picture: a video scaled 0.4, offset and rotated 15° over a photo',
    tracks: [video({ scale: 0.4, offset: { x: 0.22, y: 0.18 }, transform: { rotate: { angle: 15 } } }), image()],
    times: [0.52, 0.8],
  },
  {
    name: 'videos fitted into boxes (cover, contain, crop, none) at the four corners, starting at 0.12 s trimmed 0.25 s',
    tracks: (['cover', 'contain', 'crop', 'none'] as const).map((fit, i) => video({
      fit, width: 280, height: 150, position: (['topLeft', 'topRight', 'bottomLeft', 'bottomRight'] as const)[i]!, start: 0.12, length: 0.88,
    }, { trim: 0.25 })),
    times: [0.36, 0.68],
  },
  {
    name: 'a video at 1.5× speed starting between two output frames, scaled 0.6 and turned -30° at the left',
    tracks: [video({ start: 0.3, length: 0.7, scale: 0.6, position: 'left', offset: { x: 0.05, y: -0.1 }, transform: { rotate: { angle: -30 } } }, { speed: 1.5, trim: 0.1 }), image({ fit: 'cover' })],
    times: [0.6, 0.88],
  },
  {
    name: 'photos placed by the still engine itself: contained, scaled, offset, rotated about their centre',
    tracks: [
      image({ scale: 0.45, position: 'topRight', offset: { x: -0.05, y: -0.08 }, transform: { rotate: { angle: 20 } } }),
      image({ fit: 'none', width: 200, height: 120, position: 'bottomLeft', offset: { x: 0.04, y: 0.06 } }),
      image({ fit: 'contain', scale: 0.5, position: 'left', transform: { rotate: { angle: -10 } } }),
      image({ fit: 'crop' }),
    ],
    times: [0.4],
  },
];

describe('issue 32: a still at T is the frame at T of the same edit as video (SSIM ≥ 0.97 over the frame and in every cell of a 16×9 grid; docs/edit-spec.md "a still is the frame")', () => {
  it.each(SCENES)('$name', async (scene) => {
    const edit = (format: string, capture?: number) => assertEdit({
      timeline: { background: '#1d2b3a', tracks: scene.tracks.map((c) => ({ clips: Array.isArray(c) ? c : [c] })) },
      output: { format, size: { width: 640, height: 360 }, fps: FPS, quality: 'veryhigh', ...(capture === undefined ? {} : { poster: { capture } }) },
    });
    // Only the frames from the first still's to the last's (a part starting mid-clip, as a chunk does).
    const first = Math.round(scene.times[0]! * FPS);
    const frames = await framesOf((await engine.render(edit('mp4'), { outputDir: out, frameRange: [first, Math.round(scene.times.at(-1)! * FPS)] })).file);
    for (const time of scene.times) {
      const still = (await stills.render(edit('png', time))).bytes;
      const frame = frames[Math.round(time * FPS) - first]!;
      const similarity = await compareCells(frame, still);
      expect({
        time,
        sameSize: similarity.sameSize,
        overall: similarity.ssim >= MIN_SSIM ? 'similar' : similarity.ssim,
        cells: similarity.worst.ssim >= MIN_SSIM ? 'every cell similar' : similarity.worst,
        colour: similarity.meanAbsDiff <= MAX_MEAN_DIFF ? 'same' : similarity.meanAbsDiff,
      }).toEqual({ time, sameSize: true, overall: 'similar', cells: 'every cell similar', colour: 'same' });
    }
  });
});
