import { createHash } from 'node:crypto';
import type * as Sharp from 'sharp';
import sharp from 'sharp';
import { ApiError, type FieldErrors } from '#libs/core';
import { aspectMismatch, assertTiming, type Clip, clipsAt, clipVisualAt, type Durations, type EditSpec, type ImageAsset, intrinsicSize, isStillFormat, layerCost, layerPixelLimit, type Output, outputSize, parseColor, pdfPageLayout, type Quality, type Rect, RENDER_BUDGET, type Size, type TimedClip } from '#libs/edit-spec';
import { FontFileError, MediaFetchError, RenderMediaCache, type FetchedMedia, type MediaFetcher } from '#libs/media';
import { requestedFamily, richTextBlock, shapeGeometry, shapeSvg, svgSize, textAssetBlock, titleBlock, type FontChoice, type ShapeGeometry } from './assets.js';
import { ByteLru } from './cache.js';
import { clipToCanvas, paintOver, paintOverInBands, releaseFrame, solidPixel, solidRaster, takeFrame, type Background, type Placed } from './compose.js';
import { type FontCatalog, RenderFonts, type RenderFont } from './fonts.js';
import { PixelGate } from './gate.js';
import { PdfLayers, type PdfImageSource, type PdfPlacement, type PdfText } from './pdf.js';
import { encodeFramePng, encodeFramePngWhole, FramePngWriter, writtenInBands, type FrameRows } from './png.js';
import { applyFilter, blank, cropRaster, fromRaster, OWN_SVG, padRaster, PIXELS_PER_TURN, RAW, toRaster, fadeInPlace, type Raster } from './raster.js';
import { ellipsize, renderTextBlock, type TextBlock } from './text.js';
import { watermarkLayer } from './watermark.js';

export type { MediaFetcher } from '#libs/media';

/** Transparent pixels put around a layer before it is turned, skewed or flipped (transform()). */
const TRANSFORM_PAD = 2;

/** Up to this many frames' worth of layer pixels, the frame is composited in JavaScript (encode()). */
const JS_PAINT_MAX_FRAMES = 1.5;

export interface StillEngineOptions {
  fonts: FontCatalog;
  /** Downloads a media URL (SSRF-checked, capped, sniffed), or reads one of our stored files. */
  fetch: MediaFetcher;
  /** Bytes of pixels kept between renders (finished layers); default 256 MiB. */
  cacheBytes?: number;
  /** Largest decoded input image, in pixels; default RENDER_BUDGET.mediaPixels, 40 megapixels (sharp's own is 268). */
  limitInputPixels?: number;
  /**
   * Layer pixels drawn at once by this engine, across every still it draws at once (PixelGate);
   * default one largest layer (RENDER_BUDGET.layerPixels, 36 megapixels: about 0.8 GB with a layer's
   * drawn, filtered, faded and placed copies). A frame with more is drawn in groups of layers that fit;
   * a layer larger than this (a full-frame clip of a still over 36 megapixels) is drawn alone.
   */
  pixelsInFlight?: number;
  /**
   * Draws a whole frame in the browser (the video engine's composition, as a PNG of the output size):
   * used for frames with html, video, luma or caption clips, which this engine cannot draw. With
   * `clips` (keys `track:index`), only those clips on a transparent background: a PDF's layers only
   * the browser draws. Without it those frames answer 422 UNSUPPORTED_ASSET.
   */
  browserStill?: (edit: EditSpec, opts: { scale: number; time: number; clips?: readonly string[] }) => Promise<Buffer>;
  /**
   * Prints the html clips of a frame in the browser, one vector PDF page each keyed `track:index`
   * (VideoEngine.printHtmlClips): in a PDF each unfiltered html clip is that page at its place in the
   * stack of layers (PdfLayers), so its text stays text whatever lies above or below it. Without it a
   * PDF's html clips are pictures drawn by `browserStill`. With `clips` (keys `track:index`), only
   * those: the html clips and the unfiltered text, title and rich-text clips, printed as the video
   * draws them (vector words in subset-embedded fonts; without this option, pixels with invisible words).
   */
  printHtml?: (edit: EditSpec, opts: { time: number; clips?: readonly string[] }) => Promise<Map<string, Buffer>>;
  /**
   * Whether `printHtml` prints text clips now (the worker: once its browser engine has started);
   * default yes. When not, a PDF's text clips are pixels with invisible words, as without `printHtml`.
   */
  printsText?: () => boolean;
}

export interface StillRenderOptions {
  /** Device scale factor 1..3 (§4.1). */
  scale?: number;
  /** Draw the test-mode watermark. */
  watermark?: boolean;
  /** Media durations (only needed when an edit uses `auto` lengths of audio). */
  durations?: Durations;
  /** Template image fields with an aspect ratio: the picture at `url` must match (422 at `path`). */
  aspectRules?: readonly AspectRule[];
}

export interface AspectRule {
  path: string;
  url: string;
  aspectRatio: string;
}

export interface StillOutput {
  bytes: Buffer;
  format: 'png' | 'jpeg' | 'pdf';
  contentType: string;
  width: number;
  height: number;
  /** Milliseconds per phase: inputs (downloads, fonts), draw, encode. */
  timings: { inputs: number; draw: number; encode: number; total: number };
}

/**
 * Finished layers seen once wait among the last this many (at most a quarter of the layer cache) and
 * are kept for longer only when drawn again (cache.ts): a template rendered with new values makes a new
 * text layer every render, and these used to fill the whole cache (256 MB a worker, a layer a still,
 * filled over a worker's first hour: the soak's worker growth) with layers that never come back.
 */
const LAYER_PROBATION = 64;
/**
 * Compressed PNG bands of rows drawn only from cached layers (png.ts FramePngWriter): a template
 * rendered with new text writes again only the rows the text is on. A 1080² photo frame is ~2.4 MB.
 */
const PNG_BAND_BYTES = 64 * 1024 * 1024;

const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg', pdf: 'application/pdf' } as const;

/** JPEG quality per output `quality` (default high). */
export const JPEG_QUALITY: Readonly<Record<Quality, number>> = { verylow: 40, low: 60, medium: 75, high: 86, veryhigh: 95 };

/** No still is drawn beyond these, whatever the plan (plans set lower ceilings: LIMIT_IMAGE_SIZE). */
export const MAX_SIDE = 16_384;
export const MAX_PIXELS = 80_000_000;
/** Layer pixels drawn at once by default (StillEngineOptions.pixelsInFlight). */
export const DEFAULT_PIXELS_IN_FLIGHT = RENDER_BUDGET.layerPixels;

/** Assets drawn as text blocks (a PDF's text layer). */
const TEXT_TYPES: ReadonlySet<string> = new Set(['text', 'title', 'rich-text']);

/** Assets a still cannot draw yet, and why (the Remotion still path arrives with the video engine). */
const UNSUPPORTED: Readonly<Partial<Record<string, string>>> = {
  html: 'html assets are drawn by the browser engine, which is not available on this deployment',
  video: 'video frames in stills are drawn by the browser engine, which is not available on this deployment',
  luma: 'luma mattes are drawn by the browser engine, which is not available on this deployment',
  caption: 'captions are drawn by the browser engine, which is not available on this deployment',
};

interface Drawable {
  /** Layout size of the asset in design pixels (image: pixels after the asset's own crop). */
  source: Size;
  /** Identity of what is drawn, for the layer cache. */
  key: string;
  /**
   * Draws `crop` (source px) of the asset at `target` output pixels. `exact` is the source rectangle
   * the target's whole pixels cover (`crop` widened or narrowed by the layer's rounding to the output
   * pixel grid): a drawable that samples it lands its asset to the sub-pixel where the browser does.
   */
  draw(crop: Rect, target: Size, scale: number, exact: Rect): Promise<Raster>;
  /** Text to make selectable in a PDF, with how its block is laid out. */
  text?: Omit<PdfText, 'box'>;
  /** The drawn pixels have no transparency (an image without alpha). */
  opaque?: boolean;
  /** An image's own size (upright), for aspect-ratio rules. */
  imageSize?: Size;
  /** An image's pixels of `rect` (source px, whole pixels) at `target` (at most `rect`'s size): a PDF's image object. */
  pdfImage?: (rect: Rect, target: Size) => Promise<PdfImageSource>;
  /** A shape's geometry in its box: a PDF's vector path. */
  shape?: ShapeGeometry;
}

/** What one clip is on a PDF page (PdfLayers), bottom first. */
type PdfLayer =
  | { kind: 'html'; clip: TimedClip; place: PdfPlacement; opacity: number } // an html or text clip's printed page
  | { kind: 'image'; clip: TimedClip; drawable: Drawable; rect: Rect; target: Size; place: PdfPlacement; opacity: number }
  | { kind: 'shape'; clip: TimedClip; shape: ShapeGeometry; place: PdfPlacement; opacity: number }
  | { kind: 'picture'; clip: TimedClip; drawable: Drawable; box: Rect; turn: PdfPlacement['turn'] }
  /**
   * Consecutive clips only the browser draws (video, caption, a filtered html clip, a luma track), as
   * one picture, with the words of the text clips among them.
   */
  | { kind: 'browser'; clips: TimedClip[]; texts: { text: PdfText; turn: PdfPlacement['turn'] }[] };

/**
 * Most pixels per inch of the page an image object keeps (unless the output's own density is higher):
 * print resolution, so a 24-megapixel photo shown as a 3 cm logo is not embedded whole.
 */
const PDF_IMAGE_MAX_PPI = 300;

const clipPath = (c: TimedClip) => `edit.timeline.tracks[${c.track}].clips[${c.index}]`;

function addError(errors: FieldErrors, path: string, message: string): void {
  (errors[path] ??= []).push(message);
}

function digest(...parts: (string | Buffer)[]): string {
  const h = createHash('sha1');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('base64url');
}

/**
 * The still-image engine: one frame of an edit drawn with sharp/libvips and Pango, encoded as PNG,
 * JPEG or PDF. Pure of the queue and the database, so the worker, tests and benchmarks call it alike.
 */
export class StillEngine {
  private readonly layers: ByteLru<Placed>;
  private readonly metadata = new ByteLru<Size & { opaque: boolean; jpeg?: 1 | 3 }>(4096);
  private readonly limitInputPixels: number;
  private readonly gate: PixelGate;
  private readonly frames = new PixelGate(MAX_PIXELS);
  private readonly png = new FramePngWriter(PNG_BAND_BYTES, LAYER_PROBATION);

  constructor(private readonly opts: StillEngineOptions) {
    this.layers = new ByteLru(opts.cacheBytes ?? 256 * 1024 * 1024, { probationEntries: LAYER_PROBATION });
    this.limitInputPixels = opts.limitInputPixels ?? RENDER_BUDGET.mediaPixels;
    this.gate = new PixelGate(opts.pixelsInFlight ?? DEFAULT_PIXELS_IN_FLIGHT);
  }

  get cacheStats() {
    return { bytes: this.layers.bytes, hits: this.layers.hits, misses: this.layers.misses, pngBands: this.png.stats };
  }

  async render(edit: EditSpec, opts: StillRenderOptions = {}): Promise<StillOutput> {
    const started = performance.now();
    const format = edit.output.format;
    if (!isStillFormat(format) || format === 'mp4' || format === 'gif') throw new Error(`the still engine draws png, jpeg and pdf, not ${format}`);
    const size = outputSize(edit.output, opts.scale === undefined ? {} : { scale: opts.scale });
    if (size.width > MAX_SIDE || size.height > MAX_SIDE || size.width * size.height > MAX_PIXELS) {
      throw new ApiError('LIMIT_IMAGE_SIZE', `A still of ${size.width}×${size.height} is larger than this engine draws (${MAX_SIDE} px a side, ${MAX_PIXELS / 1e6} megapixels)`);
    }
    const timing = assertTiming(edit, opts.durations ? { durations: opts.durations } : {});
    const time = edit.output.poster?.capture ?? timing.window.start;
    const active = clipsAt(timing, time).filter((c) => c.clip.asset.type !== 'audio');

    const unsupported: FieldErrors = {};
    for (const c of active) {
      const why = UNSUPPORTED[c.clip.asset.type];
      if (why) addError(unsupported, `${clipPath(c)}.asset.type`, why);
    }
    if (Object.keys(unsupported).length) {
      // A PDF is layers whenever the browser can draw (or print) what this engine cannot.
      if (format === 'pdf' && (this.opts.browserStill || (this.opts.printHtml && this.byBrowser(active).size === 0))) return this.renderPdf(edit, size, time, active, opts, started);
      if (format === 'pdf' || !this.opts.browserStill) {
        throw new ApiError('UNSUPPORTED_ASSET', `The still engine cannot draw ${Object.keys(unsupported).join(', ')}`, { errors: unsupported });
      }
      return this.renderInBrowser(edit, format, size, time, active, opts, started);
    }
    if (format === 'pdf') return this.renderPdf(edit, size, time, active, opts, started);
    return this.renderHere(edit, format, size, time, active, opts, started);
  }

  /**
   * The clips of a PDF frame only the browser can draw, as pictures: video and caption clips, html
   * clips with a filter (or every html clip when nothing prints them), and every clip of a track with
   * a luma matte (the matte cuts the clips of its track). Html clips without a filter are printed.
   */
  private byBrowser(active: TimedClip[]): Set<TimedClip> {
    const lumaTracks = new Set(active.filter((c) => c.clip.asset.type === 'luma').map((c) => c.track));
    return new Set(active.filter((c) => {
      const type = c.clip.asset.type;
      if (type === 'html') return c.clip.filter !== undefined || !this.opts.printHtml;
      return UNSUPPORTED[type] !== undefined || lumaTracks.has(c.track);
    }));
  }

  /**
   * Whether clip `c` of a PDF is a page the browser prints (printHtml): every html clip the browser
   * does not draw as a picture, and, when printing is there, every text, title and rich-text clip
   * without a filter and not drawn by the browser (a luma track's): its words then are vector text.
   * A filtered text clip stays the engine's pixels with its words as an invisible layer.
   */
  private printed(c: TimedClip, browser: ReadonlySet<TimedClip>): boolean {
    if (!this.opts.printHtml || browser.has(c)) return false;
    const type = c.clip.asset.type;
    return type === 'html' || (TEXT_TYPES.has(type) && c.clip.filter === undefined && (this.opts.printsText?.() ?? true));
  }

  /**
   * A PDF drawn as a document of layers (issue 32): each clip of the frame in z-order, bottom first, as
   * what a PDF holds best (PdfLayers): html and text clips as the browser's printed vector pages (text
   * clips as their drawn pixels with their words as invisible text over them where nothing prints),
   * image clips as image objects of their own pixels, shapes as vector paths, each turned as its clip is; a filtered clip (what a PDF
   * cannot express as the engine draws it) as a picture of that clip alone, and the clips only the
   * browser draws as its pictures of them alone. Pictures are drawn under the pixel gate like any
   * frame's layers, a group at a time, each written into the page before the next is drawn.
   */
  private async renderPdf(
    edit: EditSpec,
    size: ReturnType<typeof outputSize>,
    time: number,
    active: TimedClip[],
    opts: StillRenderOptions,
    started: number,
  ): Promise<StillOutput> {
    const browser = this.byBrowser(active);
    const prints = new Set(active.filter((c) => this.printed(c, browser)));
    const printed = prints.size ? this.opts.printHtml!(edit, { time, clips: [...prints].map((c) => `${c.track}:${c.index}`) }) : undefined;
    // Settled here too, so a failed print while the rest is prepared is not an unhandled rejection.
    printed?.catch(() => undefined);
    const media = new RenderMediaCache(this.opts.fetch, { maxPixels: this.limitInputPixels });
    const fonts = await this.renderFonts(edit, media);
    // Prepared here: every clip this engine draws, and the text clips the browser draws (their words).
    const drawn = active.filter((c) => !UNSUPPORTED[c.clip.asset.type] && (!browser.has(c) || TEXT_TYPES.has(c.clip.asset.type)));
    const prepared = await this.prepare(drawn, edit, size.viewport, media, fonts);
    this.checkAspects(drawn, prepared, opts.aspectRules ?? []);
    const drawables = new Map(drawn.map((c, i) => [c, prepared[i]!]));
    const inputsDone = performance.now();
    const layout = pdfPageLayout(edit.output, size.viewport);
    const layers: PdfLayer[] = [];
    for (const c of active) {
      const drawable = drawables.get(c);
      if (!browser.has(c)) {
        const layer = this.pdfLayer(c, time, drawable, size, layout.pointsPerPx, prints.has(c));
        if (layer) layers.push(layer);
        continue;
      }
      let last = layers.at(-1);
      if (last?.kind !== 'browser') layers.push(last = { kind: 'browser', clips: [], texts: [] });
      last.clips.push(c);
      if (drawable?.text) {
        const v = clipVisualAt(c.clip, time - c.start, c.length, { viewport: size.viewport, source: drawable.source, still: true });
        last.texts.push({ text: { ...drawable.text, box: v.box }, turn: turnOf(v) });
      }
    }

    const release = await this.frames.take(size.width * size.height);
    let bytes: Buffer;
    let drawDone: number;
    try {
      const pdf = await PdfLayers.create({ width: size.width, height: size.height, page: layout });
      pdf.fill(parseColor(edit.timeline.background));
      const weights = layers.map((l) => l.kind === 'picture'
        ? layerCost(l.clip, size.viewport, size.pixelRatio, clipPath(l.clip)).pixels
        : l.kind === 'image' ? l.target.width * l.target.height : l.kind === 'browser' ? size.width * size.height : 0);
      for (const group of groupsOf(weights, this.gate.capacity)) {
        const held = await this.gate.take(group.reduce((n, i) => n + weights[i]!, 0));
        try {
          // The group's pixels are made at once, then written in z-order.
          const made = await Promise.all(group.map((i) => {
            const l = layers[i]!;
            if (l.kind === 'picture') return this.drawLayer(l.clip, time, l.drawable, size.viewport, size.pixelRatio, size);
            if (l.kind === 'image') return this.drawing(l.clip, () => l.drawable.pdfImage!(l.rect, l.target));
            if (l.kind === 'browser') return this.browserLayer(edit, l.clips, time, size, opts);
            return undefined;
          }));
          for (const [j, i] of group.entries()) {
            const l = layers[i]!;
            const pixels = made[j];
            if (l.kind === 'html') {
              // Awaited at the first html layer: the layers below are made while the browser prints.
              const pdfPage = (await printed)?.get(`${l.clip.track}:${l.clip.index}`);
              if (!pdfPage) throw new Error(`the browser printed no page for ${l.clip.clip.asset.type} clip ${l.clip.track}:${l.clip.index}`);
              await pdf.html({ pdf: pdfPage, ...l.place }, l.opacity);
            } else if (l.kind === 'image') {
              await pdf.image(pixels as PdfImageSource, l.place, l.opacity);
            } else if (l.kind === 'shape') {
              pdf.shape(l.shape, l.place, l.opacity);
            } else if (l.kind === 'browser') {
              const frame = pixels as Raster;
              await pdf.picture(frame.data, frame.width, frame.height, 0, 0);
              for (const { text, turn } of l.texts) await pdf.text(text, turn);
            } else {
              const placed = pixels as Placed | undefined;
              if (placed) await pdf.picture(placed.raster.data, placed.raster.width, placed.raster.height, placed.left, placed.top);
              if (l.drawable.text) await pdf.text({ ...l.drawable.text, box: l.box }, l.turn);
            }
          }
        } finally {
          held();
        }
      }
      if (opts.watermark) {
        const mark = await watermarkLayer(size.width, size.height);
        await pdf.picture(mark.raster.data, mark.raster.width, mark.raster.height, mark.left, mark.top);
      }
      drawDone = performance.now();
      bytes = await pdf.save();
    } finally {
      release();
    }
    const finished = performance.now();
    return {
      bytes, format: 'pdf', contentType: CONTENT_TYPES.pdf, width: size.width, height: size.height,
      timings: { inputs: inputsDone - started, draw: drawDone - inputsDone, encode: finished - drawDone, total: finished - started },
    };
  }

  /** `clips` alone drawn by the browser over a transparent background, as the output's pixels. */
  private async browserLayer(edit: EditSpec, clips: TimedClip[], time: number, size: ReturnType<typeof outputSize>, opts: StillRenderOptions): Promise<Raster> {
    const png = await this.opts.browserStill!(edit, { scale: Math.min(3, Math.max(1, opts.scale ?? 1)), time, clips: clips.map((c) => `${c.track}:${c.index}`) });
    return toRaster(sharp(png, { limitInputPixels: MAX_PIXELS }).resize(size.width, size.height, { fit: 'fill' }));
  }

  /** What clip `c` is on the PDF page, or undefined when nothing of it shows. */
  private pdfLayer(c: TimedClip, time: number, drawable: Drawable | undefined, size: ReturnType<typeof outputSize>, pointsPerPx: number, printed: boolean): PdfLayer | undefined {
    const { viewport, pixelRatio } = size;
    const source = drawable?.source ?? intrinsicSize(c.clip.asset, c.clip, viewport)!;
    const v = clipVisualAt(c.clip, time - c.start, c.length, { viewport, source, still: true });
    if (v.opacity <= 0 || v.content.width <= 0 || v.content.height <= 0 || v.crop.width <= 0 || v.crop.height <= 0) return undefined;
    const turned = turnOf(v);
    const turn = turned ? { turn: turned } : {};
    if (printed) return { kind: 'html', clip: c, place: { source, content: v.content, crop: v.crop, ...turn }, opacity: v.opacity };
    if (!drawable) return undefined;
    if (v.filter !== undefined) return { kind: 'picture', clip: c, drawable, box: v.box, turn: turned };
    if (drawable.shape) return { kind: 'shape', clip: c, shape: drawable.shape, place: { source, content: v.content, crop: v.crop, ...turn }, opacity: v.opacity };
    if (drawable.pdfImage) {
      // The part in the frame (all of it when turned), in whole source pixels; kept at its own
      // resolution up to the denser of the output's pixels and PDF_IMAGE_MAX_PPI on the page.
      const content = turned ? v.content : intersect(v.content, { x: 0, y: 0, ...viewport });
      if (content.width <= 0 || content.height <= 0) return undefined;
      const kx = v.crop.width / v.content.width;
      const ky = v.crop.height / v.content.height;
      const crop = { x: v.crop.x + (content.x - v.content.x) * kx, y: v.crop.y + (content.y - v.content.y) * ky, width: content.width * kx, height: content.height * ky };
      const x0 = Math.max(0, Math.floor(crop.x));
      const y0 = Math.max(0, Math.floor(crop.y));
      const rect = { x: x0, y: y0, width: Math.max(1, Math.min(source.width, Math.ceil(crop.x + crop.width)) - x0), height: Math.max(1, Math.min(source.height, Math.ceil(crop.y + crop.height)) - y0) };
      const density = Math.max(pixelRatio, (pointsPerPx / 72) * PDF_IMAGE_MAX_PPI); // pixels per design px
      const most = { width: Math.ceil((rect.width / kx) * density), height: Math.ceil((rect.height / ky) * density) };
      const k = Math.min(1, most.width / rect.width, most.height / rect.height);
      const target = { width: Math.max(1, Math.round(rect.width * k)), height: Math.max(1, Math.round(rect.height * k)) };
      const place = { source: { width: rect.width, height: rect.height }, content, crop: { ...crop, x: crop.x - rect.x, y: crop.y - rect.y }, ...turn };
      return { kind: 'image', clip: c, drawable, rect, target, place, opacity: v.opacity };
    }
    return { kind: 'picture', clip: c, drawable, box: v.box, turn: turned };
  }

  /** The frame drawn by this engine (every clip of `active` is one it draws), as PNG or JPEG. */
  private async renderHere(
    edit: EditSpec,
    format: 'png' | 'jpeg',
    size: ReturnType<typeof outputSize>,
    time: number,
    active: TimedClip[],
    opts: StillRenderOptions,
    started: number,
  ): Promise<StillOutput> {
    const media = new RenderMediaCache(this.opts.fetch, { maxPixels: this.limitInputPixels });
    const fonts = await this.renderFonts(edit, media);
    const drawables = await this.prepare(active, edit, size.viewport, media, fonts);
    this.checkAspects(active, drawables, opts.aspectRules ?? []);
    const inputsDone = performance.now();

    // At most MAX_PIXELS of frames are drawn at once in this process, whatever STILL_CONCURRENCY: two
    // stills of 50 megapixels wait for each other; sixty 1080² posts run side by side.
    const release = await this.frames.take(size.width * size.height);
    let drawn: { bytes: Buffer; drawDone: number };
    try {
      drawn = await this.drawAndEncode(edit, format, size, time, active, drawables, opts);
    } finally {
      release();
    }
    const { bytes, drawDone } = drawn;
    const finished = performance.now();
    return {
      bytes,
      format,
      contentType: CONTENT_TYPES[format],
      width: size.width,
      height: size.height,
      timings: { inputs: inputsDone - started, draw: drawDone - inputsDone, encode: finished - drawDone, total: finished - started },
    };
  }

  /** The frame's layers drawn (bounded by the pixel gate) and composited, then encoded. */
  private async drawAndEncode(
    edit: EditSpec,
    format: 'png' | 'jpeg',
    size: ReturnType<typeof outputSize>,
    time: number,
    active: TimedClip[],
    drawables: Drawable[],
    opts: StillRenderOptions,
  ): Promise<{ bytes: Buffer; drawDone: number }> {
    // Layers are drawn a bounded number of pixels at a time (the gate, shared by every still of this
    // process): a frame within it draws its layers at once; a frame beyond it, in groups, each
    // composited onto the frame and let go before the next is drawn.
    const weights = active.map((c) => layerCost(c, size.viewport, size.pixelRatio, clipPath(c)).pixels);
    const groups = groupsOf(weights, this.gate.capacity);
    const bg = parseColor(edit.timeline.background);
    const background: Background = { r: bg.r, g: bg.g, b: bg.b, alpha: bg.a };
    const watermark = opts.watermark ? await watermarkLayer(size.width, size.height) : undefined;
    const draw = (i: number) => this.drawLayer(active[i]!, time, drawables[i]!, size.viewport, size.pixelRatio, size);
    let drawDone: number;
    let bytes: Buffer;
    if (groups.length <= 1) {
      const release = await this.gate.take(weights.reduce((n, w) => n + w, 0));
      try {
        const layers = (await Promise.all(active.map((_, i) => draw(i)))).filter((p): p is Placed => p !== undefined);
        if (watermark) layers.push(watermark);
        drawDone = performance.now();
        bytes = await this.encode(format, edit.output, size, layers, background);
      } finally {
        release();
      }
    } else {
      // One frame buffer, each group painted into it in place (no copy of the frame per group).
      const canvas = solidRaster(size.width, size.height, background);
      for (const group of groups) {
        const release = await this.gate.take(group.reduce((n, i) => n + weights[i]!, 0));
        try {
          for (const l of await Promise.all(group.map(draw))) if (l) await paintOverInBands(canvas, l.raster, Math.round(l.left), Math.round(l.top));
        } finally {
          release();
        }
      }
      if (watermark) paintOver(canvas, watermark.raster, watermark.left, watermark.top);
      drawDone = performance.now();
      bytes = await this.write(format, edit.output, size, canvas.data, background);
    }
    return { bytes, drawDone };
  }

  /** The whole frame drawn by the browser engine, then watermarked and encoded like any PNG or JPEG still. */
  private async renderInBrowser(
    edit: EditSpec,
    format: 'png' | 'jpeg',
    size: ReturnType<typeof outputSize>,
    time: number,
    active: TimedClip[],
    opts: StillRenderOptions,
    started: number,
  ): Promise<StillOutput> {
    const png = await this.opts.browserStill!(edit, { scale: Math.min(3, Math.max(1, opts.scale ?? 1)), time });
    const frame = await toRaster(sharp(png, { limitInputPixels: MAX_PIXELS }).resize(size.width, size.height, { fit: 'fill' }));
    const inputsDone = performance.now();
    const layers: Placed[] = [{ raster: frame, left: 0, top: 0 }];
    if (opts.watermark) layers.push(await watermarkLayer(size.width, size.height));
    const drawDone = performance.now();
    const bytes = await this.encode(format, edit.output, size, layers, { r: 0, g: 0, b: 0, alpha: 0 });
    const finished = performance.now();
    return {
      bytes, format, contentType: CONTENT_TYPES[format], width: size.width, height: size.height,
      timings: { inputs: inputsDone - started, draw: drawDone - inputsDone, encode: finished - drawDone, total: finished - started },
    };
  }

  /** Template image fields' aspect ratios, checked on the downloaded pictures (422 at `values.KEY`). */
  private checkAspects(active: TimedClip[], drawables: Drawable[], rules: readonly AspectRule[]): void {
    if (rules.length === 0) return;
    const errors: FieldErrors = {};
    active.forEach((c, i) => {
      const size = drawables[i]?.imageSize;
      if (!size || c.clip.asset.type !== 'image') return;
      const src = c.clip.asset.src;
      for (const rule of rules) {
        const why = rule.url === src ? aspectMismatch(rule.aspectRatio, size) : null;
        if (why && !errors[rule.path]?.includes(why)) addError(errors, rule.path, why);
      }
    });
    if (Object.keys(errors).length) throw new ApiError('TEMPLATE_VALIDATION_FAILED', 'An image does not have the aspect ratio its field asks for', { errors });
  }

  /** Downloads `timeline.fonts` and checks that every family the frame uses exists (422 otherwise). */
  private async renderFonts(edit: EditSpec, media: RenderMediaCache): Promise<RenderFonts> {
    const errors: FieldErrors = {};
    const own: RenderFont[] = [];
    await Promise.all(
      edit.timeline.fonts.map(async (font, i) => {
        try {
          const file = await media.get(font.src, ['font']);
          own.push(await this.opts.fonts.install(file.bytes));
        } catch (err) {
          if (err instanceof MediaFetchError || err instanceof FontFileError) addError(errors, `edit.timeline.fonts[${i}].src`, err.message);
          else throw err;
        }
      }),
    );
    if (Object.keys(errors).length) throw new ApiError('MEDIA_UNAVAILABLE', 'A font of timeline.fonts could not be used', { errors });
    return new RenderFonts(this.opts.fonts, own);
  }

  private fontFor(family: string, fonts: RenderFonts, errors: FieldErrors, path: string): FontChoice {
    const found = fonts.resolve(family);
    if (found) return found.file ? { family: found.family, fontFile: found.file } : { family: found.family };
    addError(errors, path, `unknown font family "${family}": install it with timeline.fonts, or use one of the shipped families (Open Sans, Roboto, Inter, Lato, Noto Sans, Noto Sans CJK SC, DejaVu Serif, …; docs/decisions.md lists them)`);
    return { family };
  }

  private async prepare(active: TimedClip[], edit: EditSpec, viewport: Size, media: RenderMediaCache, fonts: RenderFonts): Promise<Drawable[]> {
    const familyErrors: FieldErrors = {};
    const fetchErrors: FieldErrors = {};
    const drawables = await Promise.all(
      active.map(async (c): Promise<Drawable | undefined> => {
        const path = clipPath(c);
        const asset = c.clip.asset;
        const box = intrinsicSize(asset, c.clip, viewport);
        switch (asset.type) {
          case 'text':
          case 'rich-text':
          case 'title': {
            const familyPath = asset.type === 'title' ? `${path}.asset.style` : `${path}.asset.font.family`;
            const font = this.fontFor(requestedFamily(asset), fonts, familyErrors, familyPath);
            const source = box!;
            let block: TextBlock = asset.type === 'text'
              ? textAssetBlock(asset, source, font)
              : asset.type === 'rich-text'
                ? richTextBlock(asset, source, font)
                : titleBlock(asset, source, viewport);
            if (asset.type === 'text' && asset.ellipsis !== undefined) block = await ellipsize(block, asset.ellipsis);
            return {
              source,
              key: digest('text', JSON.stringify(block)),
              draw: async (crop, target, scale) => cropScaled(await renderTextBlock(block, scale), crop, scale, target),
              text: {
                text: block.text,
                size: block.style.size,
                face: { family: block.style.family, weight: block.style.weight, ...(block.style.fontFile ? { file: block.style.fontFile } : {}), ...(block.style.italic ? { italic: true } : {}) },
                ...(block.style.lineHeight ? { lineHeight: block.style.lineHeight } : {}),
                ...(block.style.letterSpacing ? { letterSpacing: block.style.letterSpacing } : {}),
                ...(block.nudge ? { nudge: block.nudge } : {}),
                align: block.align,
                padding: block.padding,
              },
            };
          }
          case 'shape': {
            const source = box!;
            return {
              source,
              key: digest('shape', JSON.stringify(asset), JSON.stringify(source)),
              shape: shapeGeometry(asset, source),
              draw: async (crop, target, scale) => cropScaled(await toRaster(sharp(Buffer.from(shapeSvg(asset, source, scale)), OWN_SVG)), crop, scale, target),
            };
          }
          case 'svg': {
            let markup = asset.src;
            if (!markup.trimStart().startsWith('<')) {
              try {
                markup = (await media.get(asset.src, ['svg'])).bytes.toString('utf8');
              } catch (err) {
                if (!(err instanceof MediaFetchError)) throw err;
                addError(fetchErrors, `${path}.asset.src`, err.message);
                return undefined;
              }
            }
            const source = svgSize(markup) ?? box!;
            return {
              source,
              key: digest('svg', markup, JSON.stringify(source)),
              draw: (crop, target, scale) => this.drawSvg(markup, source, crop, target, scale),
            };
          }
          case 'image': {
            try {
              const file = await media.get(asset.src, ['image']);
              return await this.imageDrawable(asset, file);
            } catch (err) {
              if (!(err instanceof MediaFetchError)) throw err;
              addError(fetchErrors, `${path}.asset.src`, err.message);
              return undefined;
            }
          }
          default:
            throw new Error(`unreachable asset type ${asset.type}`);
        }
      }),
    );
    if (Object.keys(fetchErrors).length) throw new ApiError('MEDIA_UNAVAILABLE', 'A media file of the edit could not be used', { errors: fetchErrors });
    if (Object.keys(familyErrors).length) throw new ApiError('TEMPLATE_VALIDATION_FAILED', 'The edit names a font family that is not available', { errors: familyErrors });
    return drawables as Drawable[];
  }

  private async imageDrawable(asset: ImageAsset, file: FetchedMedia): Promise<Drawable> {
    const hash = digest(file.bytes);
    const oriented = await this.metadata.through(
      hash,
      async () => {
        let meta;
        try {
          meta = await sharp(file.bytes, { limitInputPixels: this.limitInputPixels }).metadata();
        } catch (err) {
          throw new MediaFetchError(file.url, `The image cannot be decoded: ${(err as Error).message}`);
        }
        if (!meta.width || !meta.height) throw new MediaFetchError(file.url, 'The image has no size');
        if (meta.width * meta.height > this.limitInputPixels) {
          throw new MediaFetchError(file.url, `The image is ${meta.width}×${meta.height}, more than ${this.limitInputPixels / 1e6} megapixels`);
        }
        const turned = (meta.orientation ?? 1) >= 5;
        // A JPEG a PDF can hold as it is (DCTDecode): upright, RGB or grey, with no colour profile to apply.
        const jpegAsIs = meta.format === 'jpeg' && (meta.orientation ?? 1) === 1 && !meta.icc && (meta.channels === 3 || meta.channels === 1) && (meta.space === 'srgb' || meta.space === 'b-w');
        return { width: turned ? meta.height : meta.width, height: turned ? meta.width : meta.height, opaque: !meta.hasAlpha, ...(jpegAsIs ? { jpeg: meta.channels as 1 | 3 } : {}) };
      },
      () => 64,
    );
    const crop = asset.crop ?? { top: 0, bottom: 0, left: 0, right: 0 };
    const cut = {
      x: Math.round(oriented.width * crop.left),
      y: Math.round(oriented.height * crop.top),
      width: Math.max(1, Math.round(oriented.width * (1 - crop.left - crop.right))),
      height: Math.max(1, Math.round(oriented.height * (1 - crop.top - crop.bottom))),
    };
    return {
      source: { width: cut.width, height: cut.height },
      imageSize: { width: oriented.width, height: oriented.height },
      opaque: oriented.opaque,
      key: digest('image', hash, JSON.stringify(cut)),
      pdfImage: async (rect, target) => {
        const whole = cut.width === oriented.width && cut.height === oriented.height && rect.width === cut.width && rect.height === cut.height;
        if (oriented.jpeg && whole && target.width === rect.width && target.height === rect.height) {
          return { kind: 'jpeg', bytes: file.bytes, width: oriented.width, height: oriented.height, colors: oriented.jpeg };
        }
        try {
          const raster = await toRaster(
            sharp(file.bytes, { limitInputPixels: this.limitInputPixels })
              .rotate()
              .extract({ left: cut.x + rect.x, top: cut.y + rect.y, width: Math.min(rect.width, oriented.width - cut.x - rect.x), height: Math.min(rect.height, oriented.height - cut.y - rect.y) })
              .resize(target.width, target.height, { fit: 'fill' }),
          );
          return { kind: 'rgba', ...raster, opaque: oriented.opaque };
        } catch (err) {
          throw new MediaFetchError(file.url, `The image cannot be decoded: ${(err as Error).message}`);
        }
      },
      // The source rectangle sampled to the sub-pixel (issue 32: the browser places a picture at
      // fractional pixels; rounding the crop to whole source pixels moved it by up to half a source
      // pixel times the scale).
      draw: async (_rect, target, _scale, exact) => {
        try {
          return await sampleImage(sharp(file.bytes, { limitInputPixels: this.limitInputPixels }).rotate(), cut, exact, target);
        } catch (err) {
          throw new MediaFetchError(file.url, `The image cannot be decoded: ${(err as Error).message}`);
        }
      },
    };
  }

  private async drawSvg(markup: string, source: Size, crop: Rect, target: Size, scale: number): Promise<Raster> {
    const width = Math.max(1, Math.round(source.width * scale));
    const height = Math.max(1, Math.round(source.height * scale));
    const own = svgSize(markup);
    const density = own ? Math.min(72 * 40, Math.max(1, 72 * (width / own.width))) : 72;
    // No layer is larger than the largest frame (layerPixelLimit), so neither is a decoded SVG.
    const full = await toRaster(sharp(Buffer.from(markup), { density, limitInputPixels: MAX_PIXELS }).resize(width, height, { fit: 'fill' }));
    return cropScaled(full, crop, scale, target);
  }

  /**
   * `layer`, with a failure of the drawing itself (libvips, Pango refusing what the clip asks) as
   * 422 RENDER_FAILED naming the clip and the cause: the same edit fails the same way on any worker,
   * so it fails at once and is not run again. Out of memory is not the edit's fault: thrown as it is.
   */
  private drawLayer(c: TimedClip, time: number, drawable: Drawable, viewport: Size, pixelRatio: number, frame: Size): Promise<Placed | undefined> {
    return this.drawing(c, () => this.layer(c, time, drawable, viewport, pixelRatio, frame));
  }

  /** `work` drawing clip `c`, its failure as drawLayer's. */
  private async drawing<T>(c: TimedClip, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ApiError || /out of memory|ENOMEM|allocat/i.test((err as Error).message)) throw err;
      const cause = (err as Error).message.trim().split('\n')[0] ?? 'unknown error';
      throw new ApiError('RENDER_FAILED', `${clipPath(c)} cannot be drawn: ${cause}`, { errors: { [clipPath(c)]: [`cannot be drawn: ${cause}`] } });
    }
  }

  /** One clip drawn, filtered, transformed and faded, at its place in the output (cached by its inputs). */
  private async layer(c: TimedClip, time: number, drawable: Drawable, viewport: Size, pixelRatio: number, frame: Size): Promise<Placed | undefined> {
    const v = clipVisualAt(c.clip, time - c.start, c.length, { viewport, source: drawable.source, still: true });
    if (v.opacity <= 0 || v.content.width <= 0 || v.content.height <= 0 || v.crop.width <= 0 || v.crop.height <= 0) return undefined;
    const key = digest(drawable.key, JSON.stringify(v), String(pixelRatio), `${frame.width}x${frame.height}`);
    const cached = this.layers.get(key);
    if (cached) return cached;

    const transformed = v.rotate !== 0 || v.skew.x !== 0 || v.skew.y !== 0 || v.flip.horizontal || v.flip.vertical;
    let content = { x: v.content.x * pixelRatio, y: v.content.y * pixelRatio, width: v.content.width * pixelRatio, height: v.content.height * pixelRatio };
    let crop = v.crop;
    if (!transformed) {
      // Draw only what lands in the frame (a clip scaled past the edges costs no more than the frame).
      const visible = intersect(content, { x: 0, y: 0, width: frame.width, height: frame.height });
      if (visible.width <= 0 || visible.height <= 0) return undefined;
      const kx = crop.width / content.width;
      const ky = crop.height / content.height;
      crop = { x: crop.x + (visible.x - content.x) * kx, y: crop.y + (visible.y - content.y) * ky, width: visible.width * kx, height: visible.height * ky };
      content = visible;
    }
    const left = Math.round(content.x);
    const top = Math.round(content.y);
    const target = { width: Math.max(1, Math.round(content.x + content.width) - left), height: Math.max(1, Math.round(content.y + content.height) - top) };
    // The largest single layer (a clip scaled far past the frame): the render budget's (at least the frame).
    if (target.width * target.height > layerPixelLimit(frame.width * frame.height)) {
      throw new ApiError('TEMPLATE_VALIDATION_FAILED', 'A clip is too large to draw', { errors: { [`${clipPath(c)}.scale`]: [`the clip would be ${target.width}×${target.height} pixels`] } });
    }
    const scale = content.width / crop.width;
    const ky = content.height / crop.height;
    const exact = { x: crop.x + (left - content.x) / scale, y: crop.y + (top - content.y) / ky, width: target.width / scale, height: target.height / ky };
    let raster = await drawable.draw(crop, target, scale, exact);
    raster = await applyFilter(raster, v.filter, pixelRatio);

    let placed: Placed = { raster, left, top };
    if (transformed) placed = await this.transform(placed, v, pixelRatio);
    // Every drawable's draw(), applyFilter and transform hand back a raster of their own (none cached):
    // faded in place, not copied.
    placed = { ...placed, raster: await fadeInPlace(placed.raster, v.opacity), key };
    if (drawable.opaque && v.opacity >= 1 && !transformed && v.filter !== 'blur') placed.opaque = true;
    this.layers.set(key, placed, placed.raster.data.length);
    return placed;
  }

  /**
   * Flip, skew and rotate about the centre of the clip's box, as CSS draws `rotate() skew() scale()`
   * about `transform-origin: center` in the video (issue 32, "a still is the frame"): one sharp
   * affine, placed to the sub-pixel. Raster pixel (i, j) is the point (left + i + ½, top + j + ½) of
   * the output; it lands at C + M·(that − C), C the box's centre. libvips writes input pixel i at
   * output pixel M·i + offset − origin, its origin being the bounding box of the transformed raster
   * rounded to whole pixels (rint, without the offset): so the fractional part of the landing goes
   * in the offset and the whole part in the layer's place. Bilinear, as Chromium samples a turned
   * picture (bicubic's sharper edges cost a hundredth of SSIM along them against the video's frame).
   */
  private async transform(placed: Placed, v: ReturnType<typeof clipVisualAt>, pixelRatio: number): Promise<Placed> {
    // Two transparent pixels around it: libvips' output area (the transformed corners 0 and w) leaves
    // out a row or column on the side a flip or turn sends pixel 0 to, and the interpolation's soft
    // edge reaches past the raster.
    const p = { raster: padRaster(placed.raster, TRANSFORM_PAD), left: placed.left - TRANSFORM_PAD, top: placed.top - TRANSFORM_PAD };
    const rad = (d: number) => (d * Math.PI) / 180;
    const cos = Math.cos(rad(v.rotate));
    const sin = Math.sin(rad(v.rotate));
    const kx = Math.tan(rad(v.skew.x));
    const ky = Math.tan(rad(v.skew.y));
    const fx = v.flip.horizontal ? -1 : 1;
    const fy = v.flip.vertical ? -1 : 1;
    // R (clockwise on screen, y down) × K (shear) × F (flip)
    const m: [[number, number], [number, number]] = [
      [(cos - sin * ky) * fx, (cos * kx - sin) * fy],
      [(sin + cos * ky) * fx, (sin * kx + cos) * fy],
    ];
    const cx = (v.box.x + v.box.width / 2) * pixelRatio;
    const cy = (v.box.y + v.box.height / 2) * pixelRatio;
    const dx = p.left + 0.5 - cx;
    const dy = p.top + 0.5 - cy;
    // Where raster pixel (0, 0) lands, as an output pixel index.
    const qx = cx + m[0][0] * dx + m[0][1] * dy - 0.5;
    const qy = cy + m[1][0] * dx + m[1][1] * dy - 0.5;
    const odx = qx - Math.floor(qx);
    const ody = qy - Math.floor(qy);
    const { width: w, height: h } = p.raster;
    const corners = [[0, 0], [w, 0], [0, h], [w, h]] as const;
    const originX = rint(Math.min(...corners.map(([x, y]) => m[0][0] * x + m[0][1] * y)));
    const originY = rint(Math.min(...corners.map(([x, y]) => m[1][0] * x + m[1][1] * y)));
    const turned = await toRaster(fromRaster(p.raster).affine(m, { background: { r: 0, g: 0, b: 0, alpha: 0 }, interpolator: sharp.interpolators.bilinear, odx, ody }));
    return { raster: turned, left: Math.floor(qx) + originX, top: Math.floor(qy) + originY };
  }

  private async encode(
    format: 'png' | 'jpeg',
    output: Output,
    size: ReturnType<typeof outputSize>,
    layers: Placed[],
    background: Background,
  ): Promise<Buffer> {
    // A full-frame opaque bottom layer (the usual photo background) is the canvas: one blend fewer.
    const [first] = layers;
    const fills = first?.opaque && first.left === 0 && first.top === 0 && first.raster.width === size.width && first.raster.height === size.height;
    const rest = fills ? layers.slice(1) : layers;
    // Layers covering little of the frame (text, logos, shapes over a photo) are painted over it in
    // JavaScript, touching only their own pixels; libvips' composite runs every layer over the whole
    // frame (~20 ms for three small layers on a 1080² photo). Many large layers go through libvips.
    const painted = rest.reduce((sum, l) => sum + l.raster.width * l.raster.height, 0);
    const inJs = painted <= size.width * size.height * JS_PAINT_MAX_FRAMES;
    // A PNG in bands (png.ts): rows drawn only from cached layers come from an earlier frame's PNG; the
    // rest is painted a band at a time, each band written on a pool thread while the next is painted.
    const plan = format === 'png' && inJs && writtenInBands(size.width, size.height) ? this.png.plan(size.width, size.height, frameRows(layers, size.height, `${background.r},${background.g},${background.b},${background.alpha}`)) : undefined;
    if (plan) {
      const canvas: Raster = { data: takeFrame(size.width * size.height * 4), width: size.width, height: size.height };
      try {
        // A piece at a time (at most 128 rows), the event loop let go after every PIXELS_PER_TURN
        // pixels painted, as inBands does (a 1080² template's text rows are one turn).
        let painted = 0;
        const paint = async (piece: FrameRows) => {
          paintRows(canvas, fills ? first : undefined, rest, background, piece);
          painted += (piece.to - piece.from) * size.width;
          if (painted < PIXELS_PER_TURN) return;
          painted = 0;
          await nextTurn();
        };
        for (const piece of plan.toWrite) {
          await paint(piece);
          plan.write(piece, canvas.data);
        }
        const joined = await plan.finish();
        if (joined) return joined;
        // Bands that cannot be joined (a band's first row filtered with Avg): the frame written whole.
        for (const piece of plan.pieces) if (piece.band) await paint(piece); // the others are painted above
        return await encodeFramePngWhole(canvas.data, size.width, size.height);
      } finally {
        releaseFrame(canvas.data);
      }
    }
    let pixels: Buffer;
    let pooled: Buffer | undefined;
    if (inJs) {
      pooled = takeFrame(size.width * size.height * 4);
      if (fills) first.raster.data.copy(pooled);
      const canvas = fills ? { ...first.raster, data: pooled } : solidRaster(size.width, size.height, background, pooled);
      for (const l of rest) await paintOverInBands(canvas, l.raster, Math.round(l.left), Math.round(l.top));
      pixels = canvas.data;
    } else {
      const base = fills ? sharp(first.raster.data, RAW(first.raster)) : sharp({ create: { width: size.width, height: size.height, channels: 4, background } });
      pixels = await base.composite(clipToCanvas(rest, size.width, size.height)).raw().toBuffer();
    }
    try {
      return await this.write(format, output, size, pixels, background);
    } finally {
      if (pooled) releaseFrame(pooled);
    }
  }

  /** The frame's pixels in the output format (they are not read after this resolves). */
  private async write(format: 'png' | 'jpeg', output: Output, size: ReturnType<typeof outputSize>, pixels: Buffer, background: Background): Promise<Buffer> {
    const quality = output.quality;
    if (format === 'jpeg') {
      const opaque = background.alpha >= 1 ? background : { r: 255, g: 255, b: 255 };
      return sharp(pixels, { raw: { width: size.width, height: size.height, channels: 4 } }).flatten({ background: opaque }).jpeg({ quality: JPEG_QUALITY[quality ?? 'high'], chromaSubsampling: quality === 'veryhigh' ? '4:4:4' : '4:2:0' }).toBuffer();
    }
    return encodeFramePng(pixels, size.width, size.height);
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Rows [from, to) of the frame: the bottom layer's (or the background), then each layer painted over them. */
function paintRows(canvas: Raster, base: Placed | undefined, layers: readonly Placed[], background: Background, rows: { from: number; to: number }): void {
  const start = rows.from * canvas.width * 4;
  const end = rows.to * canvas.width * 4;
  if (base) base.raster.data.copy(canvas.data, start, start, end);
  else canvas.data.fill(solidPixel(background), start, end);
  for (const l of layers) paintOver(canvas, l.raster, Math.round(l.left), Math.round(l.top), rows);
}

/**
 * The frame cut into bands at every layer's top and bottom edge, each named by the layers over it
 * (their keys and places, bottom first, and `salt`: how they are blended onto what background), or
 * not named when one of them is not a cached layer.
 */
export function frameRows(layers: readonly Placed[], height: number, salt: string): FrameRows[] {
  const placed = layers.map((l) => ({ l, top: Math.round(l.top), left: Math.round(l.left) }));
  const cuts = new Set([0, height]);
  for (const { l, top } of placed) for (const y of [top, top + l.raster.height]) cuts.add(Math.min(height, Math.max(0, y)));
  const ys = [...cuts].sort((a, b) => a - b);
  return ys.slice(1).map((to, i) => {
    const from = ys[i]!;
    const over = placed.filter(({ l, top }) => top < to && top + l.raster.height > from);
    const named = over.every(({ l }) => l.key !== undefined);
    return { from, to, key: named ? digest(salt, ...over.map(({ l, top, left }) => `${l.key}@${left},${top}`)) : undefined };
  });
}

/**
 * Consecutive groups (by index, bottom layer first) whose weights sum to at most `capacity`; a layer
 * heavier than the capacity is a group of its own. One group: everything at once.
 */
export function groupsOf(weights: readonly number[], capacity: number): number[][] {
  const groups: number[][] = [];
  let sum = Infinity;
  weights.forEach((w, i) => {
    if (sum + w > capacity) {
      groups.push([]);
      sum = 0;
    }
    groups.at(-1)!.push(i);
    sum += w;
  });
  return groups;
}

/** A clip's rotation, skew and flip for a PDF page (PdfPlacement.turn), or undefined when it has none. */
function turnOf(v: ReturnType<typeof clipVisualAt>): PdfPlacement['turn'] {
  const plain = v.rotate === 0 && v.skew.x === 0 && v.skew.y === 0 && !v.flip.horizontal && !v.flip.vertical;
  return plain ? undefined : { box: v.box, rotate: v.rotate, skew: v.skew, flip: v.flip };
}

/**
 * `rect` (source px, within `cut` of the upright image) resampled to `target` pixels, to the
 * sub-pixel: the whole source pixels under it are shrunk (antialiased) to about the target's scale,
 * then an affine enlarges them or takes out the remaining fraction of a pixel (skipped when that is
 * under SUBPIXEL_SLACK: it doubles the time of a full-frame photo). Pixels of `target` beyond `cut`
 * are transparent.
 */
async function sampleImage(image: Sharp.Sharp, cut: Rect, rect: Rect, target: Size): Promise<Raster> {
  const kx = target.width / rect.width;
  const ky = target.height / rect.height;
  const sx = cut.x + rect.x;
  const sy = cut.y + rect.y;
  // An enlargement reads two source pixels more on each side (within the cut): the interpolation's reach.
  const mx = kx > 1 ? 2 : 0;
  const my = ky > 1 ? 2 : 0;
  const x0 = Math.max(cut.x, Math.floor(sx + 1e-9) - mx);
  const y0 = Math.max(cut.y, Math.floor(sy + 1e-9) - my);
  const x1 = Math.min(cut.x + cut.width, Math.ceil(sx + rect.width - 1e-9) + mx);
  const y1 = Math.min(cut.y + cut.height, Math.ceil(sy + rect.height - 1e-9) + my);
  if (x1 <= x0 || y1 <= y0) return blank(target.width, target.height);
  // Shrunk by resize (antialiased); enlarged by the affine alone: libvips' resize puts an enlarged
  // picture half an output pixel right and down of where its pixel centres belong (the browser does not).
  const w = kx > 1 ? x1 - x0 : Math.max(1, Math.round((x1 - x0) * kx));
  const h = ky > 1 ? y1 - y0 : Math.max(1, Math.round((y1 - y0) * ky));
  const region = image.extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 });
  const resized = w === x1 - x0 && h === y1 - y0 ? region : region.resize(w, h, { fit: 'fill' });
  // Target pixel t samples the resized pixel a·t + b (pixel centres).
  const ax = w / ((x1 - x0) * kx);
  const ay = h / ((y1 - y0) * ky);
  const bx = ((sx - x0) * kx + 0.5) * ax - 0.5;
  const by = ((sy - y0) * ky + 0.5) * ay - 0.5;
  // How far from its place a target pixel lands without the affine (offset, then drift across it).
  const off = (a: number, b: number, n: number) => Math.abs(b - Math.round(b)) + Math.abs(a - 1) * n;
  if (off(ax, bx, target.width) <= SUBPIXEL_SLACK && off(ay, by, target.height) <= SUBPIXEL_SLACK) {
    const shift = { x: Math.round(bx), y: Math.round(by) };
    const placed = await toRaster(resized);
    if (shift.x === 0 && shift.y === 0 && placed.width === target.width && placed.height === target.height) return placed;
    const out = blank(target.width, target.height);
    paintOver(out, placed, -shift.x, -shift.y);
    return out;
  }
  // libvips writes pixel u at u/a − b/a (its origin is 0 for a positive scale); the edge pixels are
  // repeated first (EDGE of them), so a target pixel at the region's edge is not blended with nothing.
  const placed = await toRaster(
    fromRaster(await toRaster(resized.extend({ top: EDGE, bottom: EDGE, left: EDGE, right: EDGE, extendWith: 'copy' })))
      .affine([[1 / ax, 0], [0, 1 / ay]], { background: { r: 0, g: 0, b: 0, alpha: 0 }, interpolator: sharp.interpolators.bicubic, odx: -(bx + EDGE) / ax, ody: -(by + EDGE) / ay }),
  );
  if (placed.width === target.width && placed.height === target.height) return placed;
  const out = blank(target.width, target.height);
  paintOver(out, placed, 0, 0);
  return out;
}

/** Output pixels a picture may land off its exact place before sampleImage corrects it with an affine. */
const SUBPIXEL_SLACK = 0.1;

/** Edge pixels repeated around a picture before its sub-pixel affine (sampleImage). */
const EDGE = 2;

/** C's rint: to the nearest whole number, halves to even (how libvips rounds its output area). */
function rint(v: number): number {
  const r = Math.round(v);
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function intersect(a: Rect, b: Rect): Rect {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  return { x, y, width: Math.min(a.x + a.width, b.x + b.width) - x, height: Math.min(a.y + a.height, b.y + b.height) - y };
}

/** Cuts `crop` (source px) out of a raster drawn at `scale` and fits it to exactly `target`. */
async function cropScaled(full: Raster, crop: Rect, scale: number, target: Size): Promise<Raster> {
  const part = cropRaster(full, {
    left: Math.round(crop.x * scale),
    top: Math.round(crop.y * scale),
    width: Math.max(1, Math.round(crop.width * scale)),
    height: Math.max(1, Math.round(crop.height * scale)),
  });
  if (part.width === target.width && part.height === target.height) return part;
  if (part.width === 0 || part.height === 0) return { data: Buffer.alloc(target.width * target.height * 4), ...target };
  return toRaster(fromRaster(part).resize(target.width, target.height, { fit: 'fill' }));
}

export type { Clip };
