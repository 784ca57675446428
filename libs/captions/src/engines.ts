import type { AppConfig } from '#libs/core';
import type { SpeechEngines } from './captions.service.js';
import { LocalSpeechEngine } from './local.js';
import { createSpeechEngine } from './providers/index.js';

/**
 * The engines of a deployment: each provider's adapter, built per call with the connection's
 * credentials and base URL, and one offline engine (pocketsphinx) for connections made with
 * `--engine local`.
 */
export function createSpeechEngines(config: Pick<AppConfig, 'env' | 'captions'>): SpeechEngines {
  const outboundPolicy = config.env === 'production' ? 'production' : 'development';
  let local: LocalSpeechEngine | undefined;
  return {
    create(provider, engine, connection) {
      if (engine === 'local') return (local ??= new LocalSpeechEngine());
      return createSpeechEngine(provider, {
        credentials: connection?.credentials ?? {},
        ...(connection?.baseUrl ? { baseUrl: connection.baseUrl } : {}),
        outboundPolicy,
        timeoutMs: config.captions.providerTimeoutMs,
        pollIntervalMs: config.captions.pollIntervalMs,
      });
    },
  };
}
