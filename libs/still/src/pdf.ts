import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Rect, Size } from '#libs/edit-spec';

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

/**
 * A one-page PDF of the still: the page is the design viewport in points, the picture fills it at the
 * output's resolution (a device scale of 2 gives a 144 dpi page), and each text clip is repeated as
 * invisible Helvetica text over its box so the words can be searched, selected and copied.
 */
export async function encodePdf(png: Buffer, size: { width: number; height: number; viewport: Size }, texts: readonly PdfText[]): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setProducer('media-render still engine');
  doc.setCreator('media-render');
  const { width, height } = size.viewport;
  const page = doc.addPage([width, height]);
  const image = await doc.embedPng(png);
  page.drawImage(image, { x: 0, y: 0, width, height });
  if (texts.length) {
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (const t of texts) {
      const text = winAnsi(t.text).trim();
      if (!text) continue;
      const fontSize = Math.max(1, t.size);
      page.drawText(text, {
        x: Math.max(0, t.box.x),
        y: height - Math.max(0, t.box.y) - fontSize,
        size: fontSize,
        font,
        maxWidth: Math.max(fontSize, t.box.width),
        lineHeight: fontSize * 1.2,
        opacity: 0,
      });
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}
