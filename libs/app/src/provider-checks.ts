import { createSpeechEngine } from '#libs/captions';
import { ApiError, type AppConfig } from '#libs/core';
import { offlineEngine, ProviderError, type IntegrationProvider } from '#libs/integrations';
import { ElevenLabsEngine } from '#libs/voice';

/** The providers connected by an API key from the dashboard's forms (issue 29). */
export const KEYED_PROVIDERS = ['voice-provider', 'speech-alpha', 'speech-beta', 'speech-gamma'] as const;
export type KeyedProvider = (typeof KEYED_PROVIDERS)[number];

/** How long a check may take. */
const CHECK_MS = 15_000;

/**
 * One cheap call to `provider` with these credentials (issue 29: a connect form checks the key before
 * it is saved, the Test button checks a connection): ElevenLabs' model list, Deepgram's projects,
 * AssemblyAI's transcript list, Google's operations. What the provider answered when it refused:
 * 422 on `apiKey` for refused credentials, 502 PROVIDER_ERROR or 503 PROVIDER_UNAVAILABLE otherwise.
 */
export async function checkProvider(config: Pick<AppConfig, 'env'>, provider: KeyedProvider, credentials: { apiKey?: string; accessToken?: string }, baseUrl: string | null): Promise<void> {
  const signal = AbortSignal.timeout(CHECK_MS);
  const options = { credentials, outboundPolicy: config.env, timeoutMs: CHECK_MS, ...(baseUrl ? { baseUrl } : {}) };
  try {
    if (provider === 'voice-provider') await new ElevenLabsEngine(options).models(signal);
    else await createSpeechEngine(provider, options).check?.(signal);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'auth') throw new ApiError('VALIDATION_FAILED', `${provider} refused the key: ${err.message}`, { errors: { apiKey: [`the provider answered: ${err.message}`] } });
    if (err.kind === 'unavailable') throw new ApiError('PROVIDER_UNAVAILABLE', `${provider} could not be checked: ${err.message}`);
    throw new ApiError('PROVIDER_ERROR', `${provider} answered the check: ${err.message}`);
  }
}

/** A connection's offline engine, checked as the dashboard's Test button asks: its programs are on this machine. */
export function checkOffline(provider: IntegrationProvider): void {
  const local = offlineEngine(provider);
  if (local.state !== 'available') throw new ApiError('PROVIDER_UNAVAILABLE', `The offline engine of ${provider} is not on this machine${local.missing.length ? `: ${local.missing.join(', ')} missing` : ''}`);
}
