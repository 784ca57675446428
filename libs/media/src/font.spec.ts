import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fontFamily } from './font.js';
import { AssetRejected } from './rejected.js';
import { woff2FromSfnt, woffFromSfnt } from './testing.js';

// The shipped font families (scripts/font-packages.txt), installed by the test command.
const LATO = readFileSync('/usr/share/fonts/truetype/lato/Lato-Medium.ttf');
const DEJAVU = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf');
const INTER = readFileSync('/usr/share/fonts/opentype/inter/InterDisplay-MediumItalic.otf');
const CABIN = readFileSync('/usr/share/fonts/opentype/cabin/Cabin-Medium.otf');
const OPEN_SANS_WOFF2 = readFileSync(join(import.meta.dirname, 'fixtures/open-sans-regular.woff2'));

/** The sfnt with one table directory entry's tag replaced. */
function renameTable(sfnt: Buffer, from: string, to: string): Buffer {
  const copy = Buffer.from(sfnt);
  for (let i = 0; i < copy.readUInt16BE(4); i++) if (copy.toString('latin1', 12 + i * 16, 16 + i * 16) === from) copy.write(to, 12 + i * 16, 'latin1');
  return copy;
}

const rejection = (file: Buffer) => {
  try {
    fontFamily(file);
  } catch (err) {
    if (err instanceof AssetRejected) return err.reason;
    throw err;
  }
  throw new Error('the font was accepted');
};

describe('font family names (issue 14: "a font\'s family name")', () => {
  it('reads the typographic family (name ID 16) before the legacy one (ID 1)', () => {
    expect(fontFamily(LATO)).toBe('Lato'); // ID 1 is "Lato Medium"
    expect(fontFamily(INTER)).toBe('Inter Display');
    expect(fontFamily(CABIN)).toBe('Cabin'); // no ID 16
    expect(fontFamily(DEJAVU)).toBe('DejaVu Serif');
  });

  it('reads WOFF (zlib per table) and WOFF2 (one brotli stream), transformed glyf included', () => {
    expect(fontFamily(woffFromSfnt(LATO))).toBe('Lato');
    expect(fontFamily(woffFromSfnt(INTER))).toBe('Inter Display');
    expect(fontFamily(woff2FromSfnt(LATO))).toBe('Lato');
    expect(fontFamily(OPEN_SANS_WOFF2)).toBe('Open Sans');
  });

  it('rejects broken fonts with a reason', () => {
    expect(rejection(LATO.subarray(0, 200))).toMatch(/damaged/);
    expect(rejection(LATO.subarray(0, LATO.length / 2))).toMatch(/runs past the end/);
    expect(rejection(renameTable(LATO, 'name', 'nane'))).toMatch(/no "name" table/);
    expect(rejection(renameTable(DEJAVU, 'head', 'heed'))).toMatch(/no "head" table/);
    const woff = woffFromSfnt(LATO);
    const glyfEntry = Array.from({ length: woff.readUInt16BE(12) }, (_, i) => 44 + i * 20).find((at) => woff.toString('latin1', at, at + 4) === 'glyf')!;
    const corrupt = Buffer.from(woff);
    corrupt.fill(0x55, corrupt.readUInt32BE(glyfEntry + 4) + 2, corrupt.readUInt32BE(glyfEntry + 4) + 200);
    expect(rejection(corrupt)).toMatch(/"glyf" table does not decompress|wrong size/);
    expect(rejection(woff.subarray(0, woff.length - 100))).toMatch(/length does not match/);
    const woff2 = Buffer.from(OPEN_SANS_WOFF2);
    woff2.fill(0x55, woff2.length - 4000, woff2.length - 3000);
    expect(rejection(woff2)).toMatch(/does not decompress|wrong size/);
    expect(rejection(readFileSync('/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc'))).toMatch(/collections/);
  });
});
