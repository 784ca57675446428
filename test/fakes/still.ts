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

export async function compareImages(actual: Buffer, expected: Buffer): Promise<Similarity> {
  const a = await pixels(actual);
  const b = await pixels(expected);
  if (a.width !== b.width || a.height !== b.height) return { ssim: 0, meanAbsDiff: 255, sameSize: false };
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
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  const win = Math.min(8, width, height);
  let total = 0;
  let windows = 0;
  for (let y = 0; y + win <= height; y += 4) {
    for (let x = 0; x + win <= width; x += 4) {
      let ma = 0;
      let mb = 0;
      for (let j = 0; j < win; j++) for (let i = 0; i < win; i++) {
        ma += lumaA[(y + j) * width + x + i]!;
        mb += lumaB[(y + j) * width + x + i]!;
      }
      const n = win * win;
      ma /= n;
      mb /= n;
      let va = 0;
      let vb = 0;
      let cov = 0;
      for (let j = 0; j < win; j++) for (let i = 0; i < win; i++) {
        const da = lumaA[(y + j) * width + x + i]! - ma;
        const db = lumaB[(y + j) * width + x + i]! - mb;
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
  return { ssim: windows ? total / windows : 1, meanAbsDiff: diff / (width * height * 4), sameSize: true };
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
