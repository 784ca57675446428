import { createHash } from 'node:crypto';
import type { RecognitionSettings, SpeechProvider } from './speech.js';

/**
 * The cache key of a recognition (docs/captions.md "The cache"): the recording's bytes (their sha256)
 * and everything that changes which words come back — provider, engine, language(s), model, diarize,
 * keywords, punctuation, profanity filter. Cue settings are not part of it: re-cutting is free.
 */
export function recognitionCacheKey(audioHash: string, provider: SpeechProvider, engine: 'provider' | 'local', s: RecognitionSettings): string {
  const canonical = JSON.stringify([
    'v1', audioHash, provider, engine, s.languageCode.toLowerCase(), [...s.alternativeLanguageCodes].map((c) => c.toLowerCase()).sort(),
    s.model, s.diarize, [...s.keywords].sort(), s.punctuation, s.filterProfanity,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}
