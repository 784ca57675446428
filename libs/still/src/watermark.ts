import sharp from 'sharp';
import { ByteLru } from './cache.js';
import type { Placed } from './compose.js';
import { OWN_SVG, toRaster } from './raster.js';

const cache = new ByteLru<Placed>(64 * 1024 * 1024);

/**
 * The test-mode mark (pk_test_ renders): a faint diagonal "TEST" pattern over the whole frame and a
 * small "TEST RENDER" badge in the bottom-right corner. Visible on any background (white text with a
 * dark outline), never hiding the design. Drawn once per output size.
 */
export function watermarkSvg(width: number, height: number): string {
  const unit = Math.max(8, Math.round(Math.min(width, height) / 9));
  const tile = unit * 5;
  const badge = Math.max(10, Math.round(Math.min(width, height) / 32));
  const badgeWidth = Math.round(badge * 9.6);
  const badgeHeight = Math.round(badge * 2);
  const margin = Math.round(badge * 0.8);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
  <defs>
    <pattern id="wm" width="${tile}" height="${Math.round(tile * 0.6)}" patternUnits="userSpaceOnUse" patternTransform="rotate(-30)">
      <text x="${Math.round(tile * 0.1)}" y="${Math.round(tile * 0.4)}" font-family="DejaVu Sans" font-weight="bold" font-size="${unit}" fill="#ffffff" fill-opacity="0.16" stroke="#000000" stroke-opacity="0.10" stroke-width="${Math.max(1, unit / 40)}">TEST</text>
    </pattern>
  </defs>
  <rect width="100%" height="100%" fill="url(#wm)"/>
  <g transform="translate(${width - badgeWidth - margin} ${height - badgeHeight - margin})">
    <rect width="${badgeWidth}" height="${badgeHeight}" rx="${badge / 2}" fill="#111111" fill-opacity="0.72"/>
    <text x="${badgeWidth / 2}" y="${badgeHeight * 0.66}" text-anchor="middle" font-family="DejaVu Sans" font-weight="bold" font-size="${badge}" fill="#ffffff">TEST RENDER</text>
  </g>
</svg>`;
}

export async function watermarkLayer(width: number, height: number): Promise<Placed> {
  return cache.through(
    `${width}x${height}`,
    async () => ({ raster: await toRaster(sharp(Buffer.from(watermarkSvg(width, height)), OWN_SVG)), left: 0, top: 0 }),
    (p) => p.raster.data.length,
  );
}
