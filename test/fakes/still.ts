import { readFileSync } from 'node:fs';
import sharp from 'sharp';

/**
 * Perceptual comparison for golden-image tests: mean SSIM of the luma channel over 8×8 windows
 * (stride 4), plus the mean absolute difference per channel (0..255) so a colour shift that keeps
 * structure (a wrong filter, a wrong tint) fails as well.
 */
export interface Similarity {
  ssim: number;
  meanAbsDiff: number;
  sameSize: boolean;
}

async function pixels(png: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

interface Lumas {
  a: Float64Array;
  b: Float64Array;
  width: number;
  height: number;
  /** Mean absolute difference per channel (0..255). */
  meanAbsDiff: number;
}

/** Both pictures' luma (over mid grey), or undefined when their sizes differ. */
async function lumas(actual: Buffer, expected: Buffer): Promise<Lumas | undefined> {
  const a = await pixels(actual);
  const b = await pixels(expected);
  if (a.width !== b.width || a.height !== b.height) return undefined;
  const { width, height } = a;
  let diff = 0;
  const lumaA = new Float64Array(width * height);
  const lumaB = new Float64Array(width * height);
  for (let i = 0, p = 0; i < a.data.length; i += 4, p++) {
    for (let c = 0; c < 4; c++) diff += Math.abs(a.data[i + c]! - b.data[i + c]!);
    // Luma of the colour composited over mid grey, so transparency differences count too.
    const over = (d: Buffer) => {
      const alpha = d[i + 3]! / 255;
      const l = 0.299 * d[i]! + 0.587 * d[i + 1]! + 0.114 * d[i + 2]!;
      return l * alpha + 128 * (1 - alpha);
    };
    lumaA[p] = over(a.data);
    lumaB[p] = over(b.data);
  }
  return { a: lumaA, b: lumaB, width, height, meanAbsDiff: diff / (width * height * 4) };
}

/** Mean SSIM of the 8×8 windows (stride 4) lying within `region` (the whole picture by default). */
function ssimWithin(l: Lumas, region = { left: 0, top: 0, width: l.width, height: l.height }): number {
  const { a, b, width } = l;
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  const win = Math.min(8, region.width, region.height);
  let total = 0;
  let windows = 0;
  for (let y = region.top; y + win <= region.top + region.height; y += 4) {
    for (let x = region.left; x + win <= region.left + region.width; x += 4) {
      let ma = 0;
      let mb = 0;
      for (let j = 0; j < win; j++) for (let i = 0; i < win; i++) {
        ma += a[(y + j) * width + x + i]!;
        mb += b[(y + j) * width + x + i]!;
      }
      const n = win * win;
      ma /= n;
      mb /= n;
      let va = 0;
      let vb = 0;
      let cov = 0;
      for (let j = 0; j < win; j++) for (let i = 0; i < win; i++) {
        const da = a[(y + j) * width + x + i]! - ma;
        const db = b[(y + j) * width + x + i]! - mb;
        va += da * da;
        vb += db * db;
        cov += da * db;
      }
      va /= n - 1;
      vb /= n - 1;
      cov /= n - 1;
      total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      windows++;
    }
  }
  return windows ? total / windows : 1;
}

export async function compareImages(actual: Buffer, expected: Buffer): Promise<Similarity> {
  const l = await lumas(actual, expected);
  if (!l) return { ssim: 0, meanAbsDiff: 255, sameSize: false };
  return { ssim: ssimWithin(l), meanAbsDiff: l.meanAbsDiff, sameSize: true };
}

export interface CellSimilarity extends Similarity {
  /** SSIM of each cell of the grid, row by row (top row first). */
  cells: number[][];
  /** The cell least alike: its column and row (0-based) and SSIM. */
  worst: { column: number; row: number; ssim: number };
}

/**
 * compareImages, and the SSIM of each cell of a `columns` × `rows` grid over the picture (cell edges
 * rounded to whole pixels): a difference confined to a small part of the frame (a clip placed a few
 * pixels off, a picture-in-picture showing another frame) sinks its cells while the mean hides it.
 */
export async function compareCells(actual: Buffer, expected: Buffer, grid: { columns: number; rows: number } = { columns: 16, rows: 9 }): Promise<CellSimilarity> {
  const l = await lumas(actual, expected);
  if (!l) return { ssim: 0, meanAbsDiff: 255, sameSize: false, cells: [], worst: { column: 0, row: 0, ssim: 0 } };
  const cells: number[][] = [];
  let worst = { column: 0, row: 0, ssim: Infinity };
  for (let row = 0; row < grid.rows; row++) {
    const top = Math.round((row * l.height) / grid.rows);
    const bottom = Math.round(((row + 1) * l.height) / grid.rows);
    const line: number[] = [];
    for (let column = 0; column < grid.columns; column++) {
      const left = Math.round((column * l.width) / grid.columns);
      const right = Math.round(((column + 1) * l.width) / grid.columns);
      const ssim = ssimWithin(l, { left, top, width: right - left, height: bottom - top });
      line.push(ssim);
      if (ssim < worst.ssim) worst = { column, row, ssim };
    }
    cells.push(line);
  }
  return { ssim: ssimWithin(l), meanAbsDiff: l.meanAbsDiff, sameSize: true, cells, worst };
}

/**
 * DejaVu Serif (a Debian font package the tests install) with its names rewritten to
 * "Zqxfnt Serif": a family no machine has installed, for testing `timeline.fonts`.
 */
export function renamedFont(file = '/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf'): Buffer {
  const bytes = Buffer.from(readFileSync(file));
  for (const [from, to] of [[Buffer.from('DejaVu', 'latin1'), Buffer.from('Zqxfnt', 'latin1')], [Buffer.from('DejaVu', 'utf16le').swap16(), Buffer.from('Zqxfnt', 'utf16le').swap16()]] as const) {
    for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1)) to.copy(bytes, at);
  }
  return bytes;
}
