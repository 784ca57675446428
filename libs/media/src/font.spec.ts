import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FontFileError, MAX_FONT_BYTES, readFont } from './font.js';
import { hostileWoff, withFamilyName, woff2FromSfnt, woffFromSfnt } from '#testing/media';

// The shipped font families (scripts/font-packages.txt), installed by the test command.
const LATO = readFileSync('/usr/share/fonts/truetype/lato/Lato-Medium.ttf');
const DEJAVU = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf');
const INTER = readFileSync('/usr/share/fonts/opentype/inter/InterDisplay-MediumItalic.otf');
const CABIN = readFileSync('/usr/share/fonts/opentype/cabin/Cabin-Medium.otf');
const CJK = '/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc';
const OPEN_SANS_WOFF2 = readFileSync(join(import.meta.dirname, 'fixtures/open-sans-regular.woff2'));

/** The sfnt with one table directory entry's tag replaced. */
function renameTable(sfnt: Buffer, from: string, to: string): Buffer {
  const copy = Buffer.from(sfnt);
  for (let i = 0; i < copy.readUInt16BE(4); i++) if (copy.toString('latin1', 12 + i * 16, 16 + i * 16) === from) copy.write(to, 12 + i * 16, 'latin1');
  return copy;
}

const family = async (file: Buffer) => (await readFont(file)).families[0];
const rejection = async (file: Buffer): Promise<string> => {
  try {
    await readFont(file);
  } catch (err) {
    if (err instanceof FontFileError) return err.reason;
    throw err;
  }
  throw new Error('the font was accepted');
};

describe('font family names (issue 14: "a font\'s family name")', () => {
  it('reads the typographic family (name ID 16) before the legacy one (ID 1)', async () => {
    expect(await family(LATO)).toBe('Lato'); // ID 1 is "Lato Medium"
    expect((await readFont(LATO)).families).toEqual(['Lato', 'Lato Medium']);
    expect(await family(INTER)).toBe('Inter Display');
    expect(await family(CABIN)).toBe('Cabin'); // no ID 16
    expect(await family(DEJAVU)).toBe('DejaVu Serif');
  });

  it('reads WOFF (zlib per table) and WOFF2 (one brotli stream), transformed glyf included, to the sfnt FreeType reads', async () => {
    expect(await family(woffFromSfnt(LATO))).toBe('Lato');
    expect(await family(woffFromSfnt(INTER))).toBe('Inter Display');
    expect(await family(woff2FromSfnt(LATO))).toBe('Lato');
    expect(await family(OPEN_SANS_WOFF2)).toBe('Open Sans');
    const woff = await readFont(woffFromSfnt(INTER));
    expect([woff.format, woff.ext, woff.sfnt.readUInt32BE(0)]).toEqual(['woff', 'otf', 0x4f54544f]);
    expect((await readFont(OPEN_SANS_WOFF2)).format).toBe('woff2');
  });

  it('reads every font this machine ships (collections: the first face) without refusing one', async () => {
    const files = [...new Set(execFileSync('fc-list', ['--format', '%{file}\n'], { encoding: 'utf8' }).split('\n').filter((f) => /\.(ttf|otf|ttc)$/i.test(f)))];
    expect(files.length).toBeGreaterThan(50);
    const refused: string[] = [];
    for (const file of files) await readFont(readFileSync(file)).catch((err: Error) => refused.push(`${file}: ${err.message}`));
    expect(refused).toEqual([]);
    expect((await readFont(readFileSync(CJK))).families).toContain('Noto Serif CJK JP');
  });

  it('rejects broken fonts with a reason', async () => {
    expect(await rejection(LATO.subarray(0, 200))).toMatch(/damaged/);
    expect(await rejection(LATO.subarray(0, LATO.length / 2))).toMatch(/runs past the end/);
    expect(await rejection(renameTable(LATO, 'name', 'nane'))).toMatch(/no "name" table/);
    expect(await rejection(renameTable(DEJAVU, 'head', 'heed'))).toMatch(/no "head" table/);
    expect(await rejection(renameTable(DEJAVU, 'post', 'head'))).toMatch(/two "head" tables/);
    const woff = woffFromSfnt(LATO);
    const glyfEntry = Array.from({ length: woff.readUInt16BE(12) }, (_, i) => 44 + i * 20).find((at) => woff.toString('latin1', at, at + 4) === 'glyf')!;
    const corrupt = Buffer.from(woff);
    corrupt.fill(0x55, corrupt.readUInt32BE(glyfEntry + 4) + 2, corrupt.readUInt32BE(glyfEntry + 4) + 200);
    expect(await rejection(corrupt)).toMatch(/"glyf" table does not decompress/);
    expect(await rejection(woff.subarray(0, woff.length - 100))).toMatch(/length does not match/);
    const woff2 = Buffer.from(OPEN_SANS_WOFF2);
    woff2.fill(0x55, woff2.length - 4000, woff2.length - 3000);
    expect(await rejection(woff2)).toMatch(/does not decompress/);
  });
});

describe('hostile fonts (issue 27): one limit, every range checked before a byte is inflated', () => {
  it(`a WOFF whose tables share one deflated blob of zeros (25 KB → 128 MB) is refused from its directory: at most ${MAX_FONT_BYTES / 1024 / 1024} MB`, async () => {
    const bomb = hostileWoff.bomb(DEJAVU);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    expect(await rejection(bomb)).toBe('The font unpacks to 128 MB; at most 32 MB is read');
    // Nothing was inflated: the refusal comes before any table is unpacked.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(8 * 1024 * 1024);
    // Just under the limit in total, still sharing one blob: refused as overlapping, never inflated.
    expect(await rejection(hostileWoff.bomb(DEJAVU, 3, 8 * 1024 * 1024))).toMatch(/^The font file is damaged: its "zz0\d" table and "zz0\d" table overlap$/);
  });

  it('a header that announces more than the limit is refused before the directory is read (WOFF and WOFF2)', async () => {
    const woff = woffFromSfnt(DEJAVU);
    woff.writeUInt32BE(MAX_FONT_BYTES + 1, 16);
    expect(await rejection(woff)).toBe('The font unpacks to 32 MB; at most 32 MB is read');
    const woff2 = Buffer.from(OPEN_SANS_WOFF2);
    woff2.writeUInt32BE(200 * 1024 * 1024, 16);
    expect(await rejection(woff2)).toBe('The font unpacks to 200 MB; at most 32 MB is read');
  });

  it('a WOFF2 directory whose tables add up to more than the limit is refused before decoding', async () => {
    // One table declared at 40 MB (the header's total left honest-looking): the directory's sum is over.
    const sfnt = withFamilyName(DEJAVU, 'Big');
    const woff2 = woff2FromSfnt(sfnt);
    const at = 48 + 1 + 4; // first entry: flags, tag, then its base128 length
    const big = Buffer.concat([woff2.subarray(0, at), Buffer.from([0x94, 0xe2, 0xc0, 0x00]), woff2.subarray(at).subarray(skipBase128(woff2, at))]);
    big.writeUInt32BE(big.length, 8);
    expect(await rejection(big)).toMatch(/^The font unpacks to 4\d(\.\d)? MB; at most 32 MB is read$/);
  });

  it('overlapping, out-of-range and oversized-compressed tables are refused', async () => {
    expect(await rejection(hostileWoff.overlapping(DEJAVU))).toMatch(/^The font file is damaged: its "(name|zz00)" table and "(name|zz00)" table overlap$/);
    expect(await rejection(hostileWoff.intoDirectory(DEJAVU))).toBe('The font file is damaged: its "zz00" table starts inside the header or table directory');
    expect(await rejection(hostileWoff.pastTheEnd(DEJAVU))).toBe('The font file is damaged: its "zz00" table runs past the end of the file');
    expect(await rejection(hostileWoff.compLongerThanOrig(DEJAVU))).toBe('The font file is damaged: its "name" table is stored larger than it unpacks');
  });

  it('a file over the limit is refused whatever its format, unread', async () => {
    const huge = Buffer.alloc(MAX_FONT_BYTES + 1);
    LATO.copy(huge);
    expect(await rejection(huge)).toBe('The font file is 32 MB; at most 32 MB is read');
  });

  it('a family, full or PostScript name holding a control character (a form feed before CSS) is refused', async () => {
    expect(await rejection(withFamilyName(DEJAVU, 'Evil\f} body { background: url(http://127.0.0.1:9/x) }'))).toBe(
      "The font's family name (name ID 1) holds a control character (U+000C); a font name must be plain text",
    );
    for (const ch of ['\0', '\n', '\x1b', '\x7f', '\x85', '\x9f']) expect(await rejection(withFamilyName(DEJAVU, `Evil${ch}Sans`))).toMatch(/control character/);
    // Letters outside ASCII are names like any other (Macintosh Roman's 0x80–0x9f are letters, not controls).
    expect((await readFont(withFamilyName(DEJAVU, 'Ärger Grotesk'))).families[0]).toBe('Ärger Grotesk');
  });
});

/** The offset just past the base128 number at `at`. */
function skipBase128(buf: Buffer, at: number): number {
  let n = 0;
  while (buf[at + n]! & 0x80) n++;
  return n + 1;
}
