import {
  beginText, endText, setCharacterSpacing, setFontAndSize, setTextMatrix, setTextRenderingMode, showText, TextRenderingMode,
  appendBezierCurve, clip, closePath, concatTransformationMatrix, drawObject, endPath, fill, lineTo, moveTo, PDFArray, PDFDict, PDFDocument,
  PDFName, PDFNumber, PDFString, PDFHexString, popGraphicsState, pushGraphicsState, rectangle, setFillingRgbColor, setGraphicsState,
  setLineWidth, setStrokingRgbColor, StandardFonts, stroke, type PDFOperator, type PDFPage, type PDFRef,
} from 'pdf-lib';
import sharp from 'sharp';
import type { PdfPageLayout, Rect, Rgba, Size } from '#libs/edit-spec';
import type { ShapeGeometry } from './assets.js';
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

/** An html clip printed by the browser (one vector PDF page of `source` CSS px), placed as its clip. */
export interface PdfHtmlPage extends PdfPlacement {
  pdf: Buffer;
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
 * A picture as an image XObject. RGBA pixels: the stream is the PNG's own compressed rows (a PDF
 * reads a PNG's IDAT data as it is: FlateDecode with PNG predictors, PDF 1.7 §7.4.4.4), so nothing is
 * decoded and compressed again (pdf-lib's embedPng inflates and deflates the whole picture in
 * JavaScript: ~300–600 ms for an A4 page at 150 dpi, against ~25 ms for libvips' PNG here); the alpha
 * channel, unless `opaque`, is a grey soft mask made the same way. A JPEG: its own bytes (DCTDecode).
 */
async function imageObject(doc: PDFDocument, image: PdfImageSource): Promise<PDFRef> {
  const xobject = (data: Buffer, width: number, height: number, colors: 1 | 3, filter: Record<string, unknown>, extra: Record<string, PDFRef> = {}) =>
    doc.context.register(doc.context.stream(data, {
      Type: 'XObject', Subtype: 'Image', Width: width, Height: height, BitsPerComponent: 8,
      ColorSpace: colors === 3 ? 'DeviceRGB' : 'DeviceGray', ...filter, ...extra,
    }));
  if (image.kind === 'jpeg') return xobject(image.bytes, image.width, image.height, image.colors, { Filter: 'DCTDecode' });
  const { width, height } = image;
  const opaque = image.opaque || allOpaque(image.data);
  const pixels = () => sharp(image.data, { raw: { width, height, channels: 4 } });
  const png = { compressionLevel: 6, adaptiveFiltering: false } as const;
  const [rgb, alpha] = await Promise.all([
    pixels().removeAlpha().png(png).toBuffer(),
    opaque ? undefined : pixels().extractChannel(3).png(png).toBuffer(),
  ]);
  const flate = (p: ReturnType<typeof pngPixelData>, extra: Record<string, PDFRef> = {}) => xobject(p.data, p.width, p.height, p.colors, {
    Filter: 'FlateDecode', DecodeParms: { Predictor: 15, Colors: p.colors, BitsPerComponent: 8, Columns: p.width },
  }, extra);
  return flate(pngPixelData(rgb), alpha ? { SMask: flate(pngPixelData(alpha)) } : {});
}

/** A picture embedded as it is: a JPEG's own bytes (DCTDecode), or RGBA pixels (straight alpha). */
export type PdfImageSource =
  | { kind: 'jpeg'; bytes: Buffer; width: number; height: number; colors: 1 | 3 }
  | { kind: 'rgba'; data: Buffer; width: number; height: number; /** Known to have no transparent pixel (else it is looked at). */ opaque: boolean };

/**
 * Where a clip lands (design px, y down): its whole `source` (in the source's own units: image pixels
 * after the asset's crop, html CSS px, a shape's box) is scaled so that `crop` (source units) covers
 * `content`; only `content` is shown.
 */
export interface PdfPlacement {
  source: Size;
  content: Rect;
  crop: Rect;
  /**
   * The clip's flip, then rotation (degrees, clockwise) and skew (degrees), about the centre of its
   * `box` (design px), as the still engine turns a layer; none when absent.
   */
  turn?: { box: Rect; rotate: number; skew: { x: number; y: number }; flip: { horizontal: boolean; vertical: boolean } };
}

/**
 * One PDF page built as a document of layers (issue 32), bottom first: each clip is drawn in z-order
 * in the form a PDF holds best: a picture as an image object at its own resolution, an html clip as
 * its printed vector page (text in embedded subset fonts, links kept), a shape as a vector path, a
 * text clip as its drawn pixels with its words as invisible text right over them, each turned as its
 * clip is, and what a PDF cannot express (a filter, what only the browser draws) as a picture of that
 * clip alone. Every layer is cut to the
 * frame's place on the page (`size.page`: pdfPageLayout); `size.width`×`size.height` are the output's
 * pixels, the unit of `picture`.
 */
export class PdfLayers {
  private readonly embedded = new Map<TrueTypeFont, { font: EmbeddedTextFont; name: string }>();
  private helvetica: Awaited<ReturnType<PDFDocument['embedFont']>> | undefined;

  private constructor(
    private readonly doc: PDFDocument,
    private readonly page: PDFPage,
    private readonly layout: PdfPageLayout,
    private readonly pixels: Size,
  ) {
    const { frame } = layout;
    // Everything is cut to the frame (a fixed page's margins stay blank, as the picture left them).
    page.pushOperators(pushGraphicsState(), rectangle(frame.x, layout.height - frame.y - frame.height, frame.width, frame.height), clip(), endPath());
  }

  static async create(size: { width: number; height: number; page: PdfPageLayout }): Promise<PdfLayers> {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.setProducer('media-render still engine');
    doc.setCreator('media-render');
    const page = doc.addPage([size.page.width, size.page.height]);
    return new PdfLayers(doc, page, size.page, { width: size.width, height: size.height });
  }

  /** Page points of a design x, and of a design y (y up). */
  private x(designX: number): number {
    return this.layout.frame.x + designX * this.layout.pointsPerPx;
  }

  private y(designY: number): number {
    return this.layout.height - this.layout.frame.y - designY * this.layout.pointsPerPx;
  }

  /** A graphics state of fill and stroke opacity `alpha` (0..1), or none at 1. */
  private alpha(alpha: number): PDFOperator[] {
    if (alpha >= 1) return [];
    const name = this.page.node.newExtGState('GS', this.doc.context.obj({ Type: 'ExtGState', ca: alpha, CA: alpha }));
    return [setGraphicsState(name)];
  }

  /** The timeline's background colour over the whole frame (nothing when transparent). */
  fill(colour: Rgba): void {
    if (colour.a <= 0) return;
    const { frame } = this.layout;
    this.page.pushOperators(
      pushGraphicsState(), ...this.alpha(colour.a), setFillingRgbColor(colour.r / 255, colour.g / 255, colour.b / 255),
      rectangle(frame.x, this.layout.height - frame.y - frame.height, frame.width, frame.height), fill(), popGraphicsState(),
    );
  }

  /**
   * Output pixels (RGBA, straight alpha) whose top-left corner is output pixel (`left`, `top`), at their
   * own resolution. Fully transparent rows and columns at the edges are left out (a text clip's box is
   * often much larger than its words); a picture with no transparent pixel gets no soft mask.
   */
  async picture(rgba: Buffer, width: number, height: number, left: number, top: number): Promise<void> {
    const trimmed = trimTransparent(rgba, width, height);
    if (!trimmed) return;
    const image = await imageObject(this.doc, { kind: 'rgba', ...trimmed.raster, opaque: false });
    const name = this.page.node.newXObject('Im', image);
    // Points per output pixel.
    const q = this.layout.frame.width / this.pixels.width;
    const x = left + trimmed.left;
    const y = top + trimmed.top;
    this.page.pushOperators(
      pushGraphicsState(),
      concatTransformationMatrix(trimmed.raster.width * q, 0, 0, trimmed.raster.height * q, this.layout.frame.x + x * q, this.layout.height - this.layout.frame.y - (y + trimmed.raster.height) * q),
      drawObject(name), popGraphicsState(),
    );
  }

  /**
   * `q`, the clip's turn, the cut to the placement's `content`, and where its whole source lands on the
   * page (before the turn; a unit square scaled to `whole` draws it).
   */
  private placed(place: PdfPlacement): { open: PDFOperator[]; whole: { x: number; y: number; width: number; height: number } } {
    const k = this.layout.pointsPerPx;
    const kx = place.content.width / place.crop.width;
    const ky = place.content.height / place.crop.height;
    const left = place.content.x - place.crop.x * kx;
    const top = place.content.y - place.crop.y * ky;
    const width = place.source.width * kx * k;
    const height = place.source.height * ky * k;
    const cut = rectangle(this.x(place.content.x), this.y(place.content.y + place.content.height), place.content.width * k, place.content.height * k);
    return { open: [pushGraphicsState(), ...this.turn(place.turn), cut, clip(), endPath()], whole: { x: this.x(left), y: this.y(top) - height, width, height } };
  }

  /**
   * The still engine's turn of a layer (engine.ts transform: flip, then R × K with R clockwise on
   * screen and K the shear, about the box's centre) as a page matrix: the same matrix conjugated by
   * the page's y flip.
   */
  private turn(turn: PdfPlacement['turn']): PDFOperator[] {
    const m = this.turnMatrix(turn);
    return m ? [concatTransformationMatrix(...m)] : [];
  }

  /** The turn as the six numbers of a `cm` (a b c d e f: x' = a x + c y + e, y' = b x + d y + f), or undefined. */
  private turnMatrix(turn: PdfPlacement['turn']): [number, number, number, number, number, number] | undefined {
    if (!turn) return undefined;
    const { rotate, skew, flip } = turn;
    if (rotate === 0 && skew.x === 0 && skew.y === 0 && !flip.horizontal && !flip.vertical) return undefined;
    const rad = (d: number) => (d * Math.PI) / 180;
    const cos = Math.cos(rad(rotate));
    const sin = Math.sin(rad(rotate));
    const kx = Math.tan(rad(skew.x));
    const ky = Math.tan(rad(skew.y));
    const fx = flip.horizontal ? -1 : 1;
    const fy = flip.vertical ? -1 : 1;
    // Screen (y down): [[a, b], [c, d]] × diag(fx, fy); on the page (y up): [[a, -b], [-c, d]] × diag(fx, fy).
    const m11 = (cos - sin * ky) * fx;
    const m12 = -(cos * kx - sin) * fy;
    const m21 = -(sin + cos * ky) * fx;
    const m22 = (sin * kx + cos) * fy;
    const cx = this.x(turn.box.x + turn.box.width / 2);
    const cy = this.y(turn.box.y + turn.box.height / 2);
    return [m11, m21, m12, m22, cx - (m11 * cx + m12 * cy), cy - (m21 * cx + m22 * cy)];
  }

  /** A picture clip as an image object of its own pixels (`image`: the whole source, any resolution). */
  async image(image: PdfImageSource, place: PdfPlacement, opacity: number): Promise<void> {
    const name = this.page.node.newXObject('Im', await imageObject(this.doc, image));
    const { open, whole } = this.placed(place);
    this.page.pushOperators(...open, ...this.alpha(opacity), concatTransformationMatrix(whole.width, 0, 0, whole.height, whole.x, whole.y), drawObject(name), popGraphicsState());
  }

  /**
   * A shape as a vector path (source units: the shape's box, y down). Faded with both a fill and a
   * stroke, it is drawn inside a transparency group faded as one (as the engine fades its picture),
   * so the stroke over the fill's edge does not show the fill through it.
   */
  shape(shape: ShapeGeometry, place: PdfPlacement, opacity: number): void {
    const { open, whole } = this.placed(place);
    const sx = whole.width / place.source.width;
    const sy = whole.height / place.source.height;
    const e = shape.element;
    const path: PDFOperator[] = e.kind === 'circle'
      ? ellipsePath(e.cx, e.cy, e.r, e.r)
      : roundedRectPath(e.x, e.y, e.width, e.height, Math.min(e.radius, e.width / 2, e.height / 2));
    const grouped = opacity < 1 && shape.fill.a > 0 && shape.stroke !== undefined && shape.stroke.color.a > 0;
    // In a group, the paints' own alphas are the group's resources; else the page's, times the opacity.
    const states: Record<string, PDFDict> = {};
    const alpha = (a: number): PDFOperator[] => {
      if (!grouped) return this.alpha(a * opacity);
      if (a >= 1) return [];
      const name = `A${Object.keys(states).length}`;
      states[name] = this.doc.context.obj({ Type: 'ExtGState', ca: a, CA: a });
      return [setGraphicsState(name)];
    };
    const paint = (colour: Rgba, set: PDFOperator[], draw: PDFOperator): PDFOperator[] => colour.a <= 0
      ? []
      : [pushGraphicsState(), ...alpha(colour.a), ...set, ...path, draw, popGraphicsState()];
    const body = [
      // Source units, y down, onto the page.
      concatTransformationMatrix(sx, 0, 0, -sy, whole.x, whole.y + whole.height),
      ...paint(shape.fill, [setFillingRgbColor(shape.fill.r / 255, shape.fill.g / 255, shape.fill.b / 255)], fill()),
      ...(shape.stroke
        ? paint(shape.stroke.color, [setStrokingRgbColor(shape.stroke.color.r / 255, shape.stroke.color.g / 255, shape.stroke.color.b / 255), setLineWidth(shape.stroke.width)], stroke())
        : []),
    ];
    if (!grouped) {
      this.page.pushOperators(...open, ...body, popGraphicsState());
      return;
    }
    const group = this.doc.context.register(this.doc.context.formXObject(body, {
      BBox: [0, 0, this.layout.width, this.layout.height], Group: { S: 'Transparency' }, Resources: { ExtGState: states },
    }));
    this.page.pushOperators(...open, ...this.alpha(opacity), drawObject(this.page.node.newXObject('Shape', group)), popGraphicsState());
  }

  /**
   * A text clip's words as invisible text (render mode 3) over its box: in the clip's own TrueType
   * font, subset and embedded (pdf-font.ts), its lines wrapped to the box and aligned as the block is,
   * so selections fall about where the words are drawn. A clip whose face gives no usable TrueType
   * font, fallback included, is written in (unembedded) Helvetica, WinAnsi characters only.
   */
  async text(t: PdfText, turn?: PdfPlacement['turn']): Promise<void> {
    const turned = this.turn(turn);
    // Turned with its clip, so the words lie on the drawn ones.
    if (turned.length) this.page.pushOperators(pushGraphicsState(), ...turned);
    try {
      await this.textAt(t);
    } finally {
      if (turned.length) this.page.pushOperators(popGraphicsState());
    }
  }

  private async textAt(t: PdfText): Promise<void> {
    const { layout, page } = this;
    const { frame, pointsPerPx: k } = layout;
    const face = t.face ? await textLayerFont(t.face) : undefined;
    if (!face) {
      const text = winAnsi(t.text).trim();
      if (!text) return;
      this.helvetica ??= await this.doc.embedFont(StandardFonts.Helvetica);
      const fontSize = Math.max(0.5, t.size * k);
      page.drawText(text, {
        x: frame.x + Math.max(0, t.box.x) * k, y: layout.height - frame.y - Math.max(0, t.box.y) * k - fontSize,
        size: fontSize, font: this.helvetica, maxWidth: Math.max(fontSize, t.box.width * k), lineHeight: fontSize * 1.2, opacity: 0,
      });
      return;
    }
    let entry = this.embedded.get(face);
    if (!entry) {
      entry = { font: new EmbeddedTextFont(face), name: `TL${this.embedded.size}` };
      this.embedded.set(face, entry);
    }
    const { font, name } = entry;
    const padding = t.padding ?? { top: 0, right: 0, bottom: 0, left: 0 };
    const inner = { x: t.box.x + padding.left, y: t.box.y + padding.top, width: Math.max(1, t.box.width - padding.left - padding.right), height: Math.max(1, t.box.height - padding.top - padding.bottom) };
    const spacing = t.letterSpacing ?? 0;
    const measure = (line: string) => font.width(line) * t.size + spacing * Math.max(0, [...line].length - 1);
    const lines = wrap(t.text, measure, inner.width);
    if (lines.length === 0) return;
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
    // q … Q: the invisible rendering mode is graphics state and must not reach what is drawn after.
    page.pushOperators(pushGraphicsState(), beginText(), setFontAndSize(name, fontSize), setTextRenderingMode(TextRenderingMode.Invisible));
    if (spacing) page.pushOperators(setCharacterSpacing(spacing * k));
    lines.forEach((line, i) => {
      const width = measure(line);
      const x = inner.x + (t.nudge?.x ?? 0) + (align.horizontal === 'left' ? 0 : align.horizontal === 'center' ? (inner.width - width) / 2 : inner.width - width);
      const baseline = first + i * lineHeight;
      page.pushOperators(setTextMatrix(1, 0, 0, 1, frame.x + x * k, layout.height - frame.y - baseline * k), showText(font.encode(line)));
    });
    page.pushOperators(endText(), popGraphicsState());
  }

  /**
   * One printed html page (a form XObject) drawn where its clip sits, cut to the clip's visible part,
   * with the page's web links (URI link annotations) carried over to the same place.
   */
  async html(html: PdfHtmlPage, opacity = 1): Promise<void> {
    const [embedded] = await this.doc.embedPdf(html.pdf, [0]);
    if (!embedded) return;
    const { open, whole } = this.placed(html);
    if (opacity >= 1) {
      this.page.pushOperators(...open);
      this.page.drawPage(embedded, whole);
      this.page.pushOperators(popGraphicsState());
    } else {
      // Faded as one (CSS opacity): the page inside a transparency group, the group drawn at `opacity`.
      const group = this.doc.context.register(this.doc.context.flateStream(
        `q ${whole.width / embedded.width} 0 0 ${whole.height / embedded.height} ${whole.x} ${whole.y} cm /P Do Q`,
        {
          Type: 'XObject', Subtype: 'Form', BBox: [whole.x, whole.y, whole.x + whole.width, whole.y + whole.height],
          Group: { S: 'Transparency' }, Resources: { XObject: { P: embedded.ref } },
        },
      ));
      const name = this.page.node.newXObject('Html', group);
      this.page.pushOperators(...open, ...this.alpha(opacity), drawObject(name), popGraphicsState());
    }

    // Links: each URI link of the printed page, its rectangle mapped the same way (turned with the
    // clip: the four corners as QuadPoints, the rectangle around them).
    const m = this.turnMatrix(html.turn);
    const onPage = (x: number, y: number): [number, number] => (m ? [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]] : [x, y]);
    const source = (await PDFDocument.load(html.pdf, { updateMetadata: false })).getPage(0);
    const annots = source.node.Annots();
    if (!annots) return;
    const sx = whole.width / source.getWidth();
    const sy = whole.height / source.getHeight();
    for (let i = 0; i < annots.size(); i++) {
      const annot = annots.lookupMaybe(i, PDFDict);
      const action = annot?.lookupMaybe(PDFName.of('A'), PDFDict);
      const uri = action?.lookupMaybe(PDFName.of('URI'), PDFString, PDFHexString);
      const rect = annot?.lookupMaybe(PDFName.of('Rect'), PDFArray);
      if (!annot || annot.get(PDFName.of('Subtype'))?.toString() !== '/Link' || !uri || !rect || rect.size() !== 4) continue;
      const [x1, y1, x2, y2] = [0, 1, 2, 3].map((j) => rect.lookup(j, PDFNumber).asNumber()) as [number, number, number, number];
      const [left, right, bottom, top] = [whole.x + x1 * sx, whole.x + x2 * sx, whole.y + y1 * sy, whole.y + y2 * sy];
      // Counter-clockwise from the bottom left, as QuadPoints are read.
      const corners = [onPage(left, bottom), onPage(right, bottom), onPage(right, top), onPage(left, top)];
      const xs = corners.map((c) => c[0]);
      const ys = corners.map((c) => c[1]);
      const link = this.doc.context.register(this.doc.context.obj({
        Type: 'Annot', Subtype: 'Link', Rect: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)], Border: [0, 0, 0],
        ...(m ? { QuadPoints: corners.flat() } : {}),
        A: { Type: 'Action', S: 'URI', URI: PDFString.of(uri.decodeText()) },
      }));
      this.page.node.addAnnot(link);
    }
  }

  async save(): Promise<Buffer> {
    this.page.pushOperators(popGraphicsState());
    for (const { font, name } of this.embedded.values()) this.page.node.setFontDictionary(PDFName.of(name), font.embed(this.doc));
    return Buffer.from(await this.doc.save({ useObjectStreams: true }));
  }
}

/** Every pixel of the RGBA data has alpha 255 (a picture with an alpha channel it does not use needs no soft mask). */
function allOpaque(rgba: Buffer): boolean {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 255) return false;
  return true;
}

/** The part of an RGBA raster that is not fully transparent, and where it lies; undefined when nothing shows. */
function trimTransparent(data: Buffer, width: number, height: number): { raster: { data: Buffer; width: number; height: number }; left: number; top: number } | undefined {
  let top = height;
  let bottom = -1;
  let left = width;
  let right = -1;
  for (let y = 0; y < height; y++) {
    let first = -1;
    let last = -1;
    for (let x = 0, i = y * width * 4 + 3; x < width; x++, i += 4) {
      const a = data[i]!;
      if (a === 0) continue;
      if (first < 0) first = x;
      last = x;
    }
    if (first < 0) continue;
    top = Math.min(top, y);
    bottom = y;
    left = Math.min(left, first);
    right = Math.max(right, last);
  }
  if (bottom < 0) return undefined;
  const w = right - left + 1;
  const h = bottom - top + 1;
  const out = w === width && h === height ? data : Buffer.allocUnsafe(w * h * 4);
  if (out !== data) for (let y = 0; y < h; y++) data.copy(out, y * w * 4, ((top + y) * width + left) * 4, ((top + y) * width + left + w) * 4);
  return { raster: { data: out, width: w, height: h }, left, top };
}

/** Bézier constant of a quarter circle. */
const KAPPA = 0.5522847498;

function ellipsePath(cx: number, cy: number, rx: number, ry: number): PDFOperator[] {
  const ox = rx * KAPPA;
  const oy = ry * KAPPA;
  return [
    moveTo(cx - rx, cy),
    appendBezierCurve(cx - rx, cy - oy, cx - ox, cy - ry, cx, cy - ry),
    appendBezierCurve(cx + ox, cy - ry, cx + rx, cy - oy, cx + rx, cy),
    appendBezierCurve(cx + rx, cy + oy, cx + ox, cy + ry, cx, cy + ry),
    appendBezierCurve(cx - ox, cy + ry, cx - rx, cy + oy, cx - rx, cy),
    closePath(),
  ];
}

function roundedRectPath(x: number, y: number, w: number, h: number, r: number): PDFOperator[] {
  if (r <= 0) return [rectangle(x, y, w, h)];
  const o = r * (1 - KAPPA);
  return [
    moveTo(x + r, y),
    lineTo(x + w - r, y), appendBezierCurve(x + w - o, y, x + w, y + o, x + w, y + r),
    lineTo(x + w, y + h - r), appendBezierCurve(x + w, y + h - o, x + w - o, y + h, x + w - r, y + h),
    lineTo(x + r, y + h), appendBezierCurve(x + o, y + h, x, y + h - o, x, y + h - r),
    lineTo(x, y + r), appendBezierCurve(x, y + o, x + o, y, x + r, y),
    closePath(),
  ];
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
