import { randomFillSync } from 'node:crypto';
import { paintOver, paintOverInBands } from './compose.js';
import { fadeInPlace, PIXELS_PER_TURN, type Raster } from './raster.js';

// A large still's frame-sized layers are faded and painted in JavaScript: in bands that let the
// event loop turn (the worker's job-lock renewals and the stills beside it keep running), with the
// very pixels of one pass.

/** A width × height raster of random pixels (alpha too). */
function noise(width: number, height: number): Raster {
  return { data: randomFillSync(Buffer.allocUnsafe(width * height * 4)), width, height };
}

/** How many times a 1 ms interval timer fires while `work` runs. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  const timer = setInterval(() => turns++, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return turns;
}

describe('still compositing in bands', () => {
  // Bands of 9,000 pixels over a 301 × 203 raster: 29 rows a band, the last band a short one.
  const band = 9_000;
  const width = 301;
  const height = 203;

  it('paintOverInBands paints the same pixels as one paintOver, offset, and clipped left, right and below', async () => {
    const dst = noise(width, height);
    const src = noise(width + 40, height);
    const once = { ...dst, data: Buffer.from(dst.data) };
    paintOver(once, src, -20, 60);
    await paintOverInBands(dst, src, -20, 60, band);
    expect(dst.data.equals(once.data)).toBe(true);
  });

  it('fadeInPlace multiplies alpha alone, every row, rounding as before', async () => {
    const r = noise(width, height);
    const before = Buffer.from(r.data);
    await fadeInPlace(r, 0.6, band);
    let wrong = 0;
    for (let i = 0; i < before.length; i++) {
      const want = i % 4 === 3 ? Math.round(before[i]! * 0.6) : before[i]!;
      if (r.data[i] !== want) wrong++;
    }
    expect(wrong).toBe(0);
  });

  it('a frame-sized layer lets the event loop turn while it is faded and painted', async () => {
    // Three bands of the size the engine uses: one timer turn between the second and the third.
    const big = noise(1024, Math.ceil((2.5 * PIXELS_PER_TURN) / 1024));
    const canvas = noise(big.width, big.height);
    expect(await turnsDuring(async () => {
      await fadeInPlace(big, 0.8);
      await paintOverInBands(canvas, big, 0, 0);
    })).toBeGreaterThanOrEqual(1);
  });
});
