import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { svgMayAnimate } from './spans.js';
import { ApiError, type FieldErrors } from '#libs/core';
import { assertTiming, type Asset, clipsAt, type Crop, type Durations, type EditSpec, intrinsicSize, outputFps, outputSize, type OutputSize, type Rect, RENDER_BUDGET, type Size, svgSize, type TimedClip, type Timing } from '#libs/edit-spec';
import { FontFileError, MediaFetchError, NEEDS_TRANSCODE, probeMedia, RenderMediaCache, transcodeVideo, type FetchedMedia, type MediaKind, type ProbedMedia } from '#libs/media';
import { DEFAULT_FAMILY, ellipsize, RenderFonts, requestedFamily, richTextBlock, shapeSvg, textAssetBlock, titleBlock, type FontCatalog, type FontChoice, type MediaFetcher, type RenderFont } from '#libs/still';
// The still engine's mapping of text, rich-text and title assets to text blocks, and of shapes to SVG:
// the video draws exactly what a still of the same frame draws (libs/still exports only its engine).
import { parseSubtitles } from './captions.js';
import type { TextFetcher } from './fetch-text.js';
import { faceTraits, fontFaceRules } from './font-face.js';
import { htmlDocument, MAX_HTML_RESOURCES, remoteUrls } from './html.js';
import type { MediaServer } from './media-server.js';
import { clipKey, type ClipInputs, type EditProps, type MediaInput, type SoundtrackInput } from './props.js';

export interface InputSources {
  fetch: MediaFetcher;
  fetchText?: TextFetcher;
  fonts: FontCatalog;
  server: MediaServer;
  /** Parent of the per-render folders. */
  workDir: string;
}

export interface PrepareOptions {
  /**
   * One frame at rest (renderHtmlStill): only the clips showing at that time are prepared; with
   * `clips` (keys `track:index`), only those, over a transparent background (a PDF's layers that only
   * the browser draws: the still engine lays each such picture at its place in the stack).
   */
  still?: { time?: number; scale?: number; durations?: Durations; clips?: readonly string[] };
  /** Only these asset types are prepared (a PDF's html clips: printHtmlClips); default all. */
  only?: readonly string[];
  signal?: AbortSignal;
}

/** A render's inputs on disk and served: remove them with `dispose` when the render is over. */
export interface PreparedRender {
  props: EditProps;
  timing: Timing;
  size: OutputSize;
  dir: string;
  dispose: () => Promise<void>;
}

const clipPath = (c: { track: number; index: number }) => `edit.timeline.tracks[${c.track}].clips[${c.index}]`;

function addError(errors: FieldErrors, path: string, message: string): void {
  (errors[path] ??= []).push(message);
}

const EXPECT: Readonly<Partial<Record<Asset['type'], readonly MediaKind[]>>> = {
  image: ['image'],
  video: ['video'],
  audio: ['audio', 'video'],
  luma: ['video', 'image'],
};

const EXTENSION: Readonly<Record<string, string>> = {
  'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp', 'image/avif': 'avif', 'image/svg+xml': 'svg',
  'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm',
  'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/wav': 'wav', 'audio/ogg': 'ogg', 'audio/flac': 'flac',
};

interface LocalMedia {
  url: string;
  file: string;
  kind: MediaKind;
  probe: ProbedMedia & { animated?: boolean };
}

/**
 * Everything a render needs before the browser sees it: media downloaded (the fetcher applies the
 * SSRF rules; our stored files come from storage) into a folder of this render, served on loopback,
 * probed with ffprobe (durations for `auto` lengths, sizes for layout); fonts installed; text blocks,
 * SVGs, html documents and caption cues made. A file that cannot be used fails the render with 422
 * MEDIA_UNAVAILABLE naming the clip's src.
 */
export async function prepareRender(edit: EditSpec, sources: InputSources, opts: PrepareOptions = {}): Promise<PreparedRender> {
  const dir = await mkdtemp(join(sources.workDir, 'render-'));
  const mount = sources.server.mount(dir);
  const dispose = async () => {
    mount.unmount();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const prepared = await new Preparation(edit, sources, opts, dir, mount.base).run();
    return { ...prepared, dir, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

class Preparation {
  private readonly cache: RenderMediaCache;
  private readonly local = new Map<string, Promise<LocalMedia>>();
  private readonly transcoded = new Map<string, Promise<LocalMedia>>();
  private files = 0;
  private readonly fetchErrors: FieldErrors = {};
  private readonly familyErrors: FieldErrors = {};

  constructor(
    private readonly edit: EditSpec,
    private readonly sources: InputSources,
    private readonly opts: PrepareOptions,
    private readonly dir: string,
    private readonly base: string,
  ) {
    this.cache = new RenderMediaCache(sources.fetch, { maxPixels: RENDER_BUDGET.mediaPixels, ...(opts.signal ? { signal: opts.signal } : {}) });
  }

  private check(): void {
    this.opts.signal?.throwIfAborted();
  }

  private name(ext: string): string {
    return `f${this.files++}.${ext}`;
  }

  /** Downloads `src` once, writes it to the render folder and probes it. */
  private media(src: string, expect: readonly MediaKind[]): Promise<LocalMedia> {
    let entry = this.local.get(src);
    if (!entry) {
      entry = (async () => {
        const fetched = await this.cache.get(src, expect);
        this.check();
        const name = this.name(EXTENSION[fetched.mime] ?? 'bin');
        const file = join(this.dir, name);
        await writeFile(file, fetched.bytes);
        return { url: this.base + name, file, kind: fetched.kind, probe: await probe(fetched, file, this.opts.signal) };
      })();
      this.local.set(src, entry);
    }
    return entry.then((m) => {
      if (!expect.includes(m.kind)) throw new MediaFetchError(src, `Expected ${expect.join(' or ')}, got ${m.kind}`);
      return m;
    });
  }

  /**
   * The file a clip plays: a video clip with `transcode: true` gets the friendly intermediate
   * (libs/media transcode.ts), made once per source, rate and length; a picture in a codec the
   * browser cannot decode without it is refused naming the property that fixes it.
   */
  private async playable(m: LocalMedia, c: TimedClip, path: string): Promise<LocalMedia | undefined> {
    const asset = c.clip.asset;
    if (m.kind !== 'video' || !m.probe.hasVideo) return m;
    const wanted = asset.type === 'video' && asset.transcode === true;
    const codec = m.probe.videoCodec ?? 'unknown';
    if (!wanted) {
      if (!NEEDS_TRANSCODE.has(codec)) return m;
      const fix = asset.type === 'video' ? 'set "transcode": true on the asset to re-encode it before rendering' : 'a luma matte is not transcoded: give it an H.264, VP9 or AV1 file';
      addError(this.fetchErrors, path, `The video is encoded with ${codec}, which the renderer cannot decode as it is; ${fix}`);
      return undefined;
    }
    const speed = asset.type === 'video' ? asset.speed : 1;
    const trim = asset.type === 'video' ? asset.trim : 0;
    const fps = Math.round(outputFps(this.edit.output) * Math.max(1, speed) * 1000) / 1000;
    // The part the clip plays, plus a second for the extractor's look-ahead; all of it when the clip runs to the file's end.
    const until = Number.isFinite(c.length) ? trim + c.length * speed + 1 : undefined;
    const key = `${m.file}\n${fps}\n${until ?? ''}`;
    let entry = this.transcoded.get(key);
    if (!entry) {
      entry = (async () => {
        const name = this.name('mp4');
        const file = join(this.dir, name);
        await transcodeVideo(m.file, file, { fps, ...(until !== undefined && until < (m.probe.duration ?? Infinity) ? { until } : {}), ...(this.opts.signal ? { signal: this.opts.signal } : {}) });
        const probed = await probeMedia(file, this.opts.signal);
        return { url: this.base + name, file, kind: m.kind, probe: probed };
      })();
      this.transcoded.set(key, entry);
    }
    try {
      return await entry;
    } catch (err) {
      this.check();
      addError(this.fetchErrors, path, `The video could not be transcoded: ${(err as Error).message}`);
      return undefined;
    }
  }

  /** The media of `src`, or undefined with the failure recorded under `path`. */
  private async tryMedia(src: string, expect: readonly MediaKind[], path: string): Promise<LocalMedia | undefined> {
    try {
      return await this.media(src, expect);
    } catch (err) {
      if (!(err instanceof MediaFetchError)) throw err;
      addError(this.fetchErrors, path, err.message);
      return undefined;
    }
  }

  private throwFetchErrors(): void {
    if (Object.keys(this.fetchErrors).length) {
      throw new ApiError('MEDIA_UNAVAILABLE', `A media file of the edit could not be used: ${Object.keys(this.fetchErrors).join(', ')}`, { errors: this.fetchErrors });
    }
  }

  async run(): Promise<{ props: EditProps; timing: Timing; size: OutputSize }> {
    const { edit, opts } = this;
    const still = opts.still;
    const size = outputSize(edit.output, still?.scale === undefined ? {} : { scale: still.scale });
    const viewport = size.viewport;

    // 1. Media with a duration (video, audio, luma, soundtrack): `auto` lengths need them probed
    //    before the timing exists. A still takes the durations it is given, as the still engine does.
    let durations: Durations | undefined = still?.durations;
    if (!still) {
      const all = edit.timeline.tracks.flatMap((t, track) => t.clips.map((clip, index) => ({ clip, track, index })));
      const probed = new Map<string, number>();
      await Promise.all(all.map(async ({ clip, track, index }) => {
        const expect = EXPECT[clip.asset.type];
        if (!expect || !('src' in clip.asset)) return;
        const m = await this.tryMedia(clip.asset.src, expect, `${clipPath({ track, index })}.asset.src`);
        if (m?.probe.duration !== undefined) probed.set(clip.asset.src, m.probe.duration);
      }));
      const soundtrack = edit.timeline.soundtrack;
      if (soundtrack) {
        const m = await this.tryMedia(soundtrack.src, ['audio', 'video'], 'edit.timeline.soundtrack.src');
        if (m?.probe.duration !== undefined) probed.set(soundtrack.src, m.probe.duration);
      }
      this.throwFetchErrors();
      durations = probed;
    }
    this.check();
    const timing = assertTiming(edit, durations ? { durations } : {});
    const time = still ? (still.time ?? edit.output.poster?.capture ?? timing.window.start) : timing.window.start;
    const wanted: TimedClip[] = (still ? clipsAt(timing, time) : timing.tracks.flat())
      .filter((c) => (!opts.only || opts.only.includes(c.clip.asset.type)) && (!still?.clips || still.clips.includes(clipKey(c.track, c.index))));

    // 2. Fonts of timeline.fonts, then every clip's inputs.
    const { fonts, faces } = await this.renderFonts();
    const clips: Record<string, ClipInputs> = {};
    await Promise.all(wanted.map(async (c) => {
      const inputs = await this.clipInputs(c, viewport, fonts, faces);
      if (inputs) clips[clipKey(c.track, c.index)] = inputs;
    }));
    this.throwFetchErrors();
    if (Object.keys(this.familyErrors).length) {
      throw new ApiError('TEMPLATE_VALIDATION_FAILED', 'The edit names a font family that is not available', { errors: this.familyErrors });
    }

    let soundtrack: SoundtrackInput | undefined;
    if (!still && edit.timeline.soundtrack) {
      const s = edit.timeline.soundtrack;
      const m = await this.media(s.src, ['audio', 'video']);
      soundtrack = { url: m.url, volume: s.volume, duration: Math.min(m.probe.duration ?? timing.duration, timing.duration) };
      if (s.effect) soundtrack.effect = s.effect;
    }

    const fps = outputFps(edit.output);
    const props: EditProps = {
      width: size.width,
      height: size.height,
      viewport,
      pixelRatio: size.pixelRatio,
      fps,
      durationInFrames: still ? 1 : Math.max(1, Math.round(timing.window.length * fps)),
      windowStart: time,
      background: still?.clips ? '#00000000' : edit.timeline.background,
      timing: { tracks: still ? timing.tracks.map((t) => t.filter((c) => wanted.includes(c))) : timing.tracks },
      clips,
      mediaOrigin: this.sources.server.origin,
      fontFaces: faces,
      still: still !== undefined,
      muted: edit.output.mute === true,
    };
    if (soundtrack) props.soundtrack = soundtrack;
    return { props, timing, size };
  }

  private async renderFonts(): Promise<{ fonts: RenderFonts; faces: string }> {
    const own: RenderFont[] = [];
    const rules: string[] = [];
    await Promise.all(this.edit.timeline.fonts.map(async (font, i) => {
      const path = `edit.timeline.fonts[${i}].src`;
      try {
        const file = await this.cache.get(font.src, ['font']);
        const installed = await this.sources.fonts.install(file.bytes);
        const name = this.name(installed.path.split('.').pop() ?? 'ttf');
        await copyFile(installed.path, join(this.dir, name));
        own.push(installed);
        rules.push(fontFaceRules(installed.families, this.base + name, faceTraits(await readFile(installed.path))));
      } catch (err) {
        if (err instanceof MediaFetchError || err instanceof FontFileError) addError(this.fetchErrors, path, err.message);
        else throw err;
      }
    }));
    if (Object.keys(this.fetchErrors).length) {
      throw new ApiError('MEDIA_UNAVAILABLE', 'A font of timeline.fonts could not be used', { errors: this.fetchErrors });
    }
    return { fonts: new RenderFonts(this.sources.fonts, own), faces: rules.join('\n') };
  }

  private fontFor(family: string, fonts: RenderFonts, path: string): FontChoice {
    const found = fonts.resolve(family);
    if (found) return { family: found.family };
    addError(this.familyErrors, path, `unknown font family "${family}": install it with timeline.fonts, or use one of the shipped families (Open Sans, Roboto, Inter, Lato, Noto Sans, Noto Sans CJK SC, DejaVu Serif, …; docs/decisions.md lists them)`);
    return { family };
  }

  private async clipInputs(c: TimedClip, viewport: Size, fonts: RenderFonts, faces: string): Promise<ClipInputs | undefined> {
    const path = clipPath(c);
    const asset = c.clip.asset;
    const box = intrinsicSize(asset, c.clip, viewport);
    switch (asset.type) {
      case 'image':
      case 'video':
      case 'luma':
      case 'audio': {
        const fetched = await this.tryMedia(asset.src, EXPECT[asset.type]!, `${path}.asset.src`);
        if (!fetched) return undefined;
        const m = await this.playable(fetched, c, `${path}.asset.src`);
        if (!m) return undefined;
        const media: MediaInput = { url: m.url, kind: m.kind === 'video' ? 'video' : m.kind === 'audio' ? 'audio' : 'image' };
        if (m.probe.width && m.probe.height) Object.assign(media, { width: m.probe.width, height: m.probe.height });
        if (m.probe.duration !== undefined) media.duration = m.probe.duration;
        media.hasAudio = m.probe.hasAudio;
        if (m.probe.animated) media.animated = true;
        if (asset.type === 'audio') return { media };
        if (!media.width || !media.height) {
          addError(this.fetchErrors, `${path}.asset.src`, 'The file has no picture');
          return undefined;
        }
        const full = { width: media.width, height: media.height };
        const crop = asset.type === 'luma' ? undefined : asset.crop;
        const cut = cutOf(full, crop);
        return { media, cut, source: { width: cut.width, height: cut.height } };
      }
      case 'text':
      case 'rich-text':
      case 'title': {
        const familyPath = asset.type === 'title' ? `${path}.asset.style` : `${path}.asset.font.family`;
        const font = this.fontFor(requestedFamily(asset), fonts, familyPath);
        const source = box!;
        let text = asset.type === 'text' ? textAssetBlock(asset, source, font) : asset.type === 'rich-text' ? richTextBlock(asset, source, font) : titleBlock(asset, source, viewport);
        if (asset.type === 'text' && asset.ellipsis !== undefined) text = await ellipsize(text, asset.ellipsis);
        return { source, text };
      }
      case 'shape':
        return { source: box!, svg: svgDataUrl(shapeSvg(asset, box!, 1)) };
      case 'svg': {
        let markup = asset.src;
        if (!markup.trimStart().startsWith('<')) {
          try {
            markup = (await this.cache.get(asset.src, ['svg'])).bytes.toString('utf8');
          } catch (err) {
            if (!(err instanceof MediaFetchError)) throw err;
            addError(this.fetchErrors, `${path}.asset.src`, err.message);
            return undefined;
          }
        }
        return { source: svgSize(markup) ?? box!, svg: svgDataUrl(markup) };
      }
      case 'html': {
        const urls = remoteUrls(asset.html, asset.css);
        const local = new Map<string, string>();
        if (urls.length > MAX_HTML_RESOURCES) {
          addError(this.fetchErrors, `${path}.asset.html`, `loads ${urls.length} files; at most ${MAX_HTML_RESOURCES} are downloaded for an html asset`);
          return undefined;
        }
        await Promise.all(urls.map(async (url) => {
          const m = await this.tryMedia(url.replace(/&amp;/g, '&'), ['image', 'svg', 'font', 'video'], `${path}.asset.html`);
          if (m) local.set(url, m.url);
        }));
        return { source: box!, html: htmlDocument(asset, box!, { origin: this.sources.server.origin, fontFaces: faces, local }) };
      }
      case 'caption': {
        if (asset.src.startsWith('alias://')) {
          throw new ApiError('UNSUPPORTED_ASSET', 'Captions transcribed from an audio or video clip need a speech-to-text engine, which this deployment does not have; give the caption an SRT or VTT file', {
            errors: { [`${path}.asset.src`]: ['transcription (alias://) is not available; use the URL of an SRT or WebVTT file'] },
          });
        }
        const family = this.fontFor(asset.font?.family ?? DEFAULT_FAMILY, fonts, `${path}.asset.font.family`).family;
        if (!this.sources.fetchText) {
          addError(this.fetchErrors, `${path}.asset.src`, 'caption files cannot be downloaded by this engine (no text fetcher configured)');
          return undefined;
        }
        try {
          const cues = parseSubtitles(await this.sources.fetchText(asset.src));
          if (cues.length === 0) throw new MediaFetchError(asset.src, 'The file holds no SRT or WebVTT cues');
          return { source: box!, caption: { cues, family } };
        } catch (err) {
          if (!(err instanceof MediaFetchError)) throw err;
          addError(this.fetchErrors, `${path}.asset.src`, err.message);
          return undefined;
        }
      }
    }
  }
}

/** The part of a picture an asset's `crop` (fractions cut from each side) keeps, in whole pixels. */
export function cutOf(full: Size, crop: Crop | undefined): Rect {
  const c = crop ?? { top: 0, bottom: 0, left: 0, right: 0 };
  return {
    x: Math.round(full.width * c.left),
    y: Math.round(full.height * c.top),
    width: Math.max(1, Math.round(full.width * (1 - c.left - c.right))),
    height: Math.max(1, Math.round(full.height * (1 - c.top - c.bottom))),
  };
}

function svgDataUrl(markup: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(markup).toString('base64')}`;
}

/** Pictures: size with EXIF orientation applied (as the browser shows them); video and audio: ffprobe. */
async function probe(media: FetchedMedia, file: string, signal?: AbortSignal): Promise<ProbedMedia & { animated?: boolean }> {
  if (media.kind === 'image') {
    try {
      const meta = await sharp(media.bytes, { limitInputPixels: RENDER_BUDGET.mediaPixels }).metadata();
      if (!meta.width || !meta.height) throw new Error('no size');
      const turned = (meta.orientation ?? 1) >= 5;
      const picture = { width: turned ? meta.height : meta.width, height: turned ? meta.width : meta.height, hasVideo: true, hasAudio: false };
      // A picture the browser animates by itself (GIF, WebP, APNG frames; an SVG with animations): never a static span (spans.ts).
      return (meta.pages ?? 1) > 1 || (meta.format === 'svg' && svgMayAnimate(media.bytes.toString('utf8'))) ? { ...picture, animated: true } : picture;
    } catch (err) {
      throw new MediaFetchError(media.url, `The image cannot be decoded: ${(err as Error).message}`);
    }
  }
  if (media.kind !== 'video' && media.kind !== 'audio') return { hasVideo: false, hasAudio: false };
  let probed: ProbedMedia;
  try {
    probed = await probeMedia(file, signal);
  } catch (err) {
    signal?.throwIfAborted();
    throw new MediaFetchError(media.url, `The ${media.kind} cannot be read: ${(err as Error).message}`);
  }
  if (!probed.hasVideo && !probed.hasAudio) throw new MediaFetchError(media.url, 'The file has no audio or video stream');
  if (probed.duration === undefined) throw new MediaFetchError(media.url, 'The file has no duration');
  if (media.kind === 'video') assertVideoSize(media.url, probed);
  return probed;
}

/**
 * A video (or luma video) whose picture is over RENDER_BUDGET.mediaPixels (40 megapixels: 8K UHD,
 * 7680×4320, fits) is refused before the browser decodes a frame of it: a tiny 16384×16384 VP9 or AV1
 * file decodes at about 1 GB a frame (docs/decisions.md "Hostile input (issue 27): budget"). The
 * render fails 422 MEDIA_UNAVAILABLE naming the clip's src and the size.
 */
export function assertVideoSize(url: string, probed: Pick<ProbedMedia, 'width' | 'height'>): void {
  const { width = 0, height = 0 } = probed;
  if (width * height > RENDER_BUDGET.mediaPixels) {
    const mp = (n: number) => `${Math.round(n / 1e5) / 10} megapixels`;
    throw new MediaFetchError(url, `The video ${url} is ${width}×${height} (${mp(width * height)}); at most ${mp(RENDER_BUDGET.mediaPixels)} a frame are decoded (house limit, docs/decisions.md)`);
  }
}
