import { inflateSync } from 'node:zlib';
import { AssetRejected } from './rejected.js';

/**
 * The one font reader: the media library's upload check and the renderers' `timeline.fonts` both
 * read fonts here, under one limit. TrueType, OpenType/CFF, collections (their first face), WOFF
 * (tables inflated here) and WOFF2 (Google's decoder compiled to WebAssembly: wawoff2) are read to
 * the plain sfnt FreeType loads, with the family names the font declares.
 *
 * Everything the header and the table directory can say is checked before a byte is inflated: the
 * file and the sum of the tables' declared sizes within MAX_FONT_BYTES, every table inside the file
 * and after the directory, no two tables' stored bytes overlapping, none stored larger than it
 * unpacks; then each table is inflated to at most its declared size (issue 27: a 17 KB WOFF whose
 * tables share one blob of deflated zeros unpacked to 128 MB).
 */

/**
 * The largest font read, in every format: the file's size and the size it unpacks to (WOFF, WOFF2).
 * The largest fonts shipped (Noto Serif CJK collections) are 27 MB; Google's WOFF2 decoder stops at
 * 30 MB of output itself.
 */
export const MAX_FONT_BYTES = 32 * 1024 * 1024;

/** A font the reader refuses; its reason is written for the user (an asset's error, a render's error by path). */
export class FontFileError extends AssetRejected {
  constructor(reason: string) {
    super(reason);
    this.name = 'FontFileError';
  }
}

export interface FontFile {
  format: 'ttf' | 'otf' | 'ttc' | 'woff' | 'woff2';
  /** The extension of `sfnt`'s kind: ttf (TrueType outlines), otf (CFF) or ttc. */
  ext: 'ttf' | 'otf' | 'ttc';
  /** Family names, best first: the typographic family (name ID 16), then the legacy one (ID 1), Windows English first. */
  families: string[];
  /** The bytes FreeType reads: the file itself, or the sfnt a WOFF or WOFF2 packs. */
  sfnt: Buffer;
}

const mb = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
const damaged = (why: string) => new FontFileError(`The font file is damaged: ${why}`);
const tooLarge = (what: string, bytes: number) => new FontFileError(`The font ${what} ${mb(bytes)}; at most ${mb(MAX_FONT_BYTES)} is read`);
const collection = () => new FontFileError('WOFF and WOFF2 font collections are not read; use one font of the collection');

const TAG = { ttcf: 0x74746366, wOFF: 0x774f4646, wOF2: 0x774f4632, OTTO: 0x4f54544f };
const SFNT_VERSIONS = new Set([0x00010000, TAG.OTTO, 0x74727565 /* true */]);
const pad4 = (n: number) => (n + 3) & ~3;

/** Refuses a font file over MAX_FONT_BYTES (whatever its format) before it is read. */
export function checkFontSize(bytes: number): void {
  if (bytes > MAX_FONT_BYTES) throw tooLarge('file is', bytes);
}

/** Reads a font in any accepted format; throws FontFileError with the reason for a font it refuses. */
export async function readFont(bytes: Buffer): Promise<FontFile> {
  if (bytes.length < 4 || bytes.readUInt32BE(0) !== TAG.wOF2) return parseFont(bytes);
  checkFontSize(bytes.length);
  checkWoff2(bytes);
  const { default: decompress } = await import('wawoff2/decompress.js');
  let sfnt: Buffer;
  try {
    sfnt = Buffer.from(await decompress(bytes));
  } catch {
    throw damaged('its compressed data does not decompress');
  }
  if (sfnt.length > MAX_FONT_BYTES) throw tooLarge('unpacks to', sfnt.length);
  return { ...parseFont(sfnt), format: 'woff2' };
}

/** `readFont` for every format but WOFF2 (which needs the asynchronous decoder). */
export function parseFont(bytes: Buffer): FontFile {
  checkFontSize(bytes.length);
  if (bytes.length < 12) throw damaged('it is too short to be a font');
  const tag = bytes.readUInt32BE(0);
  if (tag === TAG.wOF2) throw new FontFileError('A WOFF2 font must be read with readFont');
  if (tag === TAG.wOFF) {
    const sfnt = woffToSfnt(bytes);
    return { format: 'woff', ...sfntFont(sfnt, 0) };
  }
  if (tag === TAG.ttcf) {
    if (bytes.length < 16 || bytes.readUInt32BE(8) < 1) throw damaged('the font collection is empty');
    const families = sfntFont(bytes, bytes.readUInt32BE(12)).families;
    return { format: 'ttc', ext: 'ttc', families, sfnt: bytes };
  }
  if (!SFNT_VERSIONS.has(tag)) throw new FontFileError('The file is not a TrueType, OpenType, WOFF or WOFF2 font');
  const font = sfntFont(bytes, 0);
  return { format: font.ext === 'otf' ? 'otf' : 'ttf', ...font };
}

/**
 * The table directory of the sfnt face starting at `at` (tag → place in `file`): every table inside
 * the file and after the directory, no tag twice. Also read by the PDF text layer (libs/still pdf-font.ts).
 */
export function sfntTables(file: Buffer, at = 0): Map<string, { offset: number; length: number }> {
  if (at + 12 > file.length) throw damaged('its table directory is cut off');
  const numTables = file.readUInt16BE(at + 4);
  const end = at + 12 + numTables * 16;
  if (numTables === 0 || end > file.length) throw damaged('its table directory is cut off');
  const tables = new Map<string, { offset: number; length: number }>();
  for (let i = 0; i < numTables; i++) {
    const rec = at + 12 + i * 16;
    const tag = file.toString('latin1', rec, rec + 4);
    const offset = file.readUInt32BE(rec + 8);
    const length = file.readUInt32BE(rec + 12);
    if (tables.has(tag)) throw damaged(`it has two "${tag.trim()}" tables`);
    if (offset + length > file.length) throw damaged(`its "${tag.trim()}" table runs past the end of the file`);
    if (length > 0 && offset < end) throw damaged(`its "${tag.trim()}" table starts inside the table directory`);
    tables.set(tag, { offset, length });
  }
  return tables;
}

/** The face whose table directory starts at `at`: its tables checked, its family names read. */
function sfntFont(file: Buffer, at: number): { ext: 'ttf' | 'otf'; families: string[]; sfnt: Buffer } {
  const tables = new Map([...sfntTables(file, at)].map(([tag, { offset, length }]) => [tag, file.subarray(offset, offset + length)]));
  for (const required of ['head', 'name', 'cmap', 'maxp']) if (!tables.has(required)) throw damaged(`it has no "${required}" table`);
  const head = tables.get('head')!;
  if (head.length < 54 || head.readUInt32BE(12) !== 0x5f0f3cf5) throw damaged('its "head" table is invalid');
  const maxp = tables.get('maxp')!;
  if (maxp.length < 6 || maxp.readUInt16BE(4) === 0) throw damaged('it has no glyphs');
  const families = familyNames(tables.get('name')!);
  return { ext: file.readUInt32BE(at) === TAG.OTTO ? 'otf' : 'ttf', families, sfnt: file };
}

/**
 * What WOFF 1.0 and 2.0 headers share (same offsets): the header whole (`headerBytes`), no collection
 * flavour, the length the file has, and the unpacked size it declares within the limit.
 */
function checkWoffHeader(file: Buffer, headerBytes: number): void {
  if (file.length < headerBytes) throw damaged('its header is cut off');
  if (file.readUInt32BE(4) === TAG.ttcf) throw collection();
  if (file.readUInt32BE(8) !== file.length) throw damaged('its length does not match its header');
  const declared = file.readUInt32BE(16);
  if (declared > MAX_FONT_BYTES) throw tooLarge('unpacks to', declared);
}

/**
 * WOFF 1.0 → sfnt: the whole header and directory checked first (sizes, ranges, overlaps), then each
 * table inflated to at most its declared size behind a rebuilt table directory.
 */
function woffToSfnt(file: Buffer): Buffer {
  checkWoffHeader(file, 44);
  const numTables = file.readUInt16BE(12);
  const directoryEnd = 44 + numTables * 20;
  if (numTables === 0 || directoryEnd > file.length) throw damaged('its table directory is cut off');
  const entries: { tag: string; offset: number; compLength: number; origLength: number; checksum: number }[] = [];
  const ranges: { what: string; start: number; end: number }[] = [];
  const range = (what: string, start: number, length: number) => {
    if (length === 0) return;
    if (start < directoryEnd) throw damaged(`its ${what} starts inside the header or table directory`);
    if (start + length > file.length) throw damaged(`its ${what} runs past the end of the file`);
    ranges.push({ what, start, end: start + length });
  };
  let unpacked = 12 + numTables * 16;
  for (let i = 0; i < numTables; i++) {
    const at = 44 + i * 20;
    const tag = file.toString('latin1', at, at + 4);
    const entry = { tag, offset: file.readUInt32BE(at + 4), compLength: file.readUInt32BE(at + 8), origLength: file.readUInt32BE(at + 12), checksum: file.readUInt32BE(at + 16) };
    if (entries.some((e) => e.tag === tag)) throw damaged(`it has two "${tag.trim()}" tables`);
    if (entry.compLength > entry.origLength) throw damaged(`its "${tag.trim()}" table is stored larger than it unpacks`);
    range(`"${tag.trim()}" table`, entry.offset, entry.compLength);
    unpacked += pad4(entry.origLength);
    entries.push(entry);
  }
  if (unpacked > MAX_FONT_BYTES) throw tooLarge('unpacks to', unpacked);
  range('metadata', file.readUInt32BE(24), file.readUInt32BE(28));
  range('private data', file.readUInt32BE(36), file.readUInt32BE(40));
  ranges.sort((a, b) => a.start - b.start);
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i]!.start < ranges[i - 1]!.end) throw damaged(`its ${ranges[i - 1]!.what} and ${ranges[i]!.what} overlap`);
  }

  const out = Buffer.alloc(unpacked);
  out.writeUInt32BE(file.readUInt32BE(4), 0);
  out.writeUInt16BE(numTables, 4);
  const log2 = Math.floor(Math.log2(numTables));
  out.writeUInt16BE(16 * 2 ** log2, 6);
  out.writeUInt16BE(log2, 8);
  out.writeUInt16BE(numTables * 16 - 16 * 2 ** log2, 10);
  let at = 12 + numTables * 16;
  entries.forEach(({ tag, offset, compLength, origLength, checksum }, i) => {
    const stored = file.subarray(offset, offset + compLength);
    let data: Buffer;
    try {
      data = compLength < origLength ? inflateSync(stored, { maxOutputLength: origLength }) : stored;
    } catch {
      throw damaged(`its "${tag.trim()}" table does not decompress to its declared size`);
    }
    if (data.length !== origLength) throw damaged(`its "${tag.trim()}" table does not decompress to its declared size`);
    const rec = 12 + i * 16;
    out.write(tag, rec, 'latin1');
    out.writeUInt32BE(checksum, rec + 4);
    out.writeUInt32BE(at, rec + 8);
    out.writeUInt32BE(origLength, rec + 12);
    data.copy(out, at);
    at += pad4(origLength);
  });
  return out;
}

/** The tags a WOFF2 table directory names by index (WOFF2 §5.1, "Known Table Tags"). */
const WOFF2_TAGS = 'cmap head hhea hmtx maxp name OS/2 post cvt_ fpgm glyf loca prep CFF_ VORG EBDT EBLC gasp hdmx kern LTSH PCLT VDMX vhea vmtx BASE GDEF GPOS GSUB EBSC JSTF MATH CBDT CBLC COLR CPAL SVG_ sbix acnt avar bdat bloc bsln cvar fdsc feat fmtx fvar gvar hsty just lcar mort morx opbd prop trak Zapf Silf Glat Gloc Feat Sill'
  .split(' ')
  .map((t) => t.replace('_', ' '));

/** A WOFF2's header and table directory: the sizes it declares within the limit, its compressed stream inside the file. */
function checkWoff2(file: Buffer): void {
  checkWoffHeader(file, 48);
  const numTables = file.readUInt16BE(12);
  if (numTables === 0) throw damaged('it has no tables');
  let at = 48;
  const base128 = (): number => {
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (at >= file.length) throw damaged('its table directory is cut off');
      const byte = file[at++]!;
      if (i === 0 && byte === 0x80) throw damaged('its table directory is invalid');
      value = value * 128 + (byte & 0x7f);
      if (value > 0xffffffff) throw damaged('its table directory is invalid');
      if (!(byte & 0x80)) return value;
    }
    throw damaged('its table directory is invalid');
  };
  const tags = new Set<string>();
  let unpacked = 12 + numTables * 16;
  for (let i = 0; i < numTables; i++) {
    if (at >= file.length) throw damaged('its table directory is cut off');
    const flags = file[at++]!;
    let tag: string | undefined;
    if ((flags & 0x3f) === 0x3f) {
      if (at + 4 > file.length) throw damaged('its table directory is cut off');
      tag = file.toString('latin1', at, at + 4);
      at += 4;
    } else tag = WOFF2_TAGS[flags & 0x3f];
    if (!tag) throw damaged('its table directory is invalid');
    if (tags.has(tag)) throw damaged(`it has two "${tag.trim()}" tables`);
    tags.add(tag);
    const origLength = base128();
    // glyf and loca are transformed unless their version is 3; the other tables only with a version other than 0.
    if (tag === 'glyf' || tag === 'loca' ? flags >> 6 !== 3 : flags >> 6 !== 0) base128();
    unpacked += pad4(origLength);
  }
  if (unpacked > MAX_FONT_BYTES) throw tooLarge('unpacks to', unpacked);
  if (at + file.readUInt32BE(20) > file.length) throw damaged('its compressed data runs past the end of the file');
}

/** The name IDs whose text reaches fontconfig, Pango or a page's CSS: family, full name, PostScript name, typographic family. */
const CHECKED_NAMES = new Set([1, 4, 6, 16]);
/** C0 and C1 control characters and DEL: a form feed in a family name broke out of the CSS string it was written into. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The C0 controls and DEL alone: in other Macintosh scripts' bytes, 0x80–0x9f are parts of characters. */
// eslint-disable-next-line no-control-regex
const C0 = /[\u0000-\u001f\u007f]/;
const MAC_ROMAN = new TextDecoder('macintosh');

/**
 * The family names of a name table (IDs 16 then 1; Windows English first, then any Windows or
 * Unicode record, then Macintosh Roman). A family, full or PostScript name holding a control
 * character is refused.
 */
function familyNames(name: Buffer): string[] {
  if (name.length < 6) throw damaged('its "name" table is cut off');
  const count = name.readUInt16BE(2);
  const storage = name.readUInt16BE(4);
  if (6 + count * 12 > name.length) throw damaged('its "name" table is cut off');
  const candidates: { id: number; rank: number; text: string }[] = [];
  for (let i = 0; i < count; i++) {
    const at = 6 + i * 12;
    const id = name.readUInt16BE(at + 6);
    if (!CHECKED_NAMES.has(id)) continue;
    const [platform, encoding, language] = [name.readUInt16BE(at), name.readUInt16BE(at + 2), name.readUInt16BE(at + 4)];
    const start = storage + name.readUInt16BE(at + 10);
    const end = start + name.readUInt16BE(at + 8);
    if (end > name.length) throw damaged('its "name" table is cut off');
    const bytes = name.subarray(start, end);
    let text: string;
    let rank: number;
    if (platform === 3 || platform === 0) {
      text = Buffer.from(bytes.subarray(0, bytes.length & ~1)).swap16().toString('utf16le');
      rank = platform === 3 ? (language === 0x409 ? 0 : 1) : 2;
    } else if (platform === 1) {
      text = encoding === 0 ? MAC_ROMAN.decode(bytes) : bytes.toString('latin1');
      rank = language === 0 ? 3 : 4;
      if (encoding !== 0) {
        // Another Macintosh script (Japanese, Chinese…): its bytes are checked, its text not used.
        if (C0.test(text)) throw controlCharacter(id, text);
        continue;
      }
    } else continue;
    if (CONTROL.test(text)) throw controlCharacter(id, text);
    if (id === 1 || id === 16) {
      text = text.trim().slice(0, 255);
      if (text) candidates.push({ id, rank, text });
    }
  }
  const families = [...new Set(candidates.sort((a, b) => b.id - a.id || a.rank - b.rank).map((c) => c.text))];
  if (!families.length) throw new FontFileError('The font declares no family name');
  return families;
}

function controlCharacter(id: number, text: string): FontFileError {
  const char = CONTROL.exec(text)?.[0] ?? '\0';
  const code = `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  return new FontFileError(`The font's ${id === 6 ? 'PostScript name' : id === 4 ? 'full name' : 'family name'} (name ID ${id}) holds a control character (${code}); a font name must be plain text`);
}
