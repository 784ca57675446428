import { readFileSync } from 'node:fs';
import { PDFDocument } from 'pdf-lib';
import { sfntTables } from '#libs/media';
import { advance, EmbeddedTextFont, parseTrueType, subsetTrueType } from './pdf-font.js';

const FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf';

describe('text-layer fonts (issue 21)', () => {
  test('a subset keeps the used glyphs (ids unchanged) and drops the rest', () => {
    const font = parseTrueType(FILE, readFileSync(FILE))!;
    expect(font.postscriptName).toBe('DejaVuSerif');
    const used = [...'Invoice'].map((ch) => font.cmap(ch.codePointAt(0)!));
    expect(used.every((g) => g > 0)).toBe(true);
    const subset = subsetTrueType(font, used);
    expect(subset.length).toBeLessThan(font.bytes.length / 5);
    const tables = sfntTables(subset);
    expect([...tables.keys()]).toEqual(expect.arrayContaining(['glyf', 'head', 'hhea', 'hmtx', 'loca', 'maxp']));
    // The glyphs of "Invoice" (and .notdef) are all that is left of the outlines, byte for byte.
    const glyf = (bytes: Buffer, t: Map<string, { offset: number; length: number }>) => bytes.subarray(t.get('glyf')!.offset, t.get('glyf')!.offset + t.get('glyf')!.length);
    expect(glyf(subset, tables).length).toBeLessThan(glyf(font.bytes, font.tables).length / 50);
    const loca = tables.get('loca')!.offset;
    for (const g of used) {
      const [start, end] = [subset.readUInt32BE(loca + g * 4), subset.readUInt32BE(loca + g * 4 + 4)];
      expect(end).toBeGreaterThan(start);
      const data = glyf(subset, tables).subarray(start, end);
      expect(glyf(font.bytes, font.tables).includes(data.subarray(0, Math.min(data.length, 40)))).toBe(true);
    }
    expect(advance(font, used[0]!)).toBeGreaterThan(0);
  });

  test('a damaged font costs glyphs, never the render', async () => {
    const bytes = Buffer.from(readFileSync(FILE));
    const font = parseTrueType(FILE, bytes)!;
    // Every loca entry and the cmap's subtable offsets pointed far past the end of the file.
    const loca = font.tables.get('loca')!;
    bytes.fill(0xff, loca.offset, loca.offset + loca.length);
    const cmap = font.tables.get('cmap')!.offset;
    for (let i = 0; i < bytes.readUInt16BE(cmap + 2); i++) bytes.writeUInt32BE(0x7fffffff, cmap + 4 + i * 8 + 4);
    const broken = parseTrueType('broken', bytes)!;
    expect(broken.cmap(65)).toBe(0);
    const layer = new EmbeddedTextFont(broken);
    layer.encode('Still fine');
    expect(layer.width('Still fine')).toBeGreaterThanOrEqual(0);
    const doc = await PDFDocument.create();
    expect(() => layer.embed(doc)).not.toThrow();
    expect(parseTrueType('short', bytes.subarray(0, 100))).toBeUndefined();
    expect(parseTrueType('otf', Buffer.from('OTTO0000000000000000'))).toBeUndefined();
  });
});
