import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import { workspaceFilter } from '#libs/db';
import type { Cue, CueOptions } from './cues.js';
import type { RecognitionSettings, RecognizedWord, SpeechProvider } from './speech.js';
import type { RememberedUrl } from './url-memory.js';

/** decisions.md "Assets and transcriptions": queued → processing → done, or → failed. */
export const TRANSCRIPTION_STATUSES = ['queued', 'processing', 'done', 'failed'] as const;
export type TranscriptionStatus = (typeof TRANSCRIPTION_STATUSES)[number];

export type TranscriptionSourceKind = 'audioUrl' | 'assetId' | 'renderId';

export interface TranscriptionSource {
  kind: TranscriptionSourceKind;
  /** The URL, asset id or render id as given. */
  value: string;
}

/** How a transcription's cues are cut (all three given; not part of the cache key: re-cutting is free). */
export type CueSettings = Required<CueOptions>;

export interface TranscriptionErrorInfo {
  code: string;
  message: string;
}

/** Who asked: the generate route of §4.3, its older path, the single-provider path of §4.5, or a render's `alias://` captions. */
export type TranscriptionRoute = 'captions' | 'transcriptions' | 'speech-gamma' | 'render';

/** A captioning request and, once done, its cues (§2 Transcription; docs/captions.md). */
export const Transcription = defineEntity({
  name: 'Transcription',
  tableName: 'transcription',
  filters: workspaceFilter(),
  indexes: [
    { properties: ['workspaceId', 'createdAt'] },
    { properties: ['workspaceId', 'sourceKind', 'sourceValue'] },
  ],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    status: p.string().length(12).$type<TranscriptionStatus>(),
    /** The caller's mode (issue 28), a render's own for its `alias://` captions. */
    mode: p.string().length(4).$type<KeyMode>().default('live'),
    route: p.string().length(16).$type<TranscriptionRoute>(),
    provider: p.string().length(16).$type<SpeechProvider>(),
    /** The connection's engine when the request was taken: the provider's API or the offline engine. */
    engine: p.string().length(8).$type<'provider' | 'local'>(),
    sourceKind: p.string().length(8).$type<TranscriptionSourceKind>(),
    sourceValue: p.text(),
    settings: p.json<RecognitionSettings>(),
    cueOptions: p.json<CueSettings>(),
    /** `fresh`: the cache is not read (a new transcription replaces the cached one). */
    cacheMode: p.string().length(8).$type<'on' | 'fresh'>(),
    save: p.boolean(),
    name: p.string().length(200).nullable(),
    /** sha256 of the recording's bytes, once read. */
    audioHash: p.string().length(64).nullable(),
    audioSec: p.double().$type<number>().runtimeType('number').nullable(),
    /** An audioUrl the worker read: the validators its server gave then (a repeat checks them; url-memory.ts). */
    urlValidators: p.json<RememberedUrl>().nullable(),
    /** Answered from an earlier transcription of the same recording and settings. */
    fromCache: p.boolean(),
    recognitionId: p.string().length(32).nullable(),
    languageCode: p.string().length(35).nullable(),
    model: p.string().length(100).nullable(),
    text: p.text().nullable(),
    cues: p.json<Cue[]>().nullable(),
    vttKey: p.text().nullable(),
    srtKey: p.text().nullable(),
    error: p.json<TranscriptionErrorInfo>().nullable(),
    attempts: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
});
export type Transcription = InferEntity<typeof Transcription>;

/**
 * The cache (docs/captions.md): the words a provider recognised in one recording with one set of
 * recognition settings, per workspace. Key = sha256 of the audio bytes + provider + engine + the
 * settings that change what is recognised; cue settings are not part of it.
 */
export const SpeechRecognition = defineEntity({
  name: 'SpeechRecognition',
  tableName: 'speech_recognition',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'cacheKey'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    cacheKey: p.string().length(64),
    provider: p.string().length(16).$type<SpeechProvider>(),
    languageCode: p.string().length(35),
    model: p.string().length(100),
    words: p.json<RecognizedWord[]>(),
    audioSec: p.double().$type<number>().runtimeType('number'),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type SpeechRecognition = InferEntity<typeof SpeechRecognition>;
