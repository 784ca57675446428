import { concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState, StandardFonts, type PDFRef } from 'pdf-lib';
import sharp from 'sharp';
import type { PdfPageLayout, Rect } from '#libs/edit-spec';

export interface PdfText {
  text: string;
  /** Font size, design px. */
  size: number;
  /** Where the text's clip sits in the design viewport (y down). */
  box: Rect;
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
 * selected and copied. `rgba` is the frame's pixels (straight alpha); an `opaque` frame gets no soft mask.
 */
export async function encodePdf(
  rgba: Buffer, size: { width: number; height: number; page: PdfPageLayout }, texts: readonly PdfText[], opts: { opaque: boolean },
): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setProducer('media-render still engine');
  doc.setCreator('media-render');
  const { page: layout } = size;
  const { frame, pointsPerPx: k } = layout;
  const page = doc.addPage([layout.width, layout.height]);
  const image = page.node.newXObject('Im', await pageImage(doc, rgba, size.width, size.height, opts.opaque));
  const bottom = layout.height - frame.y - frame.height;
  page.pushOperators(pushGraphicsState(), concatTransformationMatrix(frame.width, 0, 0, frame.height, frame.x, bottom), drawObject(image), popGraphicsState());
  if (texts.length) {
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (const t of texts) {
      const text = winAnsi(t.text).trim();
      if (!text) continue;
      const fontSize = Math.max(0.5, t.size * k);
      page.drawText(text, {
        x: frame.x + Math.max(0, t.box.x) * k,
        y: layout.height - frame.y - Math.max(0, t.box.y) * k - fontSize,
        size: fontSize,
        font,
        maxWidth: Math.max(fontSize, t.box.width * k),
        lineHeight: fontSize * 1.2,
        opacity: 0,
      });
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}
