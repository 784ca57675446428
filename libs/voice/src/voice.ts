import type { ProviderCallOptions } from '#libs/integrations';

/**
 * What a voice engine (the ElevenLabs-speaking adapter, the offline espeak-ng engine) offers the
 * voice-provider routes (contract §2 "Other shapes", §4.5): voices, models, the character allowance,
 * and a script spoken as MP3. Failures are libs/integrations' ProviderError (auth / unavailable /
 * rejected) or a VoiceRejected naming the request's field.
 */

/** §2 Voice. */
export interface Voice {
  id: string;
  name: string;
  category: string;
  previewUrl: string | null;
  labels: Record<string, string>;
}

/** §2 Speech model. */
export interface VoiceModel {
  id: string;
  name: string;
  languages: { id: string; name: string }[];
  maxCharacters: number;
}

/** §2 Character allowance; null limits mean none (the offline engine). */
export interface CharacterAllowance {
  tier: string;
  characterCount: number | null;
  characterLimit: number | null;
  charactersRemaining: number | null;
  resetsAt: string | null;
}

/** One voice-over to say: settings absent = the voice's own. */
export interface SpeechRequest {
  text: string;
  voiceId: string;
  /** Our model id (`multilingual_v2`); null = the engine's default. */
  modelId: string | null;
  stability?: number;
  similarityBoost?: number;
  style?: number;
}

/** §8 Voice-over: text up to 5,000 characters per request. */
export const MAX_SCRIPT_CHARS = 5_000;
/** Largest MP3 read back from an engine (a 5,000-character script at 128 kbit/s is ~6 MB). */
export const MAX_AUDIO_BYTES = 50 * 1024 * 1024;

/** The engine refuses a value of the request: `field` is the request's field (voiceId, modelId, text, …). */
export class VoiceRejected extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'VoiceRejected';
  }
}

export interface VoiceEngine {
  readonly defaultModel: string;
  voices(signal: AbortSignal): Promise<Voice[]>;
  models(signal: AbortSignal): Promise<VoiceModel[]>;
  usage(signal: AbortSignal): Promise<CharacterAllowance>;
  /** The script said as MP3 bytes (at most MAX_AUDIO_BYTES). */
  speak(request: SpeechRequest, signal: AbortSignal): Promise<Buffer>;
}

export interface VoiceEngineOptions extends ProviderCallOptions {
  /** The provider's API root (its public one by default; a loopback fake in tests). */
  baseUrl?: string;
}
