import { createSpeechEngine } from '#libs/captions';
import { ApiError, type AppConfig } from '#libs/core';
import { ProviderError } from '#libs/integrations';
import { ElevenLabsEngine } from '#libs/voice';

/** The providers connected by an API key from the dashboard's forms (issue 29). */
export const KEYED_PROVIDERS = ['voice-provider', 'speech-alpha', 'speech-beta', 'speech-gamma'] as const;
export type KeyedProvider = (typeof KEYED_PROVIDERS)[number];

/** How long a check may take. */
const CHECK_MS = 15_000;

/**
 * One cheap call to `provider` with these credentials (issue 29: a connect form checks the key before
 * it is saved, the Test button checks a connection): ElevenLabs' model list, Deepgram's projects,
 * AssemblyAI's transcript list, Google's operations. A check that does not pass is 422 with what the
 * provider answered (or why it could not be reached) on `apiKey`, or on `baseUrl` when one was given.
 */
export async function checkProvider(config: Pick<AppConfig, 'env'>, provider: KeyedProvider, credentials: { apiKey?: string; accessToken?: string }, baseUrl: string | null): Promise<void> {
  const signal = AbortSignal.timeout(CHECK_MS);
  const options = { credentials, outboundPolicy: config.env, timeoutMs: CHECK_MS, ...(baseUrl ? { baseUrl } : {}) };
  try {
    if (provider === 'voice-provider') await new ElevenLabsEngine(options).models(signal);
    else await createSpeechEngine(provider, options).check?.(signal);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    // A check that did not pass is the answer to the form, not a failure of ours: 422 naming the field
    // to change (the key it refused; the base URL it could not be reached at, or the key when it is the public one).
    if (err.kind === 'auth') throw new ApiError('VALIDATION_FAILED', `${provider} refused the key: ${err.message}`, { errors: { apiKey: [`the provider answered: ${err.message}`] } });
    const field = baseUrl ? 'baseUrl' : 'apiKey';
    if (err.kind === 'unavailable') throw new ApiError('VALIDATION_FAILED', `${provider} could not be checked: ${err.message}`, { errors: { [field]: [`the provider could not be checked: ${err.message}`] } });
    throw new ApiError('VALIDATION_FAILED', `${provider} refused the check: ${err.message}`, { errors: { [field]: [`the provider answered: ${err.message}`] } });
  }
}
