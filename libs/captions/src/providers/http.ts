import { ProviderCall, type ErrorReader } from '#libs/integrations';
import type { SpeechEngineOptions, SpeechProvider } from '../speech.js';

export { DEFAULT_TIMEOUT_MS, kindOfStatus, stringAt, type ErrorReader, type ProviderAnswer, type ProviderRequest } from '#libs/integrations';

/** A finished transcript (every word with its times) is read up to this size: hours of speech. */
export const RESULT_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * One transcription's conversation with a speech provider: libs/integrations' ProviderCall
 * (SSRF-checked, pinned, one deadline, capped answers, credentials scrubbed), whose `rejected`
 * refusals name the recording.
 */
export class SpeechCall extends ProviderCall {
  constructor(provider: SpeechProvider, baseUrl: string, options: SpeechEngineOptions, signal: AbortSignal, readError: ErrorReader) {
    super(provider, baseUrl, options, signal, readError, 'the recording');
  }
}
