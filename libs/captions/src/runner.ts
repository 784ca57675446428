import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApiError, type AppConfig } from '#libs/core';
import type { IntegrationsService } from '#libs/integrations';
import { ASSET_HEAD_BYTES, detectAssetType, headValidators, MediaFetchError, probeMedia, readHead, runBinary, storageAwareFetcher, type MediaFetcher, type UrlValidators } from '#libs/media';
import { StoredFileNotFoundError, type StorageDriver } from '#libs/storage';
import { refusals } from './capability.js';
import { recognitionCacheKey } from './cache-key.js';
import type { SpeechEngines } from './captions.service.js';
import type { Transcription, TranscriptionErrorInfo } from './entities.js';
import { SpeechProviderError, type SpeechAudio } from './speech.js';
import type { TranscriptionsService } from './transcriptions.service.js';
import { identifies, URL_CHECK_MS, type RememberedUrl } from './url-memory.js';

/** Where the worker finds a source's stored bytes (null: not readable by this workspace, or gone). */
export interface StoredSources {
  assetFileKey(workspaceId: string, assetId: string): Promise<string | null>;
  renderOutputKey(workspaceId: string, renderId: string): Promise<string | null>;
}

/** The longest recording transcribed (docs/captions.md). */
export const MAX_AUDIO_SEC = 4 * 3600;

/** A failure that ends the transcription with a reason (not worth another run). */
class Refused extends Error {
  constructor(readonly info: TranscriptionErrorInfo) {
    super(info.message);
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** How long the worker may take to download one recording. */
const RECORDING_FETCH_MS = 120_000;

/**
 * The runner's reads of a recording: our stored files from storage, other URLs downloaded under the
 * SSRF rules of APP_ENV, up to an asset's size limit (ASSET_MAX_BYTES) and RECORDING_FETCH_MS.
 */
export function recordingFetcher(config: Pick<AppConfig, 'env' | 'assets'>, storage: StorageDriver): MediaFetcher {
  return storageAwareFetcher(config, storage, { maxBytes: config.assets.maxBytes, timeoutMs: RECORDING_FETCH_MS });
}

/**
 * The API's check of a remembered audioUrl: a HEAD under the same SSRF rules of APP_ENV as the
 * worker's download (resolved, checked and pinned on every hop), within URL_CHECK_MS.
 */
export function recordingValidators(config: Pick<AppConfig, 'env'>): (url: string) => Promise<UrlValidators> {
  const policy = config.env === 'production' ? 'production' : 'development';
  return (url) => headValidators(url, { policy, timeoutMs: URL_CHECK_MS });
}

/** The runner's work folder (one folder per transcription under it). */
export function captionWorkDir(config: Pick<AppConfig, 'dataDir'>): string {
  return join(config.dataDir, 'caption-work');
}

/**
 * The worker's half of a transcription (docs/captions.md): the recording read into the worker's
 * folder (a stored asset, a render's audio track extracted with ffmpeg, or an SSRF-checked download),
 * typed from its bytes and hashed; the cache first; else the provider (or the offline engine); the
 * words kept for later requests, the cues cut and the record settled. A lapsed grant marks the
 * connection; an outage runs the job again, then fails it.
 */
export class TranscriptionRunner {
  constructor(private readonly deps: {
    transcriptions: TranscriptionsService;
    integrations: IntegrationsService;
    engines: SpeechEngines;
    storage: StorageDriver;
    sources: StoredSources;
    fetch: MediaFetcher;
    workDir: string;
  }) {}

  /** Runs one transcription; `lastRun` fails it on an outage instead of asking for another run. */
  async run(id: string, signal: AbortSignal, lastRun: boolean): Promise<{ status: string }> {
    const { transcriptions } = this.deps;
    if (!(await transcriptions.start(id))) return { status: 'gone' };
    const row = await transcriptions.byId(id);
    if (!row) return { status: 'gone' };
    await mkdir(this.deps.workDir, { recursive: true });
    const dir = await mkdtemp(join(this.deps.workDir, `${id}-`));
    let connectionId: string | null = null;
    try {
      const audio = await this.recording(row, dir, signal);
      if (row.route === 'speech-gamma' && audio.kind === 'video') {
        throw new Refused({ code: 'UNSUPPORTED_ASSET', message: 'A video file is refused on the speech-gamma path (MP3, WAV, FLAC or OGG); POST /v1/captions transcribes videos' });
      }
      const cacheKey = recognitionCacheKey(audio.hash, row.provider, row.engine, row.settings);
      if (row.cacheMode === 'on') {
        const hit = await transcriptions.cached(row.workspaceId, cacheKey);
        if (hit) {
          await transcriptions.complete(row, { hash: audio.hash, sec: hit.audioSec, url: audio.url }, hit, true);
          return { status: 'done' };
        }
      }
      const { integrations } = this.deps;
      const usable = integrations.usable(await integrations.find(row.workspaceId, row.provider), row.provider);
      connectionId = usable.connection.id;
      // The engine recorded at acceptance (test mode: the offline one, whatever the connection's).
      const engine = this.deps.engines.create(row.provider, row.engine, { credentials: usable.credentials, baseUrl: usable.connection.baseUrl ?? null });
      const reasons = refusals(engine, row.settings, audio);
      if (reasons.length) throw new Refused({ code: 'UNSUPPORTED_ASSET', message: `${row.provider} cannot read this recording: ${reasons.join('; ')}` });
      const recognition = await engine.transcribe(audio, row.settings, signal);
      const kept = await transcriptions.remember(row.workspaceId, cacheKey, row.provider, { ...recognition, audioSec: recognition.audioSec || audio.durationSec });
      await transcriptions.complete(row, { hash: audio.hash, sec: kept.audioSec, url: audio.url }, kept, false);
      return { status: 'done' };
    } catch (err) {
      const info = await this.failure(err, connectionId, lastRun);
      if (!info) throw err;
      await transcriptions.fail(id, info);
      return { status: 'failed' };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The error a failed run leaves on the record; null: run it again. */
  private async failure(err: unknown, connectionId: string | null, lastRun: boolean): Promise<TranscriptionErrorInfo | null> {
    if (err instanceof Refused) return err.info;
    if (err instanceof ApiError) return { code: err.code, message: err.message };
    if (err instanceof MediaFetchError) return { code: 'MEDIA_UNAVAILABLE', message: `audioUrl could not be read: ${err.message}` };
    if (err instanceof StoredFileNotFoundError) return { code: 'MEDIA_UNAVAILABLE', message: 'The recording is no longer in storage' };
    if (err instanceof SpeechProviderError) {
      if (err.kind === 'auth') {
        if (connectionId) await this.deps.integrations.markLapsed(connectionId, err.message);
        return { code: 'INTEGRATION_REAUTH_REQUIRED', message: `The provider refused the connection's credentials (${err.message}); connect it again` };
      }
      if (err.kind === 'rejected') return { code: 'TRANSCRIPTION_FAILED', message: err.message };
      return lastRun ? { code: 'PROVIDER_UNAVAILABLE', message: `The speech provider stayed unavailable: ${err.message}` } : null;
    }
    return lastRun ? { code: 'TRANSCRIPTION_FAILED', message: 'The recording could not be transcribed; try again' } : null;
  }

  /** The recording in `dir`, typed, measured and hashed (an audioUrl's: with the validators its server gave, when they name the bytes). */
  private async recording(row: Transcription, dir: string, signal: AbortSignal): Promise<SpeechAudio & { hash: string; url: RememberedUrl | null }> {
    const { storage, sources } = this.deps;
    let file = join(dir, 'source');
    let url: RememberedUrl | null = null;
    if (row.sourceKind === 'audioUrl') {
      const readAt = new Date().toISOString();
      const fetched = await this.deps.fetch(row.sourceValue, ['audio', 'video']);
      if (fetched.validators && identifies(fetched.validators)) url = { ...fetched.validators, readAt };
      await writeFile(file, fetched.bytes);
    } else if (row.sourceKind === 'assetId') {
      const key = await sources.assetFileKey(row.workspaceId, row.sourceValue);
      if (!key) throw new Refused({ code: 'ASSET_NOT_FOUND', message: `Asset ${row.sourceValue} is gone` });
      await pipeline(await storage.read(key), createWriteStream(file));
    } else {
      const key = await sources.renderOutputKey(row.workspaceId, row.sourceValue);
      if (!key) throw new Refused({ code: 'RENDER_NOT_FOUND', message: `Render ${row.sourceValue} has no output any more` });
      const video = join(dir, 'render');
      await pipeline(await storage.read(key), createWriteStream(video));
      const probed = await probeMedia(video, signal);
      if (!probed.hasAudio) throw new Refused({ code: 'UNSUPPORTED_ASSET', message: `Render ${row.sourceValue} has no audio track` });
      // Its audio track alone, mono 16 kHz 16-bit WAV: lossless for speech, read by every provider
      // (the shipped ffmpeg has no FLAC encoder), 32 kB a second.
      file = join(dir, 'audio.wav');
      await runBinary('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', video, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', file], { signal, timeoutMs: 120_000 });
    }
    const detected = detectAssetType(await readHead(file, ASSET_HEAD_BYTES));
    if (!detected || (detected.type !== 'audio' && detected.type !== 'video')) {
      throw new Refused({ code: 'UNSUPPORTED_ASSET', message: 'The recording is not an audio or video file (mp3, wav, ogg, flac, m4a, mp4, mov, webm)' });
    }
    let durationSec: number;
    let kind: 'audio' | 'video' = detected.type;
    let format = detected.ext;
    let mime = detected.mimeType;
    try {
      const probed = await probeMedia(file, signal);
      if (!probed.hasAudio) throw new Refused({ code: 'UNSUPPORTED_ASSET', message: 'The recording has no audio track' });
      durationSec = probed.duration ?? 0;
      // An mp4 with sound only is an m4a.
      if (kind === 'video' && !probed.hasVideo && format === 'mp4') [kind, format, mime] = ['audio', 'm4a', 'audio/mp4'];
    } catch (err) {
      if (err instanceof Refused) throw err;
      throw new Refused({ code: 'UNSUPPORTED_ASSET', message: 'The recording could not be read (damaged or cut short)' });
    }
    if (durationSec > MAX_AUDIO_SEC) throw new Refused({ code: 'UNSUPPORTED_ASSET', message: `The recording lasts ${Math.round(durationSec / 60)} minutes; the longest transcribed is ${MAX_AUDIO_SEC / 3600} hours` });
    const { size } = await stat(file);
    return { path: file, sizeBytes: size, kind, format, mime, durationSec, hash: await sha256Of(file), url };
  }
}
