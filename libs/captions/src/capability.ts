import type { RecognitionSettings, SpeechEngine } from './speech.js';

/** What is known of a recording before it is read (an asset's record) or after (a downloaded file). */
export interface RecordingInfo {
  kind: 'audio' | 'video';
  format: string;
  sizeBytes: number;
  /** Seconds, when known. */
  durationSec?: number;
}

/** Whether an engine's languages include `code` (same language: `en-AU` is read by an engine listing `en` or `en-US`). */
export function speaksLanguage(engine: Pick<SpeechEngine, 'languages'>, code: string): boolean {
  const primary = code.toLowerCase().split(/[-_]/)[0];
  return engine.languages.some((l) => l.code.toLowerCase() === code.toLowerCase() || l.code.toLowerCase().split(/[-_]/)[0] === primary);
}

/**
 * Why an engine cannot take a request (empty: it can), in words a user can act on. Used to refuse a
 * named provider (422 naming those that can) and to pick the default one (§4.3 `provider`).
 */
export function refusals(engine: Pick<SpeechEngine, 'support' | 'formats' | 'languages' | 'maxDurationSec'>, settings: RecognitionSettings, file: RecordingInfo | null): string[] {
  const { support } = engine;
  const out: string[] = [];
  if (file) {
    if (file.kind === 'video' && !support.video) out.push('does not read video files (send the audio, or a provider that reads video)');
    else if (!engine.formats.includes(file.format)) out.push(`does not read ${file.format} files (it reads ${engine.formats.join(', ')})`);
    if (file.sizeBytes > support.maxBytes) out.push(`takes files up to ${Math.floor(support.maxBytes / 1024 / 1024)} MB`);
    if (engine.maxDurationSec !== undefined && file.durationSec !== undefined && file.durationSec > engine.maxDurationSec) {
      out.push(`takes recordings up to ${engine.maxDurationSec} seconds long`);
    }
  }
  if (settings.languageCode === 'auto') {
    if (!support.autoLanguage) out.push('does not detect the language (name one in languageCode)');
  } else if (!speaksLanguage(engine, settings.languageCode)) {
    out.push(`does not recognise ${settings.languageCode}`);
  }
  if (settings.alternativeLanguageCodes.length && !support.multiLanguage) out.push('does not take alternativeLanguageCodes');
  if (settings.diarize && !support.diarize) out.push('does not label speakers (diarize)');
  if (settings.keywords.length && !support.keywords) out.push('does not take keywords');
  if (settings.filterProfanity && !support.profanityFilter) out.push('does not filter profanity');
  return out;
}
