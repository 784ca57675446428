import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import sharp from 'sharp';
import {
  combineChunks, makeCancelSignal, openBrowser, renderFrames, renderMedia, renderStill,
  type CancelSignal, type HeadlessBrowser, type RenderMediaOptions, type X264Preset,
} from '@remotion/renderer';
import { registerUsageEvent } from '@remotion/licensing';
import type { VideoConfig } from 'remotion';
import { isStillFormat, type EditSpec } from '#libs/edit-spec';
import { FontCatalog, type MediaFetcher } from '#libs/still';
import { feedBinary, runBinary, type BinaryFeed } from '#libs/media';
import { makeOwnScratch, ownScratch, sweepScratch } from '#libs/core';
import { planChunks } from './chunks.js';
import { browserDirs, chooseBrowser, clearProfiles, writeRefusingLauncher } from './browser.js';
import { closeLaunchTab, screenshotsWithinViewport } from './cdp.js';
import { ensureBundle, isBundle, projectRoot } from './bundle.js';
import { encodingFor, gifFfmpegOverride, type Encoding } from './encode.js';
import type { TextFetcher } from './fetch-text.js';
import { prepareRender } from './inputs.js';
import { printHtml } from './print.js';
import { renderSoundtrackPart, soundtrackAlone } from './soundtrack.js';
import { aviFrameHeader, aviHeader, decodeFrames, FrameCompositor, placeLayer, probeVideoFrames, yuv420Size, type LayerPlacement, type VideoFrames } from './composite.js';
import { composedSpans, frameSpans, overlayGroups, type FrameSpan, type OverlayGroup } from './spans.js';
import { textDocument } from './text-document.js';
import { MediaServer } from './media-server.js';
import { BrowserGone, isBrowserFault, onDisconnect, TabLedger, TabLost } from './recovery.js';
import type { EditProps } from './props.js';

export const COMPOSITION_ID = 'Edit';

export interface VideoEngineOptions {
  /** Downloads a media URL (SSRF-checked, capped, sniffed) or reads one of our stored files. */
  fetch: MediaFetcher;
  /** Downloads caption files (SRT/VTT); without it, caption assets with a URL fail. */
  fetchText?: TextFetcher;
  /** Installed font families; default: fontconfig's list (FontCatalog.system()). */
  fonts?: FontCatalog;
  /** BROWSER_EXECUTABLE: used as it is. Default: Chromium found on this machine, through a wrapper script. */
  browserExecutable?: string;
  /** VIDEO_BUNDLE_DIR: where the composition bundle is built (or a prebuilt one is reused). */
  bundleDir?: string;
  /** Per-render folders (downloads, chunks) and the browser wrapper; default <tmp>/video-engine. */
  workDir?: string;
  /** Browser tabs of a render that is not split into parts (gif, short mp4); default: the number of cores. */
  concurrency?: number;
  /** Parts an mp4 render is split into, rendered at once with one tab each; default: the number of cores (1 = never split). */
  parallelism?: number;
  /** x264 speed/size trade-off; default `veryfast` (docs/benchmarks.md). */
  x264Preset?: X264Preset;
  /** JPEG quality of the frames handed to the encoder; default 80. */
  jpegQuality?: number;
  /**
   * The encoder's CRF (x264's or x265's scale) for every mp4, whatever the output's quality: the
   * fidelity tests encode at 1 (nearly lossless; Remotion's least), so that what they compare is the
   * drawing, not two encoders' noise.
   */
  crf?: number;
  /**
   * Spans where nothing on screen changes (spans.ts) are drawn once and repeated by the encoder
   * (h264 mp4 renders); default true. false draws every frame (the reference the tests compare with).
   */
  staticSpans?: boolean;
  /**
   * Runs of played frames whose one moving part is a plain video at the bottom, under clips that
   * hold still or only fade or move (spans.ts composedSpans), are composed outside the browser
   * (composite.ts): the page draws pictures of those clips once, and each frame places the video
   * under them and them over it. Default true; false draws
   * them in the page, as Remotion does (with `staticSpans: false`, every frame is drawn in the page).
   */
  composeVideo?: boolean;
  /** Told when a composed piece failed and the page played it instead (the render goes on). */
  onComposeFailure?: (failure: { renderId?: string | undefined; frames: [number, number]; reason: string }) => void;
  /** Decoded video frames each browser tab keeps (@remotion/media); default 240 MiB, Remotion's minimum (its own default is half the machine's memory per tab). */
  mediaCacheSizeInBytes?: number;
  /** Remotion's log level; default `error`. */
  logLevel?: 'error' | 'warn' | 'info' | 'verbose';
  /** REMOTION_LICENSE_KEY: a Remotion company licence key; each finished output sends one usage event (README). */
  licenseKey?: string;
  /** Sends a usage event (default: @remotion/licensing's registerUsageEvent, to remotion.pro). */
  registerUsage?: (event: Parameters<typeof registerUsageEvent>[0]) => Promise<unknown>;
  /** A usage event that could not be sent (the render is unaffected). */
  onUsageError?: (err: Error) => void;
  /** A browser or extractor fault the engine recovered from by trying a call once more in fresh tabs (counted in `recoveries`). */
  onRecovery?: (recovery: Recovery) => void;
}

/** One call tried again after a browser fault (recovery.ts `isBrowserFault`). */
export interface Recovery {
  /** The caller's label of the work (the render's id), when it gave one. */
  renderId?: string;
  /** What was tried again: `render`, `frames 0-47`, `still`. */
  call: string;
  /** The fault's message (at most 300 characters). */
  reason: string;
  /** `browser`: the browser was gone and a new one was opened; `tabs`: the call's tabs were closed and new ones opened. */
  fresh: 'browser' | 'tabs';
  /** Tabs on Remotion's origins that no call owned, closed before trying again. */
  straysClosed: number;
}

export interface VideoRenderOptions {
  /** Where to write the output; default a new file in `outputDir` (default: the engine's work folder). */
  outputPath?: string;
  outputDir?: string;
  /** 0..1, at most a few times a second. */
  onProgress?: (progress: number) => void;
  /** Aborting stops the render (downloads, browser, encoder) and rejects with VideoRenderCancelled. */
  signal?: AbortSignal;
  /** Only these frames of the output window (inclusive), e.g. a chunk. */
  frameRange?: [number, number];
  /** Multiplies the output size (Remotion `scale`): 0.5 for a half-size preview. */
  scale?: number;
  /** The caller's label of this work (the render's id), named when a fault is recovered from. */
  renderId?: string;
}

export interface VideoOutput {
  file: string;
  format: 'mp4' | 'gif';
  contentType: string;
  width: number;
  height: number;
  durationSec: number;
  fps: number;
  frames: number;
  fileSizeBytes: number;
  renderMs: number;
  /**
   * Pictures the browser drew: the others repeat a held picture (spans.ts: spans where nothing on
   * screen changes) or are composed from a video and one picture of what is over it (composite.ts).
   */
  drawnFrames?: number;
  /** JPEG of `output.poster.capture` (default: the first frame). */
  posterFile: string;
  /** JPEG of `output.thumbnail.capture` at `output.thumbnail.scale`, when the edit asks for one. */
  thumbnailFile?: string;
}

export interface ChunkOptions {
  /** Frames of the output window, inclusive. */
  frameRange: [number, number];
  /** Browser tabs for this chunk (default: the engine's concurrency). */
  concurrency?: number;
  outputDir?: string;
  onProgress?: (progress: number) => void;
  signal?: AbortSignal;
  /** The caller's label of this work (the render's id), named when a fault is recovered from. */
  renderId?: string;
}

/** A render's calls: the caller's cancel and the run's own stop (a part failed), and its label. */
interface Run {
  /** Aborted when the caller cancels or a sibling part failed: no call of the run is tried again. */
  stop: AbortSignal;
  renderId?: string | undefined;
}

/** One rendered chunk: hand these (JSON-serialisable) to `combine`, in frame order. */
export interface VideoChunk {
  frameRange: [number, number];
  /** MPEG-TS (h264, joined without re-encoding) or mp4 (h265). */
  videoFile: string;
  /** AAC of the chunk, padded for gapless joining; absent for a silent edit. */
  audioFile?: string;
  fps: number;
  /** Frames of the whole output window. */
  totalFrames: number;
  codec: 'h264' | 'h265';
}

/** A render stopped by its AbortSignal. */
export class VideoRenderCancelled extends Error {
  constructor() {
    super('The render was cancelled');
    this.name = 'VideoRenderCancelled';
  }
}

export type EngineStatus = { ok: true; browserExecutable: string; bundleDir: string } | { ok: false; reason: string };

/** Frames per chunk recommended for splitting long renders across workers (docs/video.md). */
export const RECOMMENDED_CHUNK_FRAMES = 20 * 30;

/** An mp4 shorter than this is rendered in one part (the split's fixed costs outweigh its gain). */
export const SPLIT_MIN_FRAMES = 48;

const DEFAULT_WORK_DIR = join(tmpdir(), 'video-engine');
const MIN_MEDIA_CACHE = 240 * 1024 * 1024;
/**
 * Pages printHtmlClips prints at once, a tab each: a certificate of four text clips took ~2 s one
 * after another (a tab's set-up, font load and print are mostly waiting on the browser).
 */
const PRINT_TABS = 3;
/** The asset types printHtmlClips prints: html documents and text blocks. */
const PRINTED: readonly string[] = ['html', 'text', 'title', 'rich-text'];

/**
 * Whether this machine can render video, without starting anything: a browser is configured or
 * found, and the composition bundle exists or can be built (its sources are present). The API
 * answers 503 ENGINE_NOT_CONFIGURED with the reason otherwise.
 */
export async function engineAvailable(opts: { browserExecutable?: string; bundleDir?: string; workDir?: string } = {}): Promise<EngineStatus> {
  const browser = await chooseBrowser(opts.browserExecutable, opts.workDir ?? DEFAULT_WORK_DIR);
  if (!browser.ok) return { ok: false, reason: browser.reason };
  const bundleDir = opts.bundleDir ?? join(opts.workDir ?? DEFAULT_WORK_DIR, 'bundle');
  if (!isBundle(bundleDir)) {
    try {
      projectRoot();
    } catch (err) {
      return { ok: false, reason: `no composition bundle in ${bundleDir} and ${(err as Error).message}` };
    }
  }
  return { ok: true, browserExecutable: browser.executable, bundleDir };
}

/**
 * The video engine: plays a normalised edit in Remotion's `Edit` composition (libs/video/remotion)
 * with Debian's Chromium and encodes mp4 or gif. `start` bundles once and opens the browser once;
 * each render downloads its media into a folder served on loopback, renders, makes the poster and
 * thumbnail from the output, and cleans up. Knows nothing of the queue, the database or HTTP.
 */
export class VideoEngine {
  private browser: HeadlessBrowser | undefined;
  private opening: Promise<HeadlessBrowser> | undefined;
  private closed = false;
  /** Every tab a call opens is closed when the call settles (recovery.ts). */
  private readonly tabs = new TabLedger();
  /** Calls in flight, stopped when their browser goes away. */
  private readonly inFlight = new Set<() => void>();
  private recovered = 0;

  private constructor(
    private readonly opts: VideoEngineOptions,
    private readonly fonts: FontCatalog,
    private readonly server: MediaServer,
    readonly browserExecutable: string,
    readonly bundleDir: string,
    private readonly workDir: string,
    /** What Remotion is told it may start besides our browser: nothing (browser.ts writeRefusingLauncher). */
    private readonly refusingPath: string,
  ) {}

  /**
   * The refusing launcher, written again when something removed it (the default work dir is under the
   * system temp folder): a missing path would leave Remotion unable to open any browser again.
   */
  private get refusingLauncher(): string {
    return existsSync(this.refusingPath) ? this.refusingPath : writeRefusingLauncher(this.workDir);
  }

  /** This process's own folder of the work dir (renders' inputs, outputs and chunks): `<workDir>/scratch/<host>-<pid>-<token>`. */
  private get scratch(): string {
    return ownScratch(join(this.workDir, 'scratch'));
  }

  /**
   * Removes the work folders that killed engines of this machine left in the work dir (their
   * process is gone); a live engine's are kept (libs/core scratch.ts). Run at start and by the
   * worker after each video job. Answers the folders removed.
   */
  sweepLeftovers(): Promise<string[]> {
    return sweepScratch(join(this.workDir, 'scratch'));
  }

  /**
   * Bundles the composition (or reuses the bundle in bundleDir made from the same sources), opens the
   * browser and starts the loopback media server. Fails with a message saying what is missing when
   * there is no Chromium; a browser download is never attempted (it fails the start instead).
   */
  static async start(opts: VideoEngineOptions): Promise<VideoEngine> {
    const workDir = opts.workDir ?? DEFAULT_WORK_DIR;
    // Private: the browser's wrapper and profiles live in it (browser.ts privateFolder).
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    const browser = await chooseBrowser(opts.browserExecutable, workDir);
    if (!browser.ok) throw new Error(`Video engine: ${browser.reason}`);
    // Profiles a killed worker's browsers left behind (1–2 MB each).
    if (browser.wrapped) clearProfiles(workDir);
    const bundleDir = opts.bundleDir ?? join(workDir, 'bundle');
    const [{ dir }, fonts, server] = await Promise.all([
      ensureBundle(bundleDir),
      opts.fonts ? Promise.resolve(opts.fonts) : FontCatalog.system(join(workDir, 'fonts')),
      MediaServer.start(),
    ]);
    const engine = new VideoEngine(opts, fonts, server, browser.executable, dir, workDir, writeRefusingLauncher(workDir));
    await engine.sweepLeftovers();
    await makeOwnScratch(join(workDir, 'scratch'));
    try {
      await engine.openBrowser();
    } catch (err) {
      await server.close();
      throw err;
    }
    return engine;
  }

  /** Calls tried again after a browser or extractor fault since the engine started (the worker logs each, `onRecovery`). */
  get recoveries(): number {
    return this.recovered;
  }

  get status(): EngineStatus {
    return this.closed ? { ok: false, reason: 'the video engine is closed' } : { ok: true, browserExecutable: this.browserExecutable, bundleDir: this.bundleDir };
  }

  private openBrowser(): Promise<HeadlessBrowser> {
    if (this.browser) return Promise.resolve(this.browser);
    this.opening ??= openBrowser('chrome', {
      browserExecutable: this.browserExecutable,
      chromiumOptions: { enableMultiProcessOnLinux: true },
      logLevel: this.opts.logLevel ?? 'error',
      onBrowserDownload: noBrowserDownload,
    } as Parameters<typeof openBrowser>[1])
      .then(async (browser) => {
        try {
          screenshotsWithinViewport(browser);
          await closeLaunchTab(browser);
          this.tabs.watch(browser);
          onDisconnect(browser, () => this.browserGone(browser, true));
        } catch (err) {
          await browser.close({ silent: true }).catch(() => undefined);
          throw err;
        }
        this.browser = browser;
        // A browser closed (by the engine, or by Remotion replacing it after a closed tab) or gone
        // (crashed, killed: its connection closed) is opened again by the next call.
        const closed = () => this.browserGone(browser, false);
        browser.on('closed', closed);
        browser.on('closed-silent', closed);
        return browser;
      })
      .catch((err: unknown) => {
        throw new Error(`Video engine: Chromium (${this.browserExecutable}) did not start: ${(err as Error).message}`, { cause: err });
      })
      .finally(() => {
        this.opening = undefined;
      });
    return this.opening;
  }

  /** The browser was closed or died: the next call opens another; the calls in it stop now. */
  private browserGone(browser: HeadlessBrowser, died: boolean): void {
    if (this.browser !== browser) return;
    this.browser = undefined;
    for (const stop of this.inFlight) stop();
    // A dead one's runner (process group, listeners) is closed too; then its profile is removed.
    if (died) void browser.close({ silent: true }).catch(() => undefined).finally(() => this.clearProfiles());
    else this.clearProfiles();
  }

  /**
   * One Remotion call in tabs of its own (closed when it settles), tried once more in fresh tabs (a
   * new browser when the old one went away) after a browser or extractor fault; counted and reported.
   * A cancel, a stop and every other error fail at once.
   */
  private async inTabs<T>(run: Run, call: string, work: (cancelSignal: CancelSignal) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const { cancelSignal, cancel } = makeCancelSignal();
      let fault: Error | undefined;
      const stopFor = (why: Error) => () => {
        fault ??= why;
        cancel();
      };
      const onGone = stopFor(new BrowserGone());
      run.stop.addEventListener('abort', cancel, { once: true });
      this.inFlight.add(onGone);
      try {
        if (run.stop.aborted) cancel();
        await this.openBrowser();
        return await this.tabs.within(() => work(cancelSignal), stopFor(new TabLost()));
      } catch (err) {
        const cause = !run.stop.aborted && fault ? fault : err;
        if (run.stop.aborted || attempt > 1 || !isBrowserFault(cause)) throw cause;
        await this.recover(run, call, cause as Error);
      } finally {
        run.stop.removeEventListener('abort', cancel);
        this.inFlight.delete(onGone);
      }
    }
  }

  /** Before a call is tried again: strays closed (a dead browser is replaced by the next openBrowser), the recovery counted and reported. */
  private async recover(run: Run, call: string, fault: Error): Promise<void> {
    this.recovered++;
    const browser = this.browser;
    const straysClosed = browser ? await this.tabs.closeStrays(browser).catch(() => 0) : 0;
    const recovery: Recovery = { call, reason: fault.message.slice(0, 300), fresh: browser ? 'tabs' : 'browser', straysClosed };
    if (run.renderId !== undefined) recovery.renderId = run.renderId;
    this.opts.onRecovery?.(recovery);
  }

  private sources() {
    return { fetch: this.opts.fetch, fonts: this.fonts, server: this.server, workDir: this.scratch, ...(this.opts.fetchText ? { fetchText: this.opts.fetchText } : {}) };
  }

  /**
   * Renders an mp4 or gif edit to a file, with its poster (and thumbnail when asked for). An mp4 of at
   * least SPLIT_MIN_FRAMES frames is rendered as `parallelism` contiguous parts at once, one browser
   * tab each, joined without re-encoding: each tab decodes only its part of the source videos and the
   * tabs' screenshot waits overlap (docs/benchmarks.md).
   */
  async render(edit: EditSpec, opts: VideoRenderOptions = {}): Promise<VideoOutput> {
    const started = performance.now();
    const encoding = this.encodingOf(edit);
    const file = opts.outputPath ?? join(opts.outputDir ?? join(this.scratch, 'out'), `${randomUUID()}.${encoding.extension}`);
    await mkdir(dirname(file), { recursive: true });
    return this.cancellable(opts, async (run, stopAll) => {
      const prepared = await prepareRender(edit, this.sources(), opts.signal ? { signal: opts.signal } : {});
      const parts: VideoChunk[] = [];
      try {
        const props = prepared.props;
        const range = frameRangeWithin(opts.frameRange, props.durationInFrames);
        const frames = range[1] - range[0] + 1;
        const parallelism = this.opts.parallelism ?? availableParallelism();
        let drawnFrames = frames;
        const drawnSpans = encoding.codec === 'h264' && (opts.scale ?? 1) === 1 && this.opts.staticSpans !== false ? frameSpans(props, range) : [];
        const spans = this.opts.composeVideo === false ? drawnSpans : composedSpans(props, drawnSpans);
        if (spans.some((s) => s.kind === 'held' || s.kind === 'composed')) {
          const progress = throttled(opts.onProgress, (p: number) => p);
          drawnFrames = await this.renderSpans(props, encoding, spans, file, { dir: prepared.dir, run, stopAll, parallelism, onProgress: (p) => progress?.(p * 0.97) });
        } else if (encoding.codec !== 'gif' && parallelism > 1 && frames >= SPLIT_MIN_FRAMES && (opts.scale ?? 1) === 1) {
          const per = Math.ceil(frames / parallelism);
          const ranges = planChunks(frames, per).map(([a, b]): [number, number] => [range[0] + a, range[0] + b]);
          const progress = ranges.map(() => 0);
          const report = throttled(opts.onProgress, (p: number) => p);
          // All parts settle before the folder is removed. A part is tried once more by itself after a
          // browser fault (inTabs); the first part that still fails stops the others, and its error is
          // the render's (not a partner's "got cancelled", which that stop caused).
          let first: { reason: unknown } | undefined;
          const settled = await Promise.allSettled(ranges.map((r, i) => this.renderPart(props, encoding, r, {
            dir: prepared.dir,
            concurrency: 1,
            run,
            onProgress: (p) => {
              progress[i] = p * (r[1] - r[0] + 1);
              report?.((progress.reduce((a, b) => a + b, 0) / frames) * 0.9);
            },
          }).catch((err: unknown) => {
            first ??= { reason: err };
            stopAll();
            throw err;
          })));
          for (const r of settled) if (r.status === 'fulfilled') parts.push(r.value);
          if (first) throw first.reason;
          await this.join(parts, file, run, (p) => report?.(0.9 + p * 0.07));
        } else {
          const onProgress = throttled(opts.onProgress, (p: { progress: number }) => p.progress * 0.97);
          await this.inTabs(run, 'render', (cancelSignal) => renderMedia({
            ...this.mediaOptions(props, encoding, opts.scale),
            codec: encoding.codec,
            outputLocation: file,
            frameRange: range,
            cancelSignal,
            ...(onProgress ? { onProgress } : {}),
            ...(encoding.codec === 'gif' ? { numberOfGifLoops: encoding.gifLoops ?? null } : {}),
          }));
        }
        const { width, height } = scaled(props, opts.scale);
        return await this.finish(edit, file, encoding, { width, height, fps: props.fps, frames, drawnFrames, firstTime: props.windowStart + range[0] / props.fps, started, signal: opts.signal, onProgress: opts.onProgress });
      } catch (err) {
        await rm(file, { force: true });
        throw err;
      } finally {
        await Promise.all(parts.flatMap((c) => [c.videoFile, c.audioFile].filter((f) => f !== undefined).map((f) => rm(f, { force: true }))));
        await prepared.dispose();
      }
    });
  }

  /**
   * Renders the frames `frameRange` of an mp4 edit as a chunk (video and audio apart, cut for gapless
   * joining), so several workers can share one long render; `combine` joins the chunks.
   */
  async renderChunk(edit: EditSpec, opts: ChunkOptions): Promise<VideoChunk> {
    const encoding = this.encodingOf(edit);
    if (encoding.codec === 'gif') throw new Error('gif renders are not split into chunks');
    const dir = opts.outputDir ?? join(this.scratch, 'chunks');
    await mkdir(dir, { recursive: true });
    return this.cancellable(opts, async (run) => {
      const prepared = await prepareRender(edit, this.sources(), opts.signal ? { signal: opts.signal } : {});
      try {
        const range = frameRangeWithin(opts.frameRange, prepared.props.durationInFrames);
        const chunk = await this.renderPart(prepared.props, encoding, range, {
          dir,
          concurrency: opts.concurrency ?? this.opts.concurrency ?? availableParallelism(),
          run,
          ...(opts.onProgress ? { onProgress: throttled(opts.onProgress, (p: number) => p) } : {}),
        });
        opts.onProgress?.(1);
        return chunk;
      } finally {
        await prepared.dispose();
      }
    });
  }

  /** Joins chunks (in frame order, covering a stretch of the window without gaps) into the output with its poster and thumbnail. */
  async combine(edit: EditSpec, chunks: readonly VideoChunk[], opts: Omit<VideoRenderOptions, 'frameRange' | 'scale'> = {}): Promise<VideoOutput> {
    const started = performance.now();
    const encoding = this.encodingOf(edit);
    const ordered = [...chunks].sort((a, b) => a.frameRange[0] - b.frameRange[0]);
    const first = ordered[0];
    if (!first) throw new Error('no chunks to combine');
    const last = ordered[ordered.length - 1]!;
    const file = opts.outputPath ?? join(opts.outputDir ?? join(this.scratch, 'out'), `${randomUUID()}.${encoding.extension}`);
    await mkdir(dirname(file), { recursive: true });
    return this.cancellable(opts, async (run) => {
      try {
        await this.join(ordered, file, run, throttled(opts.onProgress, (p: number) => p * 0.95));
        const probe = await runBinary('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', file]);
        const [width = 0, height = 0] = probe.stdout.trim().split(',').map(Number);
        const windowStart = edit.output.range?.start ?? 0;
        return await this.finish(edit, file, encoding, {
          width, height, fps: first.fps, frames: last.frameRange[1] - first.frameRange[0] + 1,
          firstTime: windowStart + first.frameRange[0] / first.fps, started, signal: opts.signal, onProgress: opts.onProgress,
        });
      } catch (err) {
        await rm(file, { force: true });
        throw err;
      }
    });
  }

  /** One part of an mp4: MPEG-TS video (h264; mp4 for h265) and, when the edit has sound, padded AAC. */
  private async renderPart(
    props: EditProps,
    encoding: Encoding,
    range: [number, number],
    opts: { dir: string; concurrency: number; run: Run; onProgress?: ((p: number) => void) | undefined },
  ): Promise<VideoChunk> {
    const codec = encoding.codec;
    if (codec === 'gif') throw new Error('gif renders are not split into parts');
    const base = join(opts.dir, `part-${range[0]}-${randomUUID().slice(0, 8)}`);
    const audio = !props.muted && hasAudio(props);
    const seamless = codec === 'h264';
    const chunk: VideoChunk = { frameRange: range, videoFile: `${base}.${seamless ? 'ts' : 'mp4'}`, fps: props.fps, totalFrames: props.durationInFrames, codec };
    if (audio) chunk.audioFile = `${base}.aac`;
    try {
      await this.inTabs(opts.run, `frames ${range[0]}-${range[1]}`, (cancelSignal) => renderMedia({
        ...this.mediaOptions(props, encoding),
        concurrency: opts.concurrency,
        codec: seamless ? 'h264-ts' : codec,
        outputLocation: chunk.videoFile,
        frameRange: range,
        cancelSignal,
        ...(opts.onProgress ? { onProgress: (p: { progress: number }) => opts.onProgress?.(p.progress) } : {}),
        ...(audio ? { separateAudioTo: chunk.audioFile, forSeamlessAacConcatenation: true, enforceAudioTrack: true } : { muted: true }),
      }));
    } catch (err) {
      await Promise.all([chunk.videoFile, chunk.audioFile].filter((f) => f !== undefined).map((f) => rm(f, { force: true })));
      throw err;
    }
    return chunk;
  }

  /**
   * An h264 mp4 drawn span by span (spans.ts, docs/video.md "Static spans"): the pictures of the
   * `held` spans (one each) and of the `drawn` frames are screenshots of one page told which output
   * frames to draw (props.frames, Remotion's renderFrames: the same JPEG screenshots as renderMedia's),
   * handed to x264 with the encoder settings of Remotion's own parts, a held picture once per frame it
   * holds; `played` frames (a video plays) are drawn by renderMedia in order; the sound of the range is
   * rendered apart on a sound-only page, in `parallelism` equal parts joined gaplessly; the MPEG-TS
   * parts are joined without re-encoding, as the split render's are.
   */
  private async renderSpans(
    props: EditProps,
    encoding: Encoding,
    spans: readonly FrameSpan[],
    file: string,
    opts: { dir: string; run: Run; stopAll: () => void; parallelism: number; onProgress: (p: number) => void },
  ): Promise<number> {
    const range: [number, number] = [spans[0]!.from, spans[spans.length - 1]!.to];
    const frames = range[1] - range[0] + 1;
    const parallelism = Math.max(1, opts.parallelism);
    const base = join(opts.dir, `spans-${randomUUID().slice(0, 8)}`);
    const segments = videoSegments(spans, parallelism);
    const files = segments.map((seg, i) => `${base}-${i}.ts`);
    const composed = await composedPieces(props, segments, opts.dir, opts.run.stop);
    // The pictures of the clips over each composed piece's video (spans.ts overlayGroups): one page draws them all.
    const overlays = new Map([...composed.values()].map((piece) => [piece, piece.groups.map(() => deferred<Buffer>())] as const));
    const all = [...overlays.values()].flat();
    const overlaysDrawn = all.length === 0 ? Promise.resolve() : this.drawOverlays(props, encoding, [...composed.values()], all, opts.run);
    overlaysDrawn.catch((err: unknown) => {
      for (const o of all) o.reject(err);
    });
    // Pictures the page draws, in output order (a held span's one picture stands for all its frames),
    // each handed to its part's x264 as soon as it and those before it are drawn.
    const pictures: number[] = [];
    const holds: { part: number; count: number; last: boolean }[] = [];
    segments.forEach((seg, i) => {
      if (seg.kind !== 'pictures') return;
      for (const s of seg.spans) {
        if (s.kind === 'held') {
          pictures.push(s.from);
          holds.push({ part: i, count: s.to - s.from + 1, last: false });
        } else {
          for (let f = s.from; f <= s.to; f++) {
            pictures.push(f);
            holds.push({ part: i, count: 1, last: false });
          }
        }
      }
      holds[holds.length - 1]!.last = true;
    });
    const sound = !props.muted && hasAudio(props) ? planChunks(frames, Math.max(5, Math.ceil(frames / parallelism))).map(([a, b]): [number, number] => [range[0] + a, range[0] + b]) : [];
    const soundFiles = sound.map((r) => `${base}-sound-${r[0]}.aac`);
    let drawn = 0;
    const report = () => opts.onProgress(Math.min(1, drawn / Math.max(1, frames)) * 0.9);
    const feeds = new Map<number, BinaryFeed>();
    const tasks: { cost: number; run: () => Promise<void> }[] = [];
    if (pictures.length) {
      const waiting = new Map<number, Buffer>();
      let next = 0;
      let writing: Promise<void> = Promise.resolve();
      const preset = this.opts.x264Preset ?? 'veryfast';
      const drain = async () => {
        for (let shot = waiting.get(next); shot; shot = waiting.get(next)) {
          waiting.delete(next);
          const hold = holds[next]!;
          let feed = feeds.get(hold.part);
          if (!feed) {
            const seg = segments[hold.part]!;
            feed = feedBinary('ffmpeg', pictureArgs(seg.to - seg.from + 1, props, encoding, preset, files[hold.part]!), { signal: opts.run.stop });
            feeds.set(hold.part, feed);
          }
          for (let k = 0; k < hold.count; k++) await feed.write(shot);
          drawn += hold.count;
          report();
          next++;
          if (hold.last) await feed.end();
        }
      };
      tasks.push({
        cost: pictures.length,
        run: async () => {
          await this.inTabs(opts.run, `pictures of frames ${range[0]}-${range[1]}`, (cancelSignal) => renderFrames({
            ...this.mediaOptions({ ...props, muted: true, frames: pictures, durationInFrames: pictures.length }, encoding),
            concurrency: 1,
            outputDir: null,
            frameRange: [0, pictures.length - 1],
            onStart: () => undefined,
            onFrameUpdate: () => undefined,
            onFrameBuffer: (buffer: Buffer, index: number) => {
              // A call tried again after a browser fault (inTabs) draws from the start: what is encoded already is skipped.
              if (index < next) return writing;
              waiting.set(index, buffer);
              writing = writing.then(drain);
              // Seen by `await writing` below, or by Remotion when it awaits this; never unhandled when the draw fails first.
              writing.catch(() => undefined);
              return writing;
            },
            cancelSignal,
          } as unknown as Parameters<typeof renderFrames>[0]));
          await writing;
          if (next !== pictures.length) throw new Error(`the page drew ${next} of ${pictures.length} pictures`);
        },
      });
    }
    // Played pieces drawn by the page, in frames (a composed piece that failed is one of them).
    let playedInPage = 0;
    let fellBack = 0;
    const playInPage = (seg: Segment, i: number) => {
      let seen = 0;
      playedInPage += seg.to - seg.from + 1;
      return this.inTabs(opts.run, `frames ${seg.from}-${seg.to}`, (cancelSignal) => renderMedia({
        ...this.mediaOptions(props, encoding),
        concurrency: 1,
        codec: 'h264-ts',
        muted: true,
        outputLocation: files[i]!,
        frameRange: [seg.from, seg.to],
        cancelSignal,
        onProgress: (p: { renderedFrames: number }) => {
          drawn += p.renderedFrames - seen;
          seen = p.renderedFrames;
          report();
        },
      })).then(() => undefined);
    };
    segments.forEach((seg, i) => {
      if (seg.kind === 'pictures') return;
      const count = seg.to - seg.from + 1;
      const piece = composed.get(i);
      if (!piece) {
        tasks.push({ cost: count * 1.5, run: () => playInPage(seg, i) });
        return;
      }
      const pictures = overlays.get(piece)!.map((d) => d.promise);
      tasks.push({
        cost: count / 2,
        run: async () => {
          let done = 0;
          try {
            await this.composePiece(props, encoding, piece, pictures, files[i]!, {
              run: opts.run,
              onFrame: () => {
                done++;
                drawn++;
                report();
              },
            });
          } catch (err) {
            // A file ffmpeg cannot decode after all (or the page's picture missing): the page plays
            // the piece, as it would have without composing; a cancel or a sibling's failure is not retried.
            if (opts.run.stop.aborted) throw err;
            this.opts.onComposeFailure?.({ renderId: opts.run.renderId, frames: [seg.from, seg.to], reason: (err as Error).message });
            fellBack += piece.groups.length;
            drawn -= done;
            await rm(files[i]!, { force: true });
            await playInPage(seg, i);
          }
        },
      });
    });
    // An edit whose only sound is its soundtrack needs no page for it (soundtrack.ts): the same parts, made from the props.
    const soundtrack = soundtrackAlone(props);
    sound.forEach((r, i) => {
      tasks.push({
        cost: soundtrack ? 0 : (r[1] - r[0] + 1) / 4,
        run: () => soundtrack ? renderSoundtrackPart(props, soundtrack, r, soundFiles[i]!, cancelOn(opts.run.stop)) : this.inTabs(opts.run, `sound ${r[0]}-${r[1]}`, (cancelSignal) => renderMedia({
          // A 16×16 page: every frame's seek waits for an animation frame, which composites the whole
          // view; nothing is drawn here, so the smallest view costs the least.
          ...soundOnly(this.mediaOptions({ ...props, soundOnly: true, width: 16, height: 16 }, encoding)),
          concurrency: 1,
          codec: 'aac',
          audioCodec: 'aac',
          outputLocation: soundFiles[i]!,
          frameRange: r,
          forSeamlessAacConcatenation: true,
          enforceAudioTrack: true,
          cancelSignal,
        })).then(() => undefined),
      });
    });
    try {
      // The costliest first: the page's pictures and the played pieces, then the sound.
      await pool(tasks.sort((a, b) => b.cost - a.cost).map((t) => t.run), parallelism, opts);
      opts.run.stop.throwIfAborted();
      await combineChunks({
        outputLocation: file,
        videoFiles: files,
        audioFiles: soundFiles,
        codec: 'h264',
        audioCodec: 'aac',
        fps: props.fps,
        framesPerChunk: sound.length ? sound[0]![1] - sound[0]![0] + 1 : frames,
        preferLossless: false,
        compositionDurationInFrames: props.durationInFrames,
        frameRange: range,
        cancelSignal: cancelOn(opts.run.stop),
        logLevel: this.opts.logLevel ?? 'error',
        onProgress: (p: { totalProgress: number }) => opts.onProgress(0.9 + p.totalProgress * 0.1),
      });
      return pictures.length + all.length - fellBack + playedInPage;
    } finally {
      await overlaysDrawn.catch(() => undefined);
      for (const feed of feeds.values()) feed.kill();
      await Promise.all([...files, ...soundFiles].map((f) => rm(f, { force: true })));
    }
  }

  /**
   * The pictures of the clips over each composed piece's video (composite.ts, spans.ts overlayGroups),
   * drawn by one page on a transparent background (PNG): each its clips only, at its frame, at full
   * opacity where the picture is faded outside the browser; handed to `into` in order.
   */
  private drawOverlays(props: EditProps, encoding: Encoding, pieces: readonly ComposedPiece[], into: readonly ReturnType<typeof deferred<Buffer>>[], run: Run): Promise<void> {
    const groups = pieces.flatMap((p) => p.groups);
    const frames = groups.map((g) => g.at);
    const pictureClips = groups.map((g) => ({ clips: g.clips, fullOpacity: g.fullOpacity }));
    return this.inTabs(run, `clips over the video of ${pieces.length} composed pieces`, (cancelSignal) => renderFrames({
      ...withoutJpeg(this.mediaOptions({ ...props, background: '#00000000', muted: true, frames, pictureClips, durationInFrames: frames.length }, encoding)),
      imageFormat: 'png',
      concurrency: 1,
      outputDir: null,
      frameRange: [0, frames.length - 1],
      onStart: () => undefined,
      onFrameUpdate: () => undefined,
      // A call tried again after a browser fault (inTabs) draws from the start: a picture had is kept.
      onFrameBuffer: (buffer: Buffer, index: number) => into[index]?.resolve(buffer),
      cancelSignal,
    } as unknown as Parameters<typeof renderFrames>[0])).then(() => {
      // A picture the page never handed over fails its piece (played by the page then), never waits.
      for (const d of into) d.reject(new Error('the page drew no picture of the clips over the video'));
    });
  }

  /**
   * A composed piece (spans.ts composedSpans, composite.ts): each output frame is the background, the
   * layer's video frame placed as the page places it, and the page's pictures of the clips over it
   * (`pictures`, PNG, one per overlay group) each faded and moved as the frame places it, handed to
   * x264 as the page's pictures are (pictureArgs).
   */
  private async composePiece(
    props: EditProps,
    encoding: Encoding,
    piece: ComposedPiece,
    pictures: readonly Promise<Buffer>[],
    file: string,
    opts: { run: Run; onFrame: () => void },
  ): Promise<void> {
    const count = piece.to - piece.from + 1;
    const placements = piece.placements;
    const first = placements.find((at) => at !== undefined)?.frame ?? 0;
    const feed = feedBinary('ffmpeg', pictureArgs(count, props, encoding, this.opts.x264Preset ?? 'veryfast', file, 'yuv'), { signal: opts.run.stop });
    const frames = decodeFrames(piece.file, piece.video, { from: first, signal: opts.run.stop });
    try {
      const compositor = new FrameCompositor(props.width, props.height, props.background);
      // The decoded pictures are not kept: the compositor holds their planes.
      compositor.setOverlays(await Promise.all(pictures.map(async (picture, k) => {
        const { data: rgba, info } = await sharp(await picture).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
        if (info.width !== props.width || info.height !== props.height) throw new Error(`the page drew ${info.width}×${info.height}, not ${props.width}×${props.height}`);
        return { rgba, moves: piece.groups[k]!.place.some((q) => q.dx % 2 !== 0 || q.dy % 2 !== 0) };
      })));
      const size = yuv420Size(props.width, props.height);
      await feed.write(aviHeader(props.width, props.height, props.fps));
      let decoded = first - 1;
      let current: Buffer | undefined;
      for (const [k, at] of placements.entries()) {
        if (at) {
          while (decoded < at.frame) {
            const next = await frames.next();
            // Fewer frames than ffprobe listed: not what the page would show; the page plays the piece.
            if (next.done) throw new Error(`the video's frame ${at.frame} was not decoded (${decoded + 1} were)`);
            current = next.value;
            decoded++;
          }
        }
        // Lent, not copied: the compositor reuses its frame once the pipe has it. No AVI pad byte: the
        // compositor refuses odd frame sizes, so a yuv420p frame's size is even.
        await feed.write(aviFrameHeader(size));
        await feed.lend(compositor.compose(at ? current : undefined, piece.video, at, piece.groups.map((g) => g.place[k]!)));
        opts.onFrame();
      }
      await feed.end();
    } catch (err) {
      feed.kill();
      throw err;
    } finally {
      await frames.return(undefined);
    }
  }

  /** Remotion's combineChunks: h264 MPEG-TS parts are concatenated without re-encoding, AAC gaplessly. */
  private async join(ordered: readonly VideoChunk[], file: string, run: Run, onProgress?: (p: number) => void): Promise<void> {
    const first = ordered[0]!;
    let next = first.frameRange[0];
    for (const c of ordered) {
      if (c.frameRange[0] !== next) throw new Error(`the chunks do not cover frames ${next}–${c.frameRange[0] - 1}`);
      if (c.codec !== first.codec || c.fps !== first.fps || c.totalFrames !== first.totalFrames) throw new Error('the chunks come from different renders');
      next = c.frameRange[1] + 1;
    }
    const audioFiles = ordered.map((c) => c.audioFile).filter((f): f is string => f !== undefined);
    if (audioFiles.length !== 0 && audioFiles.length !== ordered.length) throw new Error('some chunks have sound and others do not');
    await combineChunks({
      outputLocation: file,
      videoFiles: ordered.map((c) => c.videoFile),
      audioFiles,
      codec: first.codec,
      audioCodec: 'aac',
      fps: first.fps,
      framesPerChunk: first.frameRange[1] - first.frameRange[0] + 1,
      preferLossless: false,
      compositionDurationInFrames: first.totalFrames,
      frameRange: [first.frameRange[0], next - 1],
      cancelSignal: cancelOn(run.stop),
      logLevel: this.opts.logLevel ?? 'error',
      ...(onProgress ? { onProgress: (p: { totalProgress: number }) => onProgress(p.totalProgress) } : {}),
    });
  }

  /** Poster, thumbnail and the facts of a finished output. */
  private async finish(
    edit: EditSpec,
    file: string,
    encoding: Encoding,
    o: { width: number; height: number; fps: number; frames: number; drawnFrames?: number; firstTime: number; started: number; signal?: AbortSignal | undefined; onProgress?: ((p: number) => void) | undefined },
  ): Promise<VideoOutput> {
    const images = await this.stills(edit, file, o.firstTime, o.frames, o.fps, o.signal);
    o.onProgress?.(1);
    const out: VideoOutput = {
      file,
      format: encoding.extension,
      contentType: encoding.contentType,
      width: o.width,
      height: o.height,
      durationSec: Math.round((o.frames / o.fps) * 1e6) / 1e6,
      fps: o.fps,
      frames: o.frames,
      fileSizeBytes: (await stat(file)).size,
      renderMs: Math.round(performance.now() - o.started),
      drawnFrames: o.drawnFrames ?? o.frames,
      posterFile: images.poster,
    };
    if (images.thumbnail) out.thumbnailFile = images.thumbnail;
    this.reportUsage(false);
    return out;
  }

  /**
   * Remotion's usage event for a company licence (REMOTION_LICENSE_KEY): one per finished output,
   * however many parts or chunks it was drawn in (the renderer's own event would count each part).
   * It never delays or fails a render; without a key nothing is sent.
   */
  private reportUsage(isStill: boolean): void {
    const licenseKey = this.opts.licenseKey;
    if (!licenseKey) return;
    const send = this.opts.registerUsage ?? registerUsageEvent;
    void send({ licenseKey, event: 'cloud-render', host: null, succeeded: true, isStill, isProduction: true })
      .catch((err: unknown) => this.opts.onUsageError?.(err as Error));
  }

  /**
   * One frame of an edit drawn by the browser, as PNG (the still engine's path for html assets): the
   * frame at `output.poster.capture` (else the window's start), clips at rest, at the still's device
   * `scale` (1–3). With `clips` (keys `track:index`), only those clips, on a transparent background.
   */
  async renderHtmlStill(edit: EditSpec, opts: { scale?: number; time?: number; clips?: readonly string[]; signal?: AbortSignal; durations?: ReadonlyMap<string, number> | Readonly<Record<string, number>> } = {}): Promise<Buffer> {
    if (!isStillFormat(edit.output.format)) throw new Error(`renderHtmlStill draws a still, not ${edit.output.format}`);
    return this.cancellable(opts, async (run) => {
      const still: NonNullable<Parameters<typeof prepareRender>[2]>['still'] = {};
      if (opts.scale !== undefined) still.scale = opts.scale;
      if (opts.time !== undefined) still.time = opts.time;
      if (opts.durations !== undefined) still.durations = opts.durations;
      if (opts.clips !== undefined) still.clips = opts.clips;
      const prepared = await prepareRender(edit, this.sources(), { still, ...(opts.signal ? { signal: opts.signal } : {}) });
      try {
        const props = prepared.props;
        const { buffer } = await this.inTabs(run, 'still', (cancelSignal) => renderStill({
          composition: composition(props),
          serveUrl: this.bundleDir,
          inputProps: props,
          frame: 0,
          imageFormat: 'png',
          puppeteerInstance: this.browser,
          browserExecutable: this.refusingLauncher,
          onBrowserDownload: noBrowserDownload,
          cancelSignal,
          logLevel: this.opts.logLevel ?? 'error',
          mediaCacheSizeInBytes: this.opts.mediaCacheSizeInBytes ?? MIN_MEDIA_CACHE,
          offthreadVideoCacheSizeInBytes: 64 * 1024 * 1024,
        } as Parameters<typeof renderStill>[0]));
        if (!buffer) throw new Error('renderStill returned no image');
        this.reportUsage(true);
        return buffer;
      } finally {
        await prepared.dispose();
      }
    });
  }

  /**
   * The html clips of a still's frame (at `time`, clips at rest) printed by Chromium as one-page vector
   * PDFs of their design size (CSS px), keyed `track:index`: what the still engine draws at each html
   * clip's place among a PDF's layers, so an html document's text stays text (docs/decisions.md "PDF").
   * Text, title and rich-text clips are printed too, as the documents of their blocks (text-document.ts:
   * the CSS the video draws them with), so their words are vector text in subset-embedded fonts
   * (docs/decisions.md "PDF text clips"). With `clips` (keys `track:index`), only those clips.
   */
  async printHtmlClips(edit: EditSpec, opts: { time?: number; clips?: readonly string[]; signal?: AbortSignal; durations?: ReadonlyMap<string, number> | Readonly<Record<string, number>> } = {}): Promise<Map<string, Buffer>> {
    return this.cancellable(opts, async () => {
      const still: NonNullable<Parameters<typeof prepareRender>[2]>['still'] = {};
      if (opts.time !== undefined) still.time = opts.time;
      if (opts.durations !== undefined) still.durations = opts.durations;
      if (opts.clips !== undefined) still.clips = opts.clips;
      // Only the printed clips' files are downloaded: the still engine draws the rest itself.
      const prepared = await prepareRender(edit, this.sources(), { still, only: PRINTED, ...(opts.signal ? { signal: opts.signal } : {}) });
      try {
        const browser = await this.openBrowser();
        const origin = this.server.origin;
        const jobs = Object.entries(prepared.props.clips).flatMap(([key, inputs]) => {
          const html = inputs.html ?? (inputs.text && inputs.source ? textDocument(inputs.text, inputs.source, { origin, fontFaces: prepared.props.fontFaces }) : undefined);
          return html !== undefined && inputs.source ? [{ key, html, size: inputs.source }] : [];
        });
        // PRINT_TABS tabs at once, each taking the next page when done.
        const printed = new Map<string, Buffer>();
        let next = 0;
        await Promise.all(Array.from({ length: Math.min(PRINT_TABS, jobs.length) }, async () => {
          while (next < jobs.length) {
            const job = jobs[next++]!;
            printed.set(job.key, await printHtml(browser, job.html, job.size, origin, opts.signal));
          }
        }));
        return printed;
      } finally {
        await prepared.dispose();
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const browser = this.browser ?? (await this.opening?.catch(() => undefined));
    this.browser = undefined;
    await Promise.all([browser?.close({ silent: true }).catch(() => undefined), this.server.close()]);
    this.clearProfiles();
  }

  /** The profiles of browsers that are gone (the wrapper's folder; BROWSER_EXECUTABLE keeps its own). */
  private clearProfiles(): void {
    try {
      if (this.browserExecutable === join(browserDirs(this.workDir).wrapper, 'chromium-wrapper.sh')) clearProfiles(this.workDir, { removeEmpty: this.closed });
    } catch {
      // A profile that cannot be removed now is removed at the next start.
    }
  }

  /** The output's encoding (encode.ts), its CRF replaced by the engine's `crf` when given. */
  private encodingOf(edit: EditSpec): Encoding {
    const encoding = encodingFor(edit.output);
    return this.opts.crf !== undefined && encoding.crf !== undefined ? { ...encoding, crf: this.opts.crf } : encoding;
  }

  /** Options every renderMedia call shares. */
  private mediaOptions(props: EditProps, encoding: Encoding, scale?: number): Omit<RenderMediaOptions, 'codec'> {
    return {
      composition: composition(props),
      serveUrl: this.bundleDir,
      inputProps: props,
      puppeteerInstance: this.browser,
      browserExecutable: this.refusingLauncher,
      onBrowserDownload: noBrowserDownload,
      concurrency: this.opts.concurrency ?? availableParallelism(),
      // A gif's frames are captured as PNG: JPEG's ringing around flat colours and text costs a
      // palette-quantised gif ~30 % in size and SSIM (docs/benchmarks.md "GIF palette and dithering").
      ...(encoding.codec === 'gif' ? { imageFormat: 'png', ffmpegOverride: gifFfmpegOverride } : { imageFormat: 'jpeg', jpegQuality: this.opts.jpegQuality ?? 80 }),
      ...(encoding.crf !== undefined ? { crf: encoding.crf } : {}),
      ...(encoding.codec === 'h264' ? { x264Preset: this.opts.x264Preset ?? 'veryfast' } : {}),
      pixelFormat: 'yuv420p',
      // mp4: the JPEG frames (full range, BT.601 matrix) converted by Remotion's zscale to limited-range
      // BT.709 and tagged so (matrix, primaries, transfer, range), what players, hardware decoders and
      // upload checks expect; the tags live in the stream's headers, so chunk joins (copy) keep them.
      // Remotion encodes gifs in BT.601 whatever this says.
      ...(encoding.codec === 'gif' ? {} : { colorSpace: 'bt709' }),
      // A gif has no audio track (Remotion refuses an audio codec with it).
      ...(encoding.codec === 'gif' ? { muted: true } : { audioCodec: 'aac', muted: props.muted }),
      scale: scale ?? 1,
      mediaCacheSizeInBytes: this.opts.mediaCacheSizeInBytes ?? MIN_MEDIA_CACHE,
      // Luma mattes of video files go through Remotion's frame extractor: a small cache will do.
      offthreadVideoCacheSizeInBytes: 64 * 1024 * 1024,
      offthreadVideoThreads: 1,
      logLevel: this.opts.logLevel ?? 'error',
      chromiumOptions: { enableMultiProcessOnLinux: true },
    } as Omit<RenderMediaOptions, 'codec'>;
  }

  /** Runs `work` as a run stopped by `signal` (and by `stopAll`, for a failed part); a cancelled render rejects with VideoRenderCancelled. */
  private async cancellable<T>(opts: { signal?: AbortSignal | undefined; renderId?: string | undefined }, work: (run: Run, stopAll: () => void) => Promise<T>): Promise<T> {
    const signal = opts.signal;
    if (this.closed) throw new Error('the video engine is closed');
    if (signal?.aborted) throw new VideoRenderCancelled();
    await this.openBrowser();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await work({ stop: stop.signal, renderId: opts.renderId }, () => stop.abort());
    } catch (err) {
      if (signal?.aborted) throw new VideoRenderCancelled();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Poster (and thumbnail) cut from the output: the frames at their capture times, clamped to it. */
  private async stills(edit: EditSpec, file: string, firstTime: number, frames: number, fps: number, signal?: AbortSignal): Promise<{ poster: string; thumbnail?: string }> {
    const base = file.replace(/\.[^./]+$/, '');
    const at = (capture: number | undefined) => {
      const offset = capture === undefined ? 0 : capture - firstTime;
      return Math.min(Math.max(0, offset), Math.max(0, (frames - 1) / fps));
    };
    const grab = async (target: string, seconds: number, scale: number) => {
      const filters = [scale !== 1 ? `scale=trunc(iw*${scale}/2)*2:trunc(ih*${scale}/2)*2` : 'null'];
      await runBinary('ffmpeg', ['-v', 'error', '-y', '-ss', seconds.toFixed(6), '-i', file, '-frames:v', '1', '-vf', filters.join(','), '-q:v', '3', '-update', '1', target], signal ? { signal } : {});
      await stat(target);
      return target;
    };
    const poster = await grab(`${base}-poster.jpg`, at(edit.output.poster?.capture), 1);
    const thumb = edit.output.thumbnail;
    if (!thumb) return { poster };
    return { poster, thumbnail: await grab(`${base}-thumbnail.jpg`, at(thumb.capture), thumb.scale) };
  }
}

/**
 * ffmpeg arguments that make an h264 MPEG-TS part of `frames` frames from JPEG pictures on its input,
 * encoded as Remotion encodes its own parts (its stitcher's arguments for `h264-ts`: the pictures at
 * the fps, the zscale conversion to limited-range BT.709 and its tags, yuv420p, the preset and CRF, the
 * 90 kHz timescale), so the parts join without re-encoding and look as frames drawn one by one.
 */
export function pictureArgs(frames: number, props: Pick<EditProps, 'fps' | 'width' | 'height'>, encoding: Encoding, preset: X264Preset, output: string, pictures: 'mjpeg' | 'yuv' = 'mjpeg'): string[] {
  return [
    '-v', 'error',
    // Composed frames (composite.ts) come as yuv420p already in the output's colours, in an AVI stream;
    // tagged so, or ffmpeg converts them to BT.709 from what it takes an untagged picture to be.
    ...(pictures === 'yuv' ? ['-r', String(props.fps), '-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709', '-color_range', 'tv', '-f', 'avi', '-i', 'pipe:0'] : ['-framerate', String(props.fps), '-f', 'image2pipe', '-c:v', 'mjpeg', '-i', 'pipe:0']),
    '-frames:v', String(frames),
    '-an',
    '-c:v', 'libx264', '-f', 'mpegts',
    '-colorspace:v', 'bt709', '-color_primaries:v', 'bt709', '-color_trc:v', 'bt709', '-color_range', 'tv',
    ...(pictures === 'yuv' ? [] : ['-vf', 'zscale=matrix=709:range=limited:primariesin=709:primaries=709:transferin=709:transfer=709']),
    '-pix_fmt', 'yuv420p', '-preset', preset, '-video_track_timescale', '90000',
    ...(encoding.crf !== undefined ? ['-crf', String(encoding.crf)] : []),
    '-map_metadata', '-1', '-y', output,
  ];
}

/** A composed piece (spans.ts composedSpans): its frames, its video layer (key `track:index`), the layer's file and its frames' times, where each frame shows it. */
interface ComposedPiece {
  from: number;
  to: number;
  layer: string;
  file: string;
  video: VideoFrames;
  /** Per frame of the piece, in order: where it shows the video (placeLayer), or undefined. */
  placements: (LayerPlacement | undefined)[];
  /** The pictures of the clips over the video, bottom first, and where each frame lays them (spans.ts overlayGroups). */
  groups: OverlayGroup[];
}

/**
 * The composed pieces of `segments` (by index) whose video is a local file ffprobe reads (square
 * pixels, no alpha, a known matrix, at most MAX_LAYER_FRAMES frames) shown at half its size or more,
 * and whose clips over the video make pictures (overlayGroups); any other is played by the page
 * instead (its segment becomes `played`).
 */
async function composedPieces(props: EditProps, segments: Segment[], dir: string, signal?: AbortSignal): Promise<Map<number, ComposedPiece>> {
  const out = new Map<number, ComposedPiece>();
  const probed = new Map<string, Promise<VideoFrames | undefined>>();
  for (const [i, seg] of segments.entries()) {
    if (seg.kind !== 'composed') continue;
    const url = props.clips[seg.layer]?.media?.url;
    const file = url ? join(dir, decodeURIComponent(basename(new URL(url).pathname))) : undefined;
    if (file && !probed.has(file)) probed.set(file, existsSync(file) ? probeVideoFrames(file, signal).catch(() => undefined) : Promise.resolve(undefined));
    const video = file ? await probed.get(file) : undefined;
    const placements = video ? Array.from({ length: seg.to - seg.from + 1 }, (_, k) => placeLayer(props, seg.layer, seg.from + k, video)) : [];
    // Bilinear filtering (composite.ts) matches the page at half the video's size or more
    // (compose-render.spec.ts, at half size); smaller needs the page's own filtering down.
    const drawable = placements.every((at) => !at || (at.sx >= MIN_COMPOSED_SCALE && at.sy >= MIN_COMPOSED_SCALE));
    // A share of a composed run: the clips over it may need a picture drawn inside the share (a clip
    // that moves is drawn where it is wholly in the frame), which this share may lack.
    const groups = drawable ? overlayGroups(props, seg.layer, seg.from, seg.to) : undefined;
    if (file && video && groups) out.set(i, { from: seg.from, to: seg.to, layer: seg.layer, file, video, placements, groups });
    else segments[i] = { kind: 'played', from: seg.from, to: seg.to };
  }
  return out;
}

/** The smallest scale a composed video is drawn at (composedPieces). */
const MIN_COMPOSED_SCALE = 0.5 - 1e-9;

/** A promise with its settlers, settled once. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Options without JPEG's quality (Remotion refuses it with PNG pictures). */
function withoutJpeg<T extends object>(options: T): Omit<T, 'jpegQuality' | 'imageFormat'> {
  const { jpegQuality: _quality, imageFormat: _format, ...rest } = options as T & { jpegQuality?: number; imageFormat?: string };
  return rest;
}

/** renderMedia's options for a sound-only render: the picture's settings (CRF, preset, pixels, colour) left out, as Remotion refuses them with an audio codec. */
function soundOnly(options: Omit<RenderMediaOptions, 'codec'>): Omit<RenderMediaOptions, 'codec'> {
  const { crf: _crf, x264Preset: _preset, pixelFormat: _pixels, colorSpace: _colour, imageFormat: _image, jpegQuality: _quality, ...rest } = options as Omit<RenderMediaOptions, 'codec'> & { jpegQuality?: number };
  return rest;
}

/** One MPEG-TS part of a render drawn span by span: pictures of a page (held and drawn spans), frames a video plays, or frames composed from a video (composite.ts). */
type Segment = { kind: 'pictures'; from: number; to: number; spans: FrameSpan[] } | { kind: 'played'; from: number; to: number } | { kind: 'composed'; from: number; to: number; layer: string };

/**
 * The parts of a render drawn span by span, in order: each run of held and drawn spans one part of
 * pictures; each run of played or composed frames cut in pieces of at most its share of them
 * (`parallelism` tabs play them at once, as the split render's parts; pieces are composed at once too).
 */
export function videoSegments(spans: readonly FrameSpan[], parallelism: number): Segment[] {
  const played = spans.filter((s) => s.kind === 'played' || s.kind === 'composed').reduce((n, s) => n + s.to - s.from + 1, 0);
  const share = Math.max(SPLIT_MIN_FRAMES / 2, Math.ceil(played / Math.max(1, parallelism)));
  const out: Segment[] = [];
  for (const s of spans) {
    if (s.kind === 'played' || s.kind === 'composed') {
      // A composed run is cut as a played one: it is played in the page if composing it is refused.
      const n = s.to - s.from + 1;
      const pieces = Math.ceil(n / share);
      for (const [a, b] of planChunks(n, Math.max(5, Math.ceil(n / pieces)))) {
        out.push(s.kind === 'composed' ? { kind: 'composed', from: s.from + a, to: s.from + b, layer: s.layer! } : { kind: 'played', from: s.from + a, to: s.from + b });
      }
      continue;
    }
    const prev = out[out.length - 1];
    if (prev?.kind === 'pictures') {
      prev.spans.push(s);
      prev.to = s.to;
    } else out.push({ kind: 'pictures', from: s.from, to: s.to, spans: [s] });
  }
  return out;
}

/** Runs `tasks`, `width` at once; the first failure stops the run (`stopAll`) and is thrown once all have settled. */
async function pool(tasks: readonly (() => Promise<void>)[], width: number, opts: { run: Run; stopAll: () => void }): Promise<void> {
  const queue = [...tasks];
  const failures: unknown[] = [];
  await Promise.all(Array.from({ length: Math.min(width, queue.length) }, async () => {
    for (let task = queue.shift(); task && failures.length === 0 && !opts.run.stop.aborted; task = queue.shift()) {
      await task().catch((err: unknown) => {
        failures.push(err);
        opts.stopAll();
      });
    }
  }));
  if (failures.length) throw failures[0];
  opts.run.stop.throwIfAborted();
}

/** A Remotion cancel signal that fires when `signal` aborts. */
function cancelOn(signal: AbortSignal): CancelSignal {
  const { cancelSignal, cancel } = makeCancelSignal();
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', () => cancel(), { once: true });
  return cancelSignal;
}

/** Remotion asks before downloading a browser: the answer is always no. */
function noBrowserDownload(): never {
  throw new Error('Video engine: Remotion tried to download a browser; this deployment only uses the configured Chromium (BROWSER_EXECUTABLE, or Debian\'s chromium package)');
}

/** The composition's metadata, from the props (no page load to ask calculateMetadata). */
function composition(props: EditProps): VideoConfig {
  return {
    id: COMPOSITION_ID,
    width: props.width,
    height: props.height,
    fps: props.fps,
    durationInFrames: props.durationInFrames,
    defaultProps: {},
    props: props as unknown as Record<string, unknown>,
    defaultCodec: null,
    defaultOutName: null,
    defaultVideoImageFormat: null,
    defaultPixelFormat: null,
    defaultProResProfile: null,
    defaultSampleRate: null,
  };
}

function scaled(props: EditProps, scale = 1): { width: number; height: number } {
  const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);
  return scale === 1 ? { width: props.width, height: props.height } : { width: even(props.width * scale), height: even(props.height * scale) };
}

function frameRangeWithin(range: [number, number] | undefined, total: number): [number, number] {
  if (!range) return [0, total - 1];
  const [from, to] = range;
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to < from || to >= total) {
    throw new Error(`frameRange [${from}, ${to}] is not within the ${total} frames of the output`);
  }
  return [from, to];
}

function hasAudio(props: EditProps): boolean {
  return props.soundtrack !== undefined || Object.values(props.clips).some((c) => c.media?.kind === 'audio' || (c.media?.kind === 'video' && c.media.hasAudio === true));
}

/** Progress callbacks at most ~5 times a second, never going backwards. */
function throttled<T>(report: ((p: number) => void) | undefined, map: (value: T) => number): ((value: T) => void) | undefined {
  if (!report) return undefined;
  let last = -1;
  let at = 0;
  return (value) => {
    const p = Math.min(1, Math.max(0, map(value)));
    const now = Date.now();
    if (p <= last || (now - at < 200 && p < 1)) return;
    last = p;
    at = now;
    report(p);
  };
}
