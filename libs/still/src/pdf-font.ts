import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { PDFHexString, PDFString, type PDFDocument, type PDFRef } from 'pdf-lib';
import { sfntTables } from '#libs/media';
import { ByteLru } from './cache.js';

/**
 * Fonts of a PDF's text layer (issue 21): the clip's own TrueType font, cut down to the glyphs the
 * page uses and embedded (a CIDFontType2 with a ToUnicode map), so pdffonts shows it embedded and
 * subset and the words copy out right in any script. Fonts with CFF outlines or in collections (Noto
 * CJK) are replaced for this invisible layer by DejaVu Sans (TrueType, wide coverage).
 *
 * The subset keeps glyph ids ("keep-GID"): glyphs the page does not use are emptied, so no outline,
 * composite or hinting reference needs renumbering; loca and hmtx keep their length (a few KB, which
 * deflate shrinks to little).
 */

const run = promisify(execFile);

/** The font the invisible layer falls back on when the clip's own cannot be subset. */
export const FALLBACK_FAMILY = 'DejaVu Sans';

export interface TrueTypeFont {
  /** Where it was read from (the cache key). */
  path: string;
  bytes: Buffer;
  tables: Map<string, { offset: number; length: number }>;
  unitsPerEm: number;
  numGlyphs: number;
  longLoca: boolean;
  numberOfHMetrics: number;
  ascent: number;
  descent: number;
  bbox: [number, number, number, number];
  postscriptName: string;
  cmap: (codePoint: number) => number;
}

/** CSS weight → fontconfig weight (fontconfig's own scale). */
function fcWeight(weight: number): number {
  const steps: [number, number][] = [[100, 0], [200, 40], [300, 50], [400, 80], [500, 100], [600, 180], [700, 200], [800, 205], [900, 210]];
  return steps.reduce((best, s) => (Math.abs(s[0] - weight) < Math.abs(best[0] - weight) ? s : best))[1];
}

const matches = new Map<string, Promise<string | undefined>>();
/** Font files read for text layers (system faces and downloaded ones), up to 64 MB of them. */
const fonts = new ByteLru<{ font: TrueTypeFont | undefined }>(64 * 1024 * 1024);

/** The file fontconfig draws `family` at `weight` (italic) from, as Pango would pick it. */
export function matchFontFile(family: string, weight: number, italic: boolean): Promise<string | undefined> {
  const pattern = `${family.replace(/([\\:,-])/g, '\\$1')}:weight=${fcWeight(weight)}:slant=${italic ? 100 : 0}`;
  let found = matches.get(pattern);
  if (!found) {
    found = run('fc-match', ['--format', '%{file}|%{index}', pattern]).then(
      ({ stdout }) => {
        const [file, index] = stdout.split('|');
        return file && index === '0' ? file : undefined;
      },
      () => undefined,
    );
    matches.set(pattern, found);
  }
  return found;
}

/** The TrueType font at `path` (glyf outlines, not a collection), or undefined when it is not one. */
export async function loadTrueType(path: string): Promise<TrueTypeFont | undefined> {
  const entry = await fonts.through(
    path,
    () => readFile(path).then((bytes) => ({ font: parseTrueType(path, bytes) }), () => ({ font: undefined })),
    (e) => e.font?.bytes.length ?? 64,
  );
  return entry.font;
}

export function parseTrueType(path: string, bytes: Buffer): TrueTypeFont | undefined {
  try {
    const version = bytes.readUInt32BE(0);
    if (version !== 0x00010000 && version !== 0x74727565) return undefined;
    const tables = sfntTables(bytes); // throws for a directory that points outside the file: no font
    const least: Record<string, number> = { head: 54, hhea: 36, hmtx: 4, maxp: 6, loca: 4, glyf: 0, cmap: 4 };
    for (const [t, length] of Object.entries(least)) if ((tables.get(t)?.length ?? -1) < length) return undefined;
    const head = tables.get('head')!.offset;
    const hhea = tables.get('hhea')!.offset;
    return {
      path,
      bytes,
      tables,
      unitsPerEm: bytes.readUInt16BE(head + 18),
      bbox: [bytes.readInt16BE(head + 36), bytes.readInt16BE(head + 38), bytes.readInt16BE(head + 40), bytes.readInt16BE(head + 42)],
      longLoca: bytes.readInt16BE(head + 50) === 1,
      numGlyphs: bytes.readUInt16BE(tables.get('maxp')!.offset + 4),
      ascent: bytes.readInt16BE(hhea + 4),
      descent: bytes.readInt16BE(hhea + 6),
      numberOfHMetrics: bytes.readUInt16BE(hhea + 34),
      postscriptName: postscriptName(bytes, tables.get('name')) ?? 'Font',
      cmap: safely(safely(cmapLookup, () => 0)(bytes, tables.get('cmap')!.offset), 0),
    };
  } catch {
    return undefined;
  }
}

/**
 * `read` answering `fallback` instead of throwing: a downloaded font is the caller's file, and a table
 * pointing past its end must cost a glyph, never the render (Buffer reads throw RangeError there).
 */
function safely<A extends unknown[], R>(read: (...args: A) => R, fallback: R): (...args: A) => R {
  return (...args) => {
    try {
      return read(...args);
    } catch {
      return fallback;
    }
  };
}

function postscriptName(bytes: Buffer, table: { offset: number } | undefined): string | undefined {
  if (!table) return undefined;
  const count = bytes.readUInt16BE(table.offset + 2);
  const strings = table.offset + bytes.readUInt16BE(table.offset + 4);
  for (let i = 0; i < count; i++) {
    const rec = table.offset + 6 + i * 12;
    if (bytes.readUInt16BE(rec + 6) !== 6) continue;
    const raw = bytes.subarray(strings + bytes.readUInt16BE(rec + 10), strings + bytes.readUInt16BE(rec + 10) + bytes.readUInt16BE(rec + 8));
    const platform = bytes.readUInt16BE(rec);
    const text = platform === 1 ? raw.toString('latin1') : Buffer.from(raw).swap16().toString('utf16le');
    const clean = text.replace(/[^\x21-\x7e]|[[\](){}<>/%]/g, '');
    if (clean) return clean.slice(0, 60);
  }
  return undefined;
}

/** Code point → glyph id from the best Unicode cmap subtable (format 12, else 4); 0 when absent. */
function cmapLookup(bytes: Buffer, cmap: number): (codePoint: number) => number {
  const count = bytes.readUInt16BE(cmap + 2);
  let format4: number | undefined;
  let format12: number | undefined;
  for (let i = 0; i < count; i++) {
    const rec = cmap + 4 + i * 8;
    const platform = bytes.readUInt16BE(rec);
    const encoding = bytes.readUInt16BE(rec + 2);
    const sub = cmap + bytes.readUInt32BE(rec + 4);
    const format = bytes.readUInt16BE(sub);
    const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
    if (!unicode) continue;
    if (format === 12) format12 ??= sub;
    if (format === 4) format4 ??= sub;
  }
  if (format12 !== undefined) {
    const sub = format12;
    const groups = bytes.readUInt32BE(sub + 12);
    return (cp) => {
      let lo = 0;
      let hi = groups - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const g = sub + 16 + mid * 12;
        const start = bytes.readUInt32BE(g);
        const end = bytes.readUInt32BE(g + 4);
        if (cp < start) hi = mid - 1;
        else if (cp > end) lo = mid + 1;
        else return bytes.readUInt32BE(g + 8) + (cp - start);
      }
      return 0;
    };
  }
  if (format4 !== undefined) {
    const sub = format4;
    const segX2 = bytes.readUInt16BE(sub + 6);
    const ends = sub + 14;
    const starts = ends + segX2 + 2;
    const deltas = starts + segX2;
    const offsets = deltas + segX2;
    return (cp) => {
      if (cp > 0xffff) return 0;
      for (let s = 0; s < segX2; s += 2) {
        if (cp > bytes.readUInt16BE(ends + s)) continue;
        const start = bytes.readUInt16BE(starts + s);
        if (cp < start) return 0;
        const delta = bytes.readInt16BE(deltas + s);
        const rangeOffset = bytes.readUInt16BE(offsets + s);
        if (rangeOffset === 0) return (cp + delta) & 0xffff;
        const at = offsets + s + rangeOffset + (cp - start) * 2;
        const glyph = bytes.readUInt16BE(at);
        return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
      }
      return 0;
    };
  }
  return () => 0;
}

/** Where glyph `gid` lies in glyf; an empty range for an entry that points outside the table. */
const glyphRange = safely((font: TrueTypeFont, gid: number): [number, number] => {
  const loca = font.tables.get('loca')!.offset;
  const [start, end] = font.longLoca
    ? [font.bytes.readUInt32BE(loca + gid * 4), font.bytes.readUInt32BE(loca + gid * 4 + 4)]
    : [font.bytes.readUInt16BE(loca + gid * 2) * 2, font.bytes.readUInt16BE(loca + gid * 2 + 2) * 2];
  return end > start && end <= font.tables.get('glyf')!.length ? [start, end] : [0, 0];
}, [0, 0]);

/** Glyph ids a composite glyph is made of. */
const components = safely((font: TrueTypeFont, gid: number): number[] => {
  const [start, end] = glyphRange(font, gid);
  if (end - start < 10) return [];
  const at = font.tables.get('glyf')!.offset + start;
  if (font.bytes.readInt16BE(at) >= 0) return [];
  const out: number[] = [];
  let p = at + 10;
  for (;;) {
    const flags = font.bytes.readUInt16BE(p);
    out.push(font.bytes.readUInt16BE(p + 2));
    p += 4 + (flags & 0x1 ? 4 : 2) + (flags & 0x8 ? 2 : flags & 0x40 ? 4 : flags & 0x80 ? 8 : 0);
    if (!(flags & 0x20) || out.length > 64) return out;
  }
}, []);

export const advance = safely((font: TrueTypeFont, gid: number): number => {
  const hmtx = font.tables.get('hmtx')!;
  const at = Math.min(gid, font.numberOfHMetrics - 1) * 4;
  return at + 2 <= hmtx.length ? font.bytes.readUInt16BE(hmtx.offset + at) : 0;
}, 0);

/** The font with only the glyphs `used` (and the parts of composites) left; ids unchanged. */
export function subsetTrueType(font: TrueTypeFont, used: Iterable<number>): Buffer {
  const keep = new Set<number>([0]);
  const todo = [...used];
  while (todo.length) {
    const gid = todo.pop()!;
    if (gid >= font.numGlyphs || keep.has(gid)) continue;
    keep.add(gid);
    todo.push(...components(font, gid));
  }
  const glyf = font.tables.get('glyf')!.offset;
  const parts: Buffer[] = [];
  const loca = Buffer.alloc((font.numGlyphs + 1) * 4);
  let at = 0;
  for (let gid = 0; gid < font.numGlyphs; gid++) {
    loca.writeUInt32BE(at, gid * 4);
    if (!keep.has(gid)) continue;
    const [start, end] = glyphRange(font, gid);
    if (end <= start) continue;
    const data = font.bytes.subarray(glyf + start, glyf + end);
    const padded = Buffer.alloc((data.length + 3) & ~3);
    data.copy(padded);
    parts.push(padded);
    at += padded.length;
  }
  loca.writeUInt32BE(at, font.numGlyphs * 4);
  const table = (tag: string) => {
    const t = font.tables.get(tag);
    return t ? Buffer.from(font.bytes.subarray(t.offset, t.offset + t.length)) : undefined;
  };
  const head = table('head')!;
  head.writeUInt32BE(0, 8); // checkSumAdjustment: left 0
  head.writeInt16BE(1, 50); // long loca
  const out = new Map<string, Buffer>([['head', head], ['hhea', table('hhea')!], ['hmtx', table('hmtx')!], ['maxp', table('maxp')!], ['loca', loca], ['glyf', Buffer.concat(parts)]]);
  for (const tag of ['cvt ', 'fpgm', 'prep']) {
    const t = table(tag);
    if (t) out.set(tag, t);
  }
  return sfnt(out);
}

function checksum(data: Buffer): number {
  const padded = data.length % 4 ? Buffer.concat([data, Buffer.alloc(4 - (data.length % 4))]) : data;
  let sum = 0;
  for (let i = 0; i < padded.length; i += 4) sum = (sum + padded.readUInt32BE(i)) >>> 0;
  return sum;
}

function sfnt(tables: Map<string, Buffer>): Buffer {
  const tags = [...tables.keys()].sort();
  const log2 = Math.floor(Math.log2(tags.length));
  const header = Buffer.alloc(12 + tags.length * 16);
  header.writeUInt32BE(0x00010000, 0);
  header.writeUInt16BE(tags.length, 4);
  header.writeUInt16BE(16 * 2 ** log2, 6);
  header.writeUInt16BE(log2, 8);
  header.writeUInt16BE(tags.length * 16 - 16 * 2 ** log2, 10);
  const bodies: Buffer[] = [];
  let offset = header.length;
  tags.forEach((tag, i) => {
    const data = tables.get(tag)!;
    const rec = 12 + i * 16;
    header.write(tag, rec, 'latin1');
    header.writeUInt32BE(checksum(data), rec + 4);
    header.writeUInt32BE(offset, rec + 8);
    header.writeUInt32BE(data.length, rec + 12);
    const padded = Buffer.alloc((data.length + 3) & ~3);
    data.copy(padded);
    bodies.push(padded);
    offset += padded.length;
  });
  return Buffer.concat([header, ...bodies]);
}

/** A font of the page's text layer: each character gets a code (CID 1, 2, …) mapped to its glyph. */
export class EmbeddedTextFont {
  private readonly codes = new Map<string, number>();
  constructor(readonly font: TrueTypeFont) {}

  /** The 2-byte codes of `text` as a hex string (characters outside the font show as .notdef but copy out right). */
  encode(text: string): PDFHexString {
    let hex = '';
    for (const ch of text) {
      let cid = this.codes.get(ch);
      if (cid === undefined) {
        cid = this.codes.size + 1;
        this.codes.set(ch, cid);
      }
      hex += cid.toString(16).padStart(4, '0');
    }
    return PDFHexString.of(hex);
  }

  /** Width of `text` in em. */
  width(text: string): number {
    let units = 0;
    for (const ch of text) units += advance(this.font, this.font.cmap(ch.codePointAt(0)!));
    return units / this.font.unitsPerEm;
  }

  /** Writes the font's objects (Type0 over a CIDFontType2 with the subset, CIDToGIDMap, ToUnicode). */
  embed(doc: PDFDocument): PDFRef {
    const f = this.font;
    const entries = [...this.codes.entries()];
    const gids = entries.map(([ch]) => f.cmap(ch.codePointAt(0)!));
    const program = subsetTrueType(f, gids);
    const tag = [...createHash('sha1').update(f.path).update(entries.map(([ch]) => ch).join('')).digest()]
      .slice(0, 6).map((b) => String.fromCharCode(65 + (b % 26))).join('');
    const name = `${tag}+${f.postscriptName}`;
    const em = (v: number) => Math.round((v * 1000) / f.unitsPerEm);
    const ctx = doc.context;
    const fontFile = ctx.register(ctx.flateStream(program, { Length1: program.length }));
    const descriptor = ctx.register(ctx.obj({
      Type: 'FontDescriptor', FontName: name, Flags: 32, FontBBox: f.bbox.map(em), ItalicAngle: 0,
      Ascent: em(f.ascent), Descent: em(f.descent), CapHeight: em(f.ascent), StemV: 80, FontFile2: fontFile,
    }));
    const map = Buffer.alloc((entries.length + 1) * 2);
    gids.forEach((gid, i) => map.writeUInt16BE(gid, (i + 1) * 2));
    const cidToGid = ctx.register(ctx.flateStream(map));
    const widths = gids.map((gid) => em(advance(f, gid)));
    const cidFont = ctx.register(ctx.obj({
      Type: 'Font', Subtype: 'CIDFontType2', BaseFont: name,
      CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
      FontDescriptor: descriptor, DW: 1000, W: [1, widths], CIDToGIDMap: cidToGid,
    }));
    const utf16 = (ch: string) => Buffer.from(ch, 'utf16le').swap16().toString('hex').toUpperCase();
    const lines: string[] = [];
    for (let i = 0; i < entries.length; i += 100) {
      const chunk = entries.slice(i, i + 100);
      lines.push(`${chunk.length} beginbfchar`, ...chunk.map(([ch, cid]) => `<${cid.toString(16).padStart(4, '0')}> <${utf16(ch)}>`), 'endbfchar');
    }
    const cmap = [
      '/CIDInit /ProcSet findresource begin', '12 dict begin', 'begincmap',
      '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def', '/CMapName /Adobe-Identity-UCS def', '/CMapType 2 def',
      '1 begincodespacerange', '<0000> <FFFF>', 'endcodespacerange', ...lines,
      'endcmap', 'CMapName currentdict /CMap defineresource pop', 'end', 'end',
    ].join('\n');
    const toUnicode = ctx.register(ctx.flateStream(Buffer.from(cmap, 'latin1')));
    return ctx.register(ctx.obj({ Type: 'Font', Subtype: 'Type0', BaseFont: name, Encoding: 'Identity-H', DescendantFonts: [cidFont], ToUnicode: toUnicode }));
  }
}

/** The TrueType font of a text layer for a clip's face: its own file, else fontconfig's match, else DejaVu Sans. */
export async function textLayerFont(face: { family: string; file?: string; weight: number; italic?: boolean }): Promise<TrueTypeFont | undefined> {
  const own = face.file ?? (await matchFontFile(face.family, face.weight, face.italic === true));
  const font = own ? await loadTrueType(own) : undefined;
  if (font) return font;
  const fallback = await matchFontFile(FALLBACK_FAMILY, face.weight, false);
  return fallback ? loadTrueType(fallback) : undefined;
}

