import type { SpeechEngine, SpeechEngineOptions, SpeechProvider } from '../speech.js';
import { AssemblyAiEngine } from './assemblyai.js';
import { DeepgramEngine } from './deepgram.js';
import { GoogleSpeechEngine } from './google.js';

export { ASSEMBLYAI_BASE_URL, AssemblyAiEngine } from './assemblyai.js';
export { DEEPGRAM_BASE_URL, DeepgramEngine } from './deepgram.js';
export { GOOGLE_SPEECH_BASE_URL, GoogleSpeechEngine } from './google.js';
export { DEFAULT_TIMEOUT_MS } from './http.js';

/**
 * The adapter of a remote speech provider, from a connection's credentials. Credentials are
 * only read by `transcribe`, so an engine built with none (`credentials: {}`) serves a
 * provider's options (support, formats, languages, models) for a workspace not connected yet.
 */
export function createSpeechEngine(provider: SpeechProvider, options: SpeechEngineOptions): SpeechEngine {
  switch (provider) {
    case 'speech-alpha':
      return new DeepgramEngine(options);
    case 'speech-beta':
      return new AssemblyAiEngine(options);
    case 'speech-gamma':
      return new GoogleSpeechEngine(options);
    default:
      throw new Error(`Unknown speech provider ${String(provider satisfies never)}`);
  }
}
