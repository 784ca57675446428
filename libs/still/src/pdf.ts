import {
  beginText, endText, setCharacterSpacing, setFontAndSize, setTextMatrix, setTextRenderingMode, showText, TextRenderingMode,
  clip, concatTransformationMatrix, drawObject, endPath, PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFString, PDFHexString,
  popGraphicsState, pushGraphicsState, rectangle, StandardFonts, type PDFPage, type PDFRef,
} from 'pdf-lib';
import sharp from 'sharp';
import type { PdfPageLayout, Rect, Size } from '#libs/edit-spec';
import { EmbeddedTextFont, textLayerFont, type TrueTypeFont } from './pdf-font.js';

export interface PdfText {
  text: string;
  /** Font size, design px. */
  size: number;
  /** Where the text's clip sits in the design viewport (y down). */
  box: Rect;
  /** The face the clip is drawn in (its downloaded file, if any), for the embedded layer font. */
  face?: { family: string; file?: string; weight: number; italic?: boolean };
  /** How the block lays its lines out in the box (TextBlock). */
  lineHeight?: number;
  align?: { horizontal: 'left' | 'center' | 'right'; vertical: 'top' | 'center' | 'bottom' };
  padding?: { top: number; right: number; bottom: number; left: number };
  /** Extra space between letters, design px. */
  letterSpacing?: number;
  /** Moves the text inside the box (title offsets), design px, y down. */
  nudge?: { x: number; y: number };
}

/** An html clip printed by the browser (one vector PDF page of `source` CSS px), laid over the picture. */
export interface PdfHtmlPage {
  pdf: Buffer;
  /** The html's design size, and where its visible part (`crop`, source px) lands (`content`, design px). */
  source: Size;
  content: Rect;
  crop: Rect;
}

/** Characters Helvetica's WinAnsi encoding can carry; others are left out of the hidden text layer. */
function winAnsi(text: string): string {
  return [...text].filter((ch) => {
    const c = ch.codePointAt(0)!;
    return c === 10 || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xff) || '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ'.includes(ch);
  }).join('');
}

/** The pixel data of an 8-bit, non-interlaced PNG: its IDAT chunks joined (a zlib stream of PNG-filtered rows). */
export function pngPixelData(png: Buffer): { width: number; height: number; colors: 1 | 3; data: Buffer } {
  if (png.length < 33 || png.readUInt32BE(0) !== 0x89504e47 || png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const [depth, colorType, , , interlace] = png.subarray(24, 29);
  if (depth !== 8 || interlace !== 0 || (colorType !== 0 && colorType !== 2)) throw new Error('expected an 8-bit, non-interlaced grey or RGB PNG');
  const idat: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    if (type === 'IEND') break;
    at += 12 + length;
  }
  return { width, height, colors: colorType === 2 ? 3 : 1, data: Buffer.concat(idat) };
}

/**
 * The page's picture as an image XObject whose stream is the PNG's own compressed rows: a PDF reads
 * a PNG's IDAT data as it is (FlateDecode with PNG predictors, PDF 1.7 §7.4.4.4), so nothing is
 * decoded and compressed again (pdf-lib's embedPng inflates and deflates the whole picture in
 * JavaScript: ~300–600 ms for an A4 page at 150 dpi, against ~25 ms for libvips' PNG here). The
 * alpha channel, when the frame has one, is a grey soft mask made the same way.
 */
async function pageImage(doc: PDFDocument, rgba: Buffer, width: number, height: number, opaque: boolean): Promise<PDFRef> {
  const pixels = () => sharp(rgba, { raw: { width, height, channels: 4 } });
  const png = { compressionLevel: 6, adaptiveFiltering: false } as const;
  const [rgb, alpha] = await Promise.all([
    pixels().removeAlpha().png(png).toBuffer(),
    opaque ? undefined : pixels().extractChannel(3).png(png).toBuffer(),
  ]);
  const xobject = (image: ReturnType<typeof pngPixelData>, extra: Record<string, PDFRef> = {}) =>
    doc.context.register(doc.context.stream(image.data, {
      Type: 'XObject', Subtype: 'Image', Width: image.width, Height: image.height, BitsPerComponent: 8,
      ColorSpace: image.colors === 3 ? 'DeviceRGB' : 'DeviceGray',
      Filter: 'FlateDecode', DecodeParms: { Predictor: 15, Colors: image.colors, BitsPerComponent: 8, Columns: image.width },
      ...extra,
    }));
  return xobject(pngPixelData(rgb), alpha ? { SMask: xobject(pngPixelData(alpha)) } : {});
}

/**
 * A one-page PDF of the still: the page is `size.page` (the frame at the output's dpi, or a fixed
 * paper size the frame is fitted into: pdfPageLayout), the picture fills the frame's place at the
 * output's pixel density (a 1240×1754 frame at device scale 2 gives an A4 page at 300 dpi), and
 * each text clip is repeated as invisible Helvetica text over its box so the words can be searched,
 * selected and copied. `html` pages (bottom first) are laid over the picture as vector content, their
 * links kept; `overlay` (the test-mode watermark, RGBA of the frame's size) goes on top of everything.
 * `rgba` is the frame's pixels (straight alpha); an `opaque` frame gets no soft mask.
 */
export async function encodePdf(
  rgba: Buffer,
  size: { width: number; height: number; page: PdfPageLayout },
  texts: readonly PdfText[],
  opts: { opaque: boolean; html?: readonly PdfHtmlPage[]; overlay?: Buffer },
): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setProducer('media-render still engine');
  doc.setCreator('media-render');
  const { page: layout } = size;
  const { frame } = layout;
  const page = doc.addPage([layout.width, layout.height]);
  const bottom = layout.height - frame.y - frame.height;
  const drawFrame = async (name: string, pixels: Buffer, opaque: boolean) => {
    const image = page.node.newXObject(name, await pageImage(doc, pixels, size.width, size.height, opaque));
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(frame.width, 0, 0, frame.height, frame.x, bottom), drawObject(image), popGraphicsState());
  };
  await drawFrame('Im', rgba, opts.opaque);
  await drawTextLayer(doc, page, layout, texts);
  for (const html of opts.html ?? []) await drawHtml(doc, page, layout, html);
  if (opts.overlay) await drawFrame('Wm', opts.overlay, false);
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}

/**
 * The text clips' words as invisible text (render mode 3) over their boxes: in each clip's own
 * TrueType font, subset and embedded (pdf-font.ts), its lines wrapped to the box and aligned as the
 * block is, so selections fall about where the words are drawn. A clip whose face gives no usable
 * TrueType font, fallback included, is written in (unembedded) Helvetica, WinAnsi characters only.
 */
async function drawTextLayer(doc: PDFDocument, page: PDFPage, layout: PdfPageLayout, texts: readonly PdfText[]): Promise<void> {
  const { frame, pointsPerPx: k } = layout;
  const embedded = new Map<TrueTypeFont, { font: EmbeddedTextFont; name: string }>();
  let helvetica: Awaited<ReturnType<PDFDocument['embedFont']>> | undefined;
  for (const t of texts) {
    const face = t.face ? await textLayerFont(t.face) : undefined;
    if (!face) {
      const text = winAnsi(t.text).trim();
      if (!text) continue;
      helvetica ??= await doc.embedFont(StandardFonts.Helvetica);
      const fontSize = Math.max(0.5, t.size * k);
      page.drawText(text, {
        x: frame.x + Math.max(0, t.box.x) * k, y: layout.height - frame.y - Math.max(0, t.box.y) * k - fontSize,
        size: fontSize, font: helvetica, maxWidth: Math.max(fontSize, t.box.width * k), lineHeight: fontSize * 1.2, opacity: 0,
      });
      continue;
    }
    let entry = embedded.get(face);
    if (!entry) {
      entry = { font: new EmbeddedTextFont(face), name: `TL${embedded.size}` };
      embedded.set(face, entry);
    }
    const padding = t.padding ?? { top: 0, right: 0, bottom: 0, left: 0 };
    const inner = { x: t.box.x + padding.left, y: t.box.y + padding.top, width: Math.max(1, t.box.width - padding.left - padding.right), height: Math.max(1, t.box.height - padding.top - padding.bottom) };
    const spacing = t.letterSpacing ?? 0;
    const measure = (line: string) => entry.font.width(line) * t.size + spacing * Math.max(0, [...line].length - 1);
    const lines = wrap(t.text, measure, inner.width);
    if (lines.length === 0) continue;
    // Baseline of the first line: the face's ascent, centred in the line's height as CSS does
    // (without a line height the face's own: ascent + descent).
    const ascent = (face.ascent / face.unitsPerEm) * t.size;
    const descent = (-face.descent / face.unitsPerEm) * t.size;
    const lineHeight = t.lineHeight ? t.size * t.lineHeight : ascent + descent;
    const align = t.align ?? { horizontal: 'left', vertical: 'top' };
    const free = inner.height - lines.length * lineHeight;
    const top = inner.y + (t.nudge?.y ?? 0) + (align.vertical === 'top' ? 0 : align.vertical === 'center' ? free / 2 : free);
    const first = top + (lineHeight - (ascent + descent)) / 2 + ascent;
    const fontSize = t.size * k;
    // q … Q: the invisible rendering mode is graphics state and must not reach what is drawn after (the html).
    page.pushOperators(pushGraphicsState(), beginText(), setFontAndSize(entry.name, fontSize), setTextRenderingMode(TextRenderingMode.Invisible));
    if (spacing) page.pushOperators(setCharacterSpacing(spacing * k));
    lines.forEach((line, i) => {
      const width = measure(line);
      const x = inner.x + (t.nudge?.x ?? 0) + (align.horizontal === 'left' ? 0 : align.horizontal === 'center' ? (inner.width - width) / 2 : inner.width - width);
      const baseline = first + i * lineHeight;
      page.pushOperators(setTextMatrix(1, 0, 0, 1, frame.x + x * k, layout.height - frame.y - baseline * k), showText(entry.font.encode(line)));
    });
    page.pushOperators(endText(), popGraphicsState());
  }
  for (const { font, name } of embedded.values()) page.node.setFontDictionary(PDFName.of(name), font.embed(doc));
}

/** `text`'s lines, each wrapped at spaces to `maxWidth` (a word longer than that stays whole). */
function wrap(text: string, width: (line: string) => number, maxWidth: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    const words = paragraph.split(/ +/).filter(Boolean);
    let line = '';
    for (const word of words) {
      const next = line ? `${line} ${word}` : word;
      if (line && width(next) > maxWidth * 1.001) {
        out.push(line);
        line = word;
      } else {
        line = next;
      }
    }
    if (line) out.push(line);
  }
  return out;
}

/**
 * One printed html page drawn where its clip sits (design px → page points), cut to the clip's visible
 * part, with the page's web links (URI link annotations) carried over to the same place.
 */
async function drawHtml(doc: PDFDocument, page: PDFPage, layout: PdfPageLayout, html: PdfHtmlPage): Promise<void> {
  const k = layout.pointsPerPx;
  const kx = html.content.width / html.crop.width;
  const ky = html.content.height / html.crop.height;
  // Design px of the html's top-left corner and its whole size, then in points (y up).
  const left = html.content.x - html.crop.x * kx;
  const top = html.content.y - html.crop.y * ky;
  const toX = (designX: number) => layout.frame.x + designX * k;
  const toY = (designY: number) => layout.height - layout.frame.y - designY * k;
  const width = html.source.width * kx * k;
  const height = html.source.height * ky * k;
  const [embedded] = await doc.embedPdf(html.pdf, [0]);
  if (!embedded) return;
  const cut = { x: toX(html.content.x), y: toY(html.content.y + html.content.height), width: html.content.width * k, height: html.content.height * k };
  page.pushOperators(pushGraphicsState(), rectangle(cut.x, cut.y, cut.width, cut.height), clip(), endPath());
  page.drawPage(embedded, { x: toX(left), y: toY(top) - height, width, height });
  page.pushOperators(popGraphicsState());

  // Links: each URI link of the printed page, its rectangle mapped the same way.
  const source = (await PDFDocument.load(html.pdf, { updateMetadata: false })).getPage(0);
  const annots = source.node.Annots();
  if (!annots) return;
  const sx = width / source.getWidth();
  const sy = height / source.getHeight();
  const originY = toY(top) - height;
  for (let i = 0; i < annots.size(); i++) {
    const annot = annots.lookupMaybe(i, PDFDict);
    const action = annot?.lookupMaybe(PDFName.of('A'), PDFDict);
    const uri = action?.lookupMaybe(PDFName.of('URI'), PDFString, PDFHexString);
    const rect = annot?.lookupMaybe(PDFName.of('Rect'), PDFArray);
    if (!annot || annot.get(PDFName.of('Subtype'))?.toString() !== '/Link' || !uri || !rect || rect.size() !== 4) continue;
    const [x1, y1, x2, y2] = [0, 1, 2, 3].map((j) => rect.lookup(j, PDFNumber).asNumber()) as [number, number, number, number];
    const mapped = [toX(left) + x1 * sx, originY + y1 * sy, toX(left) + x2 * sx, originY + y2 * sy];
    const link = doc.context.register(doc.context.obj({
      Type: 'Annot', Subtype: 'Link', Rect: mapped, Border: [0, 0, 0],
      A: { Type: 'Action', S: 'URI', URI: PDFString.of(uri.decodeText()) },
    }));
    page.node.addAnnot(link);
  }
}
