import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/core';
import { ApiError, newId, type KeyMode } from '#libs/core';
import { allWorkspaces, forWorkspace, queries, type Tables } from '#libs/db';
import type { StorageDriver } from '#libs/storage';
import { cutCues, toSrt, toWebVtt, transcriptText } from './cues.js';
import {
  SpeechRecognition, Transcription, type CueSettings, type TranscriptionErrorInfo, type TranscriptionRoute, type TranscriptionSource,
} from './entities.js';
import type { Recognition, RecognitionSettings, SpeechProvider } from './speech.js';
import type { RememberedUrl } from './url-memory.js';

export interface NewTranscription {
  /** The caller's mode (a render's own for its `alias://` captions). */
  mode: KeyMode;
  route: TranscriptionRoute;
  provider: SpeechProvider;
  engine: 'provider' | 'local';
  source: TranscriptionSource;
  settings: RecognitionSettings;
  cueOptions: CueSettings;
  cacheMode: 'on' | 'fresh';
  save: boolean;
  name: string | null;
}

/** §2 Transcription as the API shows it (plus the house fields of docs/captions.md). */
export interface TranscriptionView {
  id: string;
  status: string;
  mode: KeyMode;
  provider: string;
  languageCode: string | null;
  text: string | null;
  cues: Transcription['cues'];
  vttUrl: string | null;
  srtUrl: string | null;
  audioSec: number | null;
  fromCache: boolean;
  error: TranscriptionErrorInfo | null;
  createdAt: string;
  completedAt: string | null;
}

export interface CacheStats {
  transcribed: number;
  reused: number;
  secondsSaved: number;
  hitRate: number;
}

const transcriptions = queries<Tables<typeof Transcription>>();

/**
 * The caption files' keys: content-addressed per workspace (an identical file is stored once;
 * unguessable without its text), named by the request's `name` when it gave one
 * (`c/<workspace>/<hash>/<name>.vtt`: the file downloads under that name).
 */
export function captionKey(workspaceId: string, text: string, ext: 'vtt' | 'srt', name?: string | null): string {
  const hash = createHash('sha256').update(text).digest('base64url').slice(0, 32);
  const safe = name ? name.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+|[.-]+$/g, '').slice(0, 100) : '';
  return safe ? `c/${workspaceId}/${hash}/${safe}.${ext}` : `c/${workspaceId}/${hash}.${ext}`;
}

/**
 * Transcription records, the recognition cache and the one way a transcription ends `done`
 * (`complete`: cues cut, files written, record settled) — the API on a cache hit, the worker otherwise.
 */
export class TranscriptionsService {
  constructor(private readonly orm: MikroORM, private readonly storage: StorageDriver) {}

  async create(workspaceId: string, input: NewTranscription): Promise<Transcription> {
    const em = forWorkspace(this.orm, workspaceId);
    const row = em.create(Transcription, {
      id: newId('transcription'), workspaceId, status: 'queued', mode: input.mode, route: input.route, provider: input.provider, engine: input.engine,
      sourceKind: input.source.kind, sourceValue: input.source.value, settings: input.settings, cueOptions: input.cueOptions,
      cacheMode: input.cacheMode, save: input.save, name: input.name, audioHash: null, audioSec: null, urlValidators: null, fromCache: false,
      recognitionId: null, languageCode: null, model: null, text: null, cues: null, vttKey: null, srtKey: null, error: null,
      attempts: 0, completedAt: null,
    });
    await em.flush();
    return row;
  }

  async byId(id: string): Promise<Transcription | null> {
    return allWorkspaces(this.orm).findOne(Transcription, { id });
  }

  async get(workspaceId: string, id: string): Promise<Transcription> {
    const row = await forWorkspace(this.orm, workspaceId).findOne(Transcription, { id });
    if (!row) throw new ApiError('TRANSCRIPTION_NOT_FOUND', `No transcription ${id} in this workspace`);
    return row;
  }

  /** Newest first (§4.3: limit 1–100, default 20). */
  async list(workspaceId: string, limit: number): Promise<Transcription[]> {
    return forWorkspace(this.orm, workspaceId).find(Transcription, {}, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
  }

  /** The recording's hash from an earlier transcription of the same asset or render (their bytes never change). */
  async knownAudioHash(workspaceId: string, source: TranscriptionSource): Promise<string | null> {
    if (source.kind === 'audioUrl') return null;
    const row = await forWorkspace(this.orm, workspaceId).findOne(
      Transcription, { sourceKind: source.kind, sourceValue: source.value, audioHash: { $ne: null } }, { fields: ['audioHash'] },
    );
    return row?.audioHash ?? null;
  }

  /**
   * What the worker last read at an audioUrl for this workspace since `since` (its hash and the
   * validators its server gave), or null: none read, none with validators, or too long ago.
   */
  async rememberedUrl(workspaceId: string, url: string, since: Date): Promise<{ hash: string; validators: RememberedUrl } | null> {
    const row = await forWorkspace(this.orm, workspaceId).findOne(
      Transcription,
      { sourceKind: 'audioUrl', sourceValue: url, status: 'done', audioHash: { $ne: null }, completedAt: { $gte: since }, urlValidators: { $ne: null } },
      { fields: ['audioHash', 'urlValidators'], orderBy: { completedAt: 'desc', id: 'desc' } },
    );
    if (!row?.audioHash || !row.urlValidators || new Date(row.urlValidators.readAt) < since) return null;
    return { hash: row.audioHash, validators: row.urlValidators };
  }

  async cached(workspaceId: string, cacheKey: string): Promise<SpeechRecognition | null> {
    return forWorkspace(this.orm, workspaceId).findOne(SpeechRecognition, { cacheKey });
  }

  /** Keeps a provider's answer for later requests (a `fresh` run replaces the cached one). */
  async remember(workspaceId: string, cacheKey: string, provider: SpeechProvider, r: Recognition): Promise<SpeechRecognition> {
    const em = forWorkspace(this.orm, workspaceId);
    const existing = await em.findOne(SpeechRecognition, { cacheKey });
    if (existing) {
      em.assign(existing, { languageCode: r.languageCode, model: r.model, words: r.words, audioSec: r.audioSec });
      await em.flush();
      return existing;
    }
    const row = em.create(SpeechRecognition, {
      id: newId('recognition'), workspaceId, cacheKey, provider, languageCode: r.languageCode, model: r.model, words: r.words, audioSec: r.audioSec,
    });
    await em.flush();
    return row;
  }

  /** queued → processing (one more run); false when the record is gone or already settled. */
  async start(id: string): Promise<boolean> {
    const row = await this.byId(id);
    if (!row || row.status === 'done' || row.status === 'failed') return false;
    const n = await allWorkspaces(this.orm).nativeUpdate(Transcription, { id, status: { $in: ['queued', 'processing'] } }, { status: 'processing', attempts: row.attempts + 1 });
    return n > 0;
  }

  /**
   * Settles a transcription `done` from recognised words (a provider's, or the cache's): cues cut by
   * its cue options, the transcript, .vtt/.srt stored unless `save` is off.
   */
  async complete(row: Transcription, audio: { hash: string; sec: number; url?: RememberedUrl | null }, rec: SpeechRecognition, fromCache: boolean): Promise<Transcription> {
    const cues = cutCues(rec.words, row.cueOptions);
    let vttKey: string | null = null;
    let srtKey: string | null = null;
    if (row.save) {
      const vtt = toWebVtt(cues);
      const srt = toSrt(cues);
      vttKey = captionKey(row.workspaceId, vtt, 'vtt', row.name);
      srtKey = captionKey(row.workspaceId, srt, 'srt', row.name);
      await Promise.all([this.storeOnce(vttKey, vtt), this.storeOnce(srtKey, srt)]);
    }
    const em = forWorkspace(this.orm, row.workspaceId);
    const fields = {
      status: 'done' as const, audioHash: audio.hash, audioSec: audio.sec, urlValidators: audio.url ?? null, fromCache, recognitionId: rec.id,
      languageCode: rec.languageCode, model: rec.model, text: transcriptText(rec.words), cues, vttKey, srtKey, error: null, completedAt: new Date(),
    };
    await em.nativeUpdate(Transcription, { id: row.id, status: { $in: ['queued', 'processing'] } }, fields);
    return Object.assign(row, fields);
  }

  async fail(id: string, error: TranscriptionErrorInfo): Promise<void> {
    await allWorkspaces(this.orm).nativeUpdate(Transcription, { id, status: { $in: ['queued', 'processing'] } }, { status: 'failed', error, completedAt: new Date() });
  }

  /** Transcriptions queued or processing since before `before` (their job may be lost, or their render's worker died). */
  async stalled(before: Date): Promise<Pick<Transcription, 'id' | 'route'>[]> {
    return allWorkspaces(this.orm).find(Transcription, { status: { $in: ['queued', 'processing'] }, updatedAt: { $lt: before } }, { fields: ['id', 'route'], limit: 500 });
  }

  /** §2 providers' `cache`: real counts over the workspace's finished transcriptions. */
  async stats(workspaceId: string): Promise<CacheStats> {
    const rows = await transcriptions.all(forWorkspace(this.orm, workspaceId), (db) => db.selectFrom('transcription')
      .select((eb) => ['from_cache', eb.fn.countAll<number | string>().as('n'), eb.fn.sum<number | string | null>('audio_sec').as('sec')])
      .where('workspace_id', '=', workspaceId).where('status', '=', 'done').groupBy('from_cache'));
    let transcribed = 0;
    let reused = 0;
    let saved = 0;
    for (const r of rows) {
      if (r.from_cache) {
        reused = Number(r.n);
        saved = Number(r.sec ?? 0);
      } else {
        transcribed = Number(r.n);
      }
    }
    const total = transcribed + reused;
    return { transcribed, reused, secondsSaved: Math.round(saved), hitRate: total ? Math.round((reused / total) * 1000) / 1000 : 0 };
  }

  view(row: Transcription): TranscriptionView {
    return {
      id: row.id,
      status: row.status,
      mode: row.mode,
      provider: row.provider,
      languageCode: row.languageCode ?? null,
      text: row.text ?? null,
      cues: row.cues ?? null,
      vttUrl: row.vttKey ? this.storage.url(row.vttKey) : null,
      srtUrl: row.srtKey ? this.storage.url(row.srtKey) : null,
      audioSec: row.audioSec ?? null,
      fromCache: row.fromCache,
      error: row.error ?? null,
      createdAt: row.createdAt.toISOString(),
      completedAt: row.completedAt ? row.completedAt.toISOString() : null,
    };
  }

  private async storeOnce(key: string, text: string): Promise<void> {
    if (await this.storage.stat(key)) return;
    await this.storage.put(key, Buffer.from(text, 'utf8'));
  }
}
