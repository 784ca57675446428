import { SpeechProviderError, type RecognitionSettings, type SpeechAudio, type SpeechEngine, type SpeechLanguage, type SpeechProvider } from '../speech.js';

/** Every container the media library accepts for audio and video (SpeechAudio.format). */
export const AUDIO_FORMATS = ['mp3', 'wav', 'ogg', 'flac', 'm4a'] as const;
export const VIDEO_FORMATS = ['mp4', 'mov', 'webm'] as const;

const names = new Intl.DisplayNames(['en'], { type: 'language' });

/** `{code, label}` for each BCP-47 tag (labels in English, from ICU); `auto` first when the engine detects. */
export function languageList(codes: readonly string[], detects: boolean): SpeechLanguage[] {
  const list = codes.map((code) => ({ code, label: labelOf(code) }));
  return detects ? [{ code: 'auto', label: 'Detect the language' }, ...list] : list;
}

function labelOf(code: string): string {
  try {
    return names.of(code) ?? code;
  } catch {
    return code;
  }
}

/** A BCP-47 tag in its canonical casing (`en-us` → `en-US`), or the text as it came when it is not one. */
export function canonicalTag(code: string): string {
  try {
    return Intl.getCanonicalLocales(code)[0] ?? code;
  } catch {
    return code;
  }
}

/**
 * Refuses, before any network call, what the engine says it cannot do: the Captions module checks
 * the same `support` first (422), so reaching this is a caller's bug, and the provider is never
 * billed for a request it would refuse or we would misread.
 */
export function refuseUnsupported(provider: SpeechProvider, engine: SpeechEngine, audio: SpeechAudio, settings: RecognitionSettings): void {
  const refuse = (message: string) => {
    throw new SpeechProviderError('rejected', `${provider} ${message}`);
  };
  const { support } = engine;
  if (audio.kind === 'video' && !support.video) refuse('reads audio only; a video was given');
  if (!engine.formats.includes(audio.format)) refuse(`does not read ${audio.format} files (it reads ${engine.formats.join(', ')})`);
  if (audio.sizeBytes > support.maxBytes) refuse(`reads recordings up to ${megabytes(support.maxBytes)}; this one is ${megabytes(audio.sizeBytes)}`);
  if (engine.maxDurationSec !== undefined && audio.durationSec > engine.maxDurationSec) {
    refuse(`reads recordings up to ${engine.maxDurationSec} s; this one is ${Math.ceil(audio.durationSec)} s`);
  }
  if (settings.languageCode === 'auto' && !support.autoLanguage) refuse('cannot detect the language: name one');
  if (settings.alternativeLanguageCodes.length > 0 && !support.multiLanguage) refuse('does not take alternative languages');
  if (settings.diarize && !support.diarize) refuse('does not label speakers');
  if (settings.keywords.length > 0 && !support.keywords) refuse('does not take keywords');
  if (settings.filterProfanity && !support.profanityFilter) refuse('does not filter profanity');
  if (settings.model !== null && !engine.models.some((m) => m.id === settings.model)) {
    refuse(`has no model "${settings.model}" (it has ${engine.models.map((m) => m.id).join(', ')})`);
  }
}

function megabytes(bytes: number): string {
  const mb = bytes / 1024 / 1024;
  return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GB` : `${mb >= 10 ? Math.round(mb) : mb.toFixed(1)} MB`;
}

/** The connection's API key, or an `auth` failure naming what is missing. */
export function requireKey(provider: SpeechProvider, key: string | undefined): string {
  if (!key) throw new SpeechProviderError('auth', `${provider} has no API key on this connection`);
  return key;
}

/** A provider's confidence as 0–1 (0 when it gave none). */
export function clamp01(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}
