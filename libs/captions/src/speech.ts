import { ProviderError, type ProviderCallOptions, type ProviderFailureKind } from '#libs/integrations';

/**
 * What every speech engine (the three providers' adapters and the offline engine) offers the
 * Captions module: one recording in, words with times out. Contract §2 "Caption provider", §4.3.
 */

/** Provider slugs in default-preference order (§2). */
export const SPEECH_PROVIDERS = ['speech-alpha', 'speech-beta', 'speech-gamma'] as const;
export type SpeechProvider = (typeof SPEECH_PROVIDERS)[number];

/** §2 `support`: what the engine really does with a request. */
export interface SpeechSupport {
  /** Reads a video file's audio track itself (otherwise a video is refused with 422). */
  video: boolean;
  /** `languageCode: "auto"` detects the language. */
  autoLanguage: boolean;
  /** `alternativeLanguageCodes` are used. */
  multiLanguage: boolean;
  diarize: boolean;
  keywords: boolean;
  profanityFilter: boolean;
  /** Largest recording the engine accepts, in bytes. */
  maxBytes: number;
}

export interface SpeechLanguage {
  code: string;
  label: string;
}

export interface SpeechModel {
  id: string;
  label: string;
  hint: string;
}

/** A recording on local disk (fetched, read from storage, or extracted from a render). */
export interface SpeechAudio {
  path: string;
  sizeBytes: number;
  kind: 'audio' | 'video';
  /** Container from the bytes: mp3, wav, ogg, flac, m4a, mp4, mov, webm. */
  format: string;
  mime: string;
  durationSec: number;
}

/** The settings that change what is recognised (and so are part of the cache key). */
export interface RecognitionSettings {
  /** BCP-47 tag, or `auto` (only when `support.autoLanguage`). */
  languageCode: string;
  alternativeLanguageCodes: string[];
  /** Provider model id; null = the engine's default. */
  model: string | null;
  diarize: boolean;
  keywords: string[];
  punctuation: boolean;
  filterProfanity: boolean;
}

export interface RecognizedWord {
  /** The word as it should be shown (punctuated when punctuation is on and the engine punctuates). */
  word: string;
  /** Seconds from the start of the recording. */
  start: number;
  end: number;
  /** 0–1. */
  confidence: number;
  /** Speaker number when diarized, else null. */
  speaker: number | null;
}

export interface Recognition {
  /** The language recognised (the detected one for `auto`). */
  languageCode: string;
  /** The model that was used. */
  model: string;
  words: RecognizedWord[];
  /** Seconds of audio the provider processed (what it bills). */
  audioSec: number;
}

/**
 * Why a provider call failed (libs/integrations `ProviderFailureKind`): `auth` marks the connection
 * and answers 409 INTEGRATION_REAUTH_REQUIRED; `unavailable` (timeout, 429, 5xx) is retried;
 * `rejected` fails the transcription with the provider's reason. SpeechProviderError is the one
 * class of every connected-account failure (`ProviderError`), under its speech name.
 */
export type SpeechFailureKind = ProviderFailureKind;
export { ProviderError as SpeechProviderError };

export interface SpeechEngine {
  readonly support: SpeechSupport;
  /** Containers the engine reads (audio ones, plus video ones when `support.video`). */
  readonly formats: readonly string[];
  readonly languages: readonly SpeechLanguage[];
  readonly models: readonly SpeechModel[];
  readonly defaultModel: string;
  /**
   * Longest recording the engine accepts, in seconds, when it is shorter than any size limit makes
   * it (speech-gamma: 4 hours, cut into parts of under a minute); absent: no such limit.
   */
  readonly maxDurationSec?: number;
  /** A cheap call that proves the credentials (the dashboard's connect form and Test button); providers only. */
  check?(signal: AbortSignal): Promise<void>;
  /**
   * Recognises one recording. Throws SpeechProviderError; honours `signal` (abort = stop at once:
   * the call rejects with `signal.reason`).
   */
  transcribe(audio: SpeechAudio, settings: RecognitionSettings, signal: AbortSignal): Promise<Recognition>;
}

/** A connection's credentials, as unsealed for one call (never logged, never returned). */
export interface SpeechCredentials {
  apiKey?: string;
  accessToken?: string;
}

export interface SpeechEngineOptions extends ProviderCallOptions {
  credentials: SpeechCredentials;
  /** The provider's API root (its public one by default; a loopback fake in tests). */
  baseUrl?: string;
  /** For polling providers: the wait between polls (tests shorten it). */
  pollIntervalMs?: number;
}
