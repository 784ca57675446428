import { brotliDecompressSync, inflateSync } from 'node:zlib';
import { AssetRejected } from './rejected.js';

/** The largest font file read (the largest families shipped, CJK ones, are about 20 MB). */
export const MAX_FONT_BYTES = 64 * 1024 * 1024;
/** The largest font a WOFF or WOFF2 may decompress to. */
const MAX_SFNT_BYTES = 256 * 1024 * 1024;

const broken = (why: string) => new AssetRejected(`The font file is damaged: ${why}`);

/** The tables of a font, by tag, as the sfnt holds them (decompressed from WOFF and WOFF2). */
type Tables = Map<string, Buffer>;

/**
 * The family name of a TrueType, OpenType, WOFF or WOFF2 font: name ID 16 (typographic family),
 * else 1. The font's structure is checked on the way (table directory within the file, WOFF
 * tables and the WOFF2 stream decompressing to their declared sizes, the tables a font cannot lack);
 * a font that fails any check is rejected as damaged.
 */
export function fontFamily(file: Buffer): string {
  const tag = file.toString('latin1', 0, 4);
  const tables = tag === 'wOFF' ? woffTables(file) : tag === 'wOF2' ? woff2Tables(file) : sfntTables(file);
  for (const required of ['head', 'name', 'cmap', 'maxp']) if (!tables.has(required)) throw broken(`it has no "${required}" table`);
  const head = tables.get('head')!;
  if (head.length < 54 || head.readUInt32BE(12) !== 0x5f0f3cf5) throw broken('its "head" table is invalid');
  const maxp = tables.get('maxp')!;
  if (maxp.length < 6 || maxp.readUInt16BE(4) === 0) throw broken('it has no glyphs');
  const family = nameRecord(tables.get('name')!, 16) ?? nameRecord(tables.get('name')!, 1);
  if (!family) throw new AssetRejected('The font has no family name');
  return family;
}

function sfntTables(file: Buffer): Tables {
  if (file.length < 12) throw broken('it is too short');
  const version = file.readUInt32BE(0);
  if (version === 0x74746366) throw new AssetRejected('Font collections (.ttc) are not accepted; upload one font of the collection');
  const numTables = file.readUInt16BE(4);
  if (numTables === 0 || 12 + numTables * 16 > file.length) throw broken('its table directory is cut off');
  const tables: Tables = new Map();
  for (let i = 0; i < numTables; i++) {
    const at = 12 + i * 16;
    const offset = file.readUInt32BE(at + 8);
    const length = file.readUInt32BE(at + 12);
    if (offset + length > file.length) throw broken(`its "${file.toString('latin1', at, at + 4).trim()}" table runs past the end of the file`);
    tables.set(file.toString('latin1', at, at + 4), file.subarray(offset, offset + length));
  }
  return tables;
}

function woffTables(file: Buffer): Tables {
  if (file.length < 44) throw broken('its header is cut off');
  if (file.readUInt32BE(4) === 0x74746366) throw new AssetRejected('Font collections are not accepted; upload one font of the collection');
  if (file.readUInt32BE(8) !== file.length) throw broken('its length does not match its header');
  const numTables = file.readUInt16BE(12);
  if (numTables === 0 || 44 + numTables * 20 > file.length) throw broken('its table directory is cut off');
  if (file.readUInt32BE(16) > MAX_SFNT_BYTES) throw broken('it decompresses to more than 256 MB');
  const tables: Tables = new Map();
  for (let i = 0; i < numTables; i++) {
    const at = 44 + i * 20;
    const tag = file.toString('latin1', at, at + 4);
    const offset = file.readUInt32BE(at + 4);
    const compLength = file.readUInt32BE(at + 8);
    const origLength = file.readUInt32BE(at + 12);
    if (offset + compLength > file.length || compLength > origLength || origLength > MAX_SFNT_BYTES) throw broken(`its "${tag.trim()}" table is out of bounds`);
    const stored = file.subarray(offset, offset + compLength);
    let data: Buffer;
    try {
      data = compLength < origLength ? inflateSync(stored, { maxOutputLength: origLength }) : stored;
    } catch {
      throw broken(`its "${tag.trim()}" table does not decompress`);
    }
    if (data.length !== origLength) throw broken(`its "${tag.trim()}" table decompresses to the wrong size`);
    tables.set(tag, data);
  }
  return tables;
}

/** The tags a WOFF2 table directory names by index (WOFF2 §5.1, "Known Table Tags"). */
const WOFF2_TAGS = 'cmap head hhea hmtx maxp name OS/2 post cvt_ fpgm glyf loca prep CFF_ VORG EBDT EBLC gasp hdmx kern LTSH PCLT VDMX vhea vmtx BASE GDEF GPOS GSUB EBSC JSTF MATH CBDT CBLC COLR CPAL SVG_ sbix acnt avar bdat bloc bsln cvar fdsc feat fmtx fvar gvar hsty just lcar mort morx opbd prop trak Zapf Silf Glat Gloc Feat Sill'
  .split(' ')
  .map((t) => t.replace('_', ' '));

function woff2Tables(file: Buffer): Tables {
  if (file.length < 48) throw broken('its header is cut off');
  if (file.readUInt32BE(4) === 0x74746366) throw new AssetRejected('Font collections are not accepted; upload one font of the collection');
  if (file.readUInt32BE(8) !== file.length) throw broken('its length does not match its header');
  const numTables = file.readUInt16BE(12);
  const compressedSize = file.readUInt32BE(20);
  if (numTables === 0) throw broken('it has no tables');
  let at = 48;
  const base128 = (): number => {
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (at >= file.length) throw broken('its table directory is cut off');
      const byte = file[at++]!;
      if (i === 0 && byte === 0x80) throw broken('its table directory is invalid');
      value = value * 128 + (byte & 0x7f);
      if (value > 0xffffffff) throw broken('its table directory is invalid');
      if (!(byte & 0x80)) return value;
    }
    throw broken('its table directory is invalid');
  };
  const entries: { tag: string; length: number }[] = [];
  let total = 0;
  for (let i = 0; i < numTables; i++) {
    if (at >= file.length) throw broken('its table directory is cut off');
    const flags = file[at++]!;
    let tag: string;
    if ((flags & 0x3f) === 0x3f) {
      if (at + 4 > file.length) throw broken('its table directory is cut off');
      tag = file.toString('latin1', at, at + 4);
      at += 4;
    } else {
      const known = WOFF2_TAGS[flags & 0x3f];
      if (!known) throw broken('its table directory is invalid');
      tag = known;
    }
    const transform = flags >> 6;
    const origLength = base128();
    // glyf and loca are transformed unless their version is 3; the other tables only with a version other than 0.
    const transformed = tag === 'glyf' || tag === 'loca' ? transform !== 3 : transform !== 0;
    const length = transformed ? base128() : origLength;
    entries.push({ tag, length });
    total += length;
  }
  if (total > MAX_SFNT_BYTES) throw broken('it decompresses to more than 256 MB');
  if (at + compressedSize > file.length) throw broken('its compressed data is cut off');
  let stream: Buffer;
  try {
    stream = brotliDecompressSync(file.subarray(at, at + compressedSize), { maxOutputLength: Math.max(1, total) });
  } catch {
    throw broken('its compressed data does not decompress');
  }
  if (stream.length !== total) throw broken('its compressed data decompresses to the wrong size');
  const tables: Tables = new Map();
  let offset = 0;
  for (const { tag, length } of entries) {
    tables.set(tag, stream.subarray(offset, offset + length));
    offset += length;
  }
  return tables;
}

/** A name table string for `nameId`: Windows English first, then any Windows or Unicode record, then Macintosh Roman. */
function nameRecord(name: Buffer, nameId: number): string | undefined {
  if (name.length < 6) throw broken('its "name" table is cut off');
  const count = name.readUInt16BE(2);
  const storage = name.readUInt16BE(4);
  if (6 + count * 12 > name.length) throw broken('its "name" table is cut off');
  const candidates: { rank: number; text: string }[] = [];
  for (let i = 0; i < count; i++) {
    const at = 6 + i * 12;
    if (name.readUInt16BE(at + 6) !== nameId) continue;
    const platform = name.readUInt16BE(at);
    const encoding = name.readUInt16BE(at + 2);
    const language = name.readUInt16BE(at + 4);
    const start = storage + name.readUInt16BE(at + 10);
    const bytes = name.subarray(start, start + name.readUInt16BE(at + 8));
    if (start + bytes.length > name.length) throw broken('its "name" table is cut off');
    let rank: number;
    let text: string;
    if (platform === 3 || platform === 0) {
      rank = platform === 3 ? (language === 0x409 ? 0 : 1) : 2;
      text = utf16be(bytes);
    } else if (platform === 1 && encoding === 0) {
      rank = language === 0 ? 3 : 4;
      text = bytes.toString('latin1');
    } else continue;
    text = [...text].filter((ch) => ch >= ' ' && ch !== '\x7f').join('').trim().slice(0, 256);
    if (text) candidates.push({ rank, text });
  }
  return candidates.sort((a, b) => a.rank - b.rank)[0]?.text;
}

function utf16be(bytes: Buffer): string {
  const swapped = Buffer.from(bytes.subarray(0, bytes.length & ~1));
  return swapped.swap16().toString('utf16le');
}
