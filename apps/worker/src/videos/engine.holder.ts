import { hostname } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ApiError, type AppConfig } from '#libs/core';
import type { EditSpec } from '#libs/edit-spec';
import { videoJobScratch, type VideoEngineBeacon } from '#libs/renders';
import { storageAwareFetcher, type FontCatalog } from '#libs/still';
import type { StorageDriver } from '#libs/storage';
import { engineAvailable, storageAwareTextFetcher, VideoEngine } from '#libs/video';

/** The heartbeat the API reads for its 503 ENGINE_NOT_CONFIGURED check. */
const HEARTBEAT_MS = 10_000;

/**
 * The worker's video engine (Remotion + Chromium): started in the background at worker start when
 * VIDEO_ENGINE is `on`, or `auto` and a browser is found, so stills and webhooks do not wait for the
 * bundle and the browser. While it runs, a key in Redis tells the API that videos can be rendered.
 */
export class VideoEngineHolder {
  private readonly logger = new Logger('video');
  private starting: Promise<VideoEngine> | undefined;
  private engine: VideoEngine | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private checked: Promise<boolean> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly storage: StorageDriver,
    private readonly fonts: FontCatalog,
    private readonly beacon: VideoEngineBeacon,
  ) {}

  /** The video jobs' scratch folders (videoJobScratch). */
  get jobScratch(): string {
    return videoJobScratch(this.config);
  }

  /** Whether this worker should run video at all (VIDEO_ENGINE and the machine); `on` without a browser is an error. */
  enabled(): Promise<boolean> {
    this.checked ??= this.check();
    return this.checked;
  }

  private async check(): Promise<boolean> {
    if (this.config.video.engine === 'off') return false;
    const status = await engineAvailable({ ...(this.config.video.browserExecutable ? { browserExecutable: this.config.video.browserExecutable } : {}), bundleDir: this.config.video.bundleDir });
    if (status.ok) return true;
    if (this.config.video.engine === 'on') throw new Error(`VIDEO_ENGINE=on but the video engine cannot start: ${status.reason}`);
    this.logger.warn(`video rendering off on this worker: ${status.reason}`);
    return false;
  }

  /** Starts the engine (bundle once, browser once) and the heartbeat; resolves when it is ready. */
  start(): Promise<VideoEngine> {
    this.starting ??= (async () => {
      const started = Date.now();
      const engine = await VideoEngine.start({
        fetch: storageAwareFetcher(this.config, this.storage),
        fetchText: storageAwareTextFetcher(this.config, this.storage),
        fonts: this.fonts,
        bundleDir: this.config.video.bundleDir,
        workDir: join(this.config.dataDir, 'video-work'),
        ...(this.config.video.browserExecutable ? { browserExecutable: this.config.video.browserExecutable } : {}),
        ...(this.config.video.licenseKey ? { licenseKey: this.config.video.licenseKey } : {}),
        onUsageError: (err) => this.logger.warn(`Remotion usage event not sent: ${err.message}`),
        // A browser or extractor fault, tried once more in fresh tabs (or a new browser): counted on the engine (`recoveries`).
        onComposeFailure: (f) => this.logger.warn(`render ${f.renderId ?? '(unknown)'}: frames ${f.frames[0]}-${f.frames[1]} played in the page after composing them failed: "${f.reason}"`),
        onRecovery: (r) => this.logger.warn(
          `render ${r.renderId ?? '(still)'}: ${r.call} tried again in a fresh ${r.fresh === 'browser' ? 'browser' : 'tab'} after "${r.reason}"`
          + `${r.straysClosed ? ` (${r.straysClosed} stray tabs closed)` : ''}; recoveries on this worker: ${this.engine?.recoveries ?? 0}`,
        ),
      });
      this.engine = engine;
      const beat = () => void this.beacon.beat(`${hostname()}:${process.pid}`, HEARTBEAT_MS * 3).catch(() => undefined);
      beat();
      this.heartbeat = setInterval(beat, HEARTBEAT_MS);
      this.logger.log(`video engine ready in ${Date.now() - started} ms`);
      return engine;
    })();
    return this.starting;
  }

  /** The engine once it has started here; undefined before (or where video is off). */
  get running(): VideoEngine | undefined {
    return this.engine;
  }

  /** The engine, once started (jobs wait for it). */
  current(): Promise<VideoEngine> {
    return this.start();
  }

  /** The still engine's browser path (html, video, luma, caption clips): 422 while no engine runs here. */
  browserStill = async (edit: EditSpec, opts: { scale: number; time: number; clips?: readonly string[] }): Promise<Buffer> => {
    if (!this.engine) throw new ApiError('UNSUPPORTED_ASSET', 'This frame needs the browser engine (html, video, luma or caption clips), which is not running on this worker');
    return this.engine.renderHtmlStill(edit, opts);
  };

  /**
   * Whether a PDF's text clips are printed now (the engine has started here): before, they stay the
   * still engine's pixels with invisible words, so a text-only PDF never waits for or fails on the browser.
   */
  printsText = (): boolean => this.engine !== undefined;

  /** The still engine's print path for a PDF's html and text clips (vector pages among its layers). */
  printHtml = async (edit: EditSpec, opts: { time: number; clips?: readonly string[] }): Promise<Map<string, Buffer>> => {
    if (!this.engine) throw new ApiError('UNSUPPORTED_ASSET', 'This frame needs the browser engine (html clips), which is not running on this worker');
    return this.engine.printHtmlClips(edit, opts);
  };

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.engine?.close();
  }
}
