import { inflateSync } from 'node:zlib';

/**
 * Just enough OpenType to use a downloaded font: its family names (the `name` table, IDs 1 and 16)
 * and, for WOFF 1.0, the equivalent sfnt (tables inflated) that FreeType reads as a plain file.
 * TrueType, OpenType/CFF and collections (first face) are read as they are; WOFF2 is decoded first
 * (`readFont`, Google's decoder compiled to WebAssembly: wawoff2).
 */
export class FontFileError extends Error {}

const SFNT_VERSIONS = new Set([0x00010000, 0x4f54544f /* OTTO */, 0x74727565 /* true */]);

export interface ParsedFont {
  /** Family names the font declares (typographic and legacy), as fontconfig lists them. */
  families: string[];
  /** The bytes to hand to FreeType (WOFF converted to sfnt). */
  sfnt: Buffer;
  format: 'ttf' | 'otf' | 'ttc' | 'woff';
}

const WOFF2_TAG = 0x774f4632; /* wOF2 */
/** The largest font a WOFF2 file may unpack to (its header says; Google's decoder caps at 30 MB too). */
export const MAX_WOFF2_SFNT_BYTES = 32 * 1024 * 1024;

/** `parseFont` for every format it reads, WOFF2 included (decoded to the sfnt it packs). */
export async function readFont(bytes: Buffer): Promise<ParsedFont> {
  if (bytes.length < 12 || bytes.readUInt32BE(0) !== WOFF2_TAG) return parseFont(bytes);
  // WOFF2 header: signature, flavor, length, numTables + reserved, totalSfntSize (offset 16), …
  if (bytes.length < 48) throw new FontFileError('the WOFF2 file is truncated');
  if (bytes.readUInt32BE(16) > MAX_WOFF2_SFNT_BYTES) throw new FontFileError(`the WOFF2 font unpacks to more than ${MAX_WOFF2_SFNT_BYTES / 1024 / 1024} MB`);
  const { default: decompress } = await import('wawoff2/decompress.js');
  let sfnt: Buffer;
  try {
    sfnt = Buffer.from(await decompress(bytes));
  } catch {
    throw new FontFileError('the WOFF2 font could not be decoded');
  }
  const parsed = parseFont(sfnt);
  if (parsed.format === 'ttc') throw new FontFileError('WOFF2 font collections are not supported');
  return parsed;
}

export function parseFont(bytes: Buffer): ParsedFont {
  if (bytes.length < 12) throw new FontFileError('the file is too short to be a font');
  const tag = bytes.readUInt32BE(0);
  if (tag === WOFF2_TAG) throw new FontFileError('a WOFF2 font must be decoded first (readFont)');
  if (tag === 0x774f4646 /* wOFF */) {
    const sfnt = woffToSfnt(bytes);
    return { families: familyNames(sfnt, 0), sfnt, format: 'woff' };
  }
  if (tag === 0x74746366 /* ttcf */) {
    if (bytes.length < 16 || bytes.readUInt32BE(8) < 1) throw new FontFileError('the font collection is empty');
    return { families: familyNames(bytes, bytes.readUInt32BE(12)), sfnt: bytes, format: 'ttc' };
  }
  if (!SFNT_VERSIONS.has(tag)) throw new FontFileError('not a TrueType, OpenType or WOFF font');
  return { families: familyNames(bytes, 0), sfnt: bytes, format: tag === 0x4f54544f ? 'otf' : 'ttf' };
}

function need(buf: Buffer, end: number): void {
  if (end > buf.length) throw new FontFileError('the font file is truncated');
}

function findTable(buf: Buffer, offset: number, wanted: string): { offset: number; length: number } | undefined {
  need(buf, offset + 12);
  const count = buf.readUInt16BE(offset + 4);
  need(buf, offset + 12 + count * 16);
  for (let i = 0; i < count; i++) {
    const rec = offset + 12 + i * 16;
    if (buf.toString('latin1', rec, rec + 4) === wanted) {
      const table = { offset: buf.readUInt32BE(rec + 8), length: buf.readUInt32BE(rec + 12) };
      need(buf, table.offset + table.length);
      return table;
    }
  }
  return undefined;
}

function familyNames(buf: Buffer, faceOffset: number): string[] {
  const table = findTable(buf, faceOffset, 'name');
  if (!table) throw new FontFileError('the font has no name table');
  const base = table.offset;
  need(buf, base + 6);
  const count = buf.readUInt16BE(base + 2);
  const strings = base + buf.readUInt16BE(base + 4);
  need(buf, base + 6 + count * 12);
  const names = new Set<string>();
  for (let i = 0; i < count; i++) {
    const rec = base + 6 + i * 12;
    const platform = buf.readUInt16BE(rec);
    const nameId = buf.readUInt16BE(rec + 6);
    if (nameId !== 1 && nameId !== 16) continue;
    const length = buf.readUInt16BE(rec + 8);
    const start = strings + buf.readUInt16BE(rec + 10);
    if (start + length > buf.length) continue;
    const raw = buf.subarray(start, start + length);
    // Windows and Unicode platforms store UTF-16BE; Macintosh Roman is close enough to latin1 for names.
    const name = platform === 1 ? raw.toString('latin1') : utf16be(raw);
    const clean = name.replace(/\0/g, '').trim();
    if (clean) names.add(clean);
  }
  if (names.size === 0) throw new FontFileError('the font declares no family name');
  return [...names];
}

function utf16be(raw: Buffer): string {
  const swapped = Buffer.from(raw);
  swapped.swap16();
  return swapped.toString('utf16le');
}

/** WOFF 1.0 → sfnt: the same tables, inflated, behind a rebuilt table directory. */
function woffToSfnt(woff: Buffer): Buffer {
  need(woff, 44);
  const flavor = woff.readUInt32BE(4);
  const count = woff.readUInt16BE(12);
  need(woff, 44 + count * 20);
  const tables: { tag: Buffer; checksum: number; data: Buffer }[] = [];
  for (let i = 0; i < count; i++) {
    const rec = 44 + i * 20;
    const offset = woff.readUInt32BE(rec + 4);
    const compLength = woff.readUInt32BE(rec + 8);
    const origLength = woff.readUInt32BE(rec + 12);
    need(woff, offset + compLength);
    const packed = woff.subarray(offset, offset + compLength);
    let data: Buffer;
    try {
      data = compLength < origLength ? inflateSync(packed, { maxOutputLength: origLength }) : Buffer.from(packed);
    } catch {
      throw new FontFileError('a WOFF table does not inflate');
    }
    if (data.length !== origLength) throw new FontFileError('a WOFF table has the wrong length');
    tables.push({ tag: woff.subarray(rec, rec + 4), checksum: woff.readUInt32BE(rec + 16), data });
  }
  const headerLength = 12 + count * 16;
  const padded = (n: number) => (n + 3) & ~3;
  const total = tables.reduce((sum, t) => sum + padded(t.data.length), headerLength);
  const out = Buffer.alloc(total);
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(count, 4);
  const log2 = Math.floor(Math.log2(Math.max(1, count)));
  out.writeUInt16BE(16 * 2 ** log2, 6);
  out.writeUInt16BE(log2, 8);
  out.writeUInt16BE(count * 16 - 16 * 2 ** log2, 10);
  let at = headerLength;
  tables.forEach((t, i) => {
    const rec = 12 + i * 16;
    t.tag.copy(out, rec);
    out.writeUInt32BE(t.checksum, rec + 4);
    out.writeUInt32BE(at, rec + 8);
    out.writeUInt32BE(t.data.length, rec + 12);
    t.data.copy(out, at);
    at += padded(t.data.length);
  });
  return out;
}
