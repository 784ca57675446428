import { ApiError, dependencyUnavailable, type KeyMode } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import type { UrlValidators } from '#libs/media';
import { allowed, type ConnectionCredentials, type IntegrationConnection, type IntegrationsService } from '#libs/integrations';
import { refusals, type RecordingInfo } from './capability.js';
import { recognitionCacheKey } from './cache-key.js';
import type { CueSettings, TranscriptionRoute, TranscriptionSource } from './entities.js';
import { SPEECH_PROVIDERS, type RecognitionSettings, type SpeechEngine, type SpeechLanguage, type SpeechModel, type SpeechProvider, type SpeechSupport } from './speech.js';
import type { CacheStats, TranscriptionsService, TranscriptionView } from './transcriptions.service.js';
import { unchanged, URL_MEMORY_MS } from './url-memory.js';

/** Builds the engine behind a provider: the provider's API with a connection's credentials, or the offline engine. */
export interface SpeechEngines {
  create(provider: SpeechProvider, engine: 'provider' | 'local', connection?: { credentials: ConnectionCredentials; baseUrl: string | null }): SpeechEngine;
}

/** A source the API can describe before anything is read (an asset's or a render's record). */
export interface SourceLookup {
  /** Asset (own or stock) → what it is; throws 404 ASSET_NOT_FOUND / 422 when it is not a ready audio or video. */
  asset(workspaceId: string, id: string): Promise<RecordingInfo>;
  /** Render → its audio track as the engine will get it; throws 404 RENDER_NOT_FOUND / 422. */
  render(workspaceId: string, id: string): Promise<RecordingInfo>;
}

export interface CaptionRequest {
  /** The caller's mode (issue 28; a render's, for its auto-captions): the transcription's, and in test mode the offline engine transcribes, whatever the connection's. */
  mode: KeyMode;
  route: TranscriptionRoute;
  source: TranscriptionSource;
  provider?: SpeechProvider;
  /** languageCode undefined: `auto` where the provider detects, else en-US. */
  settings: Omit<RecognitionSettings, 'languageCode'> & { languageCode?: string };
  cueOptions: CueSettings;
  /** false and `fresh` force a new transcription. */
  cache: boolean | 'fresh';
  save: boolean;
  name?: string | null;
}

export interface ProviderView {
  slug: SpeechProvider;
  name: string;
  connected: boolean;
  account: string | null;
  recommended: boolean;
  engine: 'provider' | 'local';
  status: 'connected' | 'reauth_required' | 'not_connected';
  support: SpeechSupport;
}

export interface ProviderOptions {
  provider: SpeechProvider;
  name: string;
  support: SpeechSupport;
  languages: SpeechLanguage[];
  models: SpeechModel[];
}

export const PROVIDER_NAMES: Record<SpeechProvider, string> = {
  'speech-alpha': 'Speech Alpha (Deepgram-compatible)',
  'speech-beta': 'Speech Beta (AssemblyAI-compatible)',
  'speech-gamma': 'Speech Gamma (Google Cloud Speech-compatible)',
};

/** What the generate routes answer: 200 with the done transcription (a cache hit), or 202 queued. */
export interface Generated {
  status: 200 | 202;
  transcription: TranscriptionView;
}

/** A workspace's speech connections by provider. */
async function speechConnections(integrations: IntegrationsService, workspaceId: string): Promise<Map<SpeechProvider, IntegrationConnection>> {
  const rows = await integrations.list(workspaceId);
  return new Map(rows.filter((r): r is IntegrationConnection & { provider: SpeechProvider } => (SPEECH_PROVIDERS as readonly string[]).includes(r.provider)).map((r) => [r.provider, r]));
}

/**
 * The engine a connection transcribes with in a mode (the port): its own in live mode; in test mode
 * always the offline one (issue 28: a test key sends no recording to a provider and spends nothing of
 * its account), so a test transcription is recorded, cached and run as `local`.
 */
export function engineIn(mode: KeyMode, connection: Pick<IntegrationConnection, 'engine'> | undefined): 'provider' | 'local' {
  return mode === 'test' ? 'local' : (connection?.engine ?? 'provider');
}

/** The plan and the connection checks (402, then 409); answers the live (connected, not lapsed) providers. */
function requireConnection(integrations: IntegrationsService, plan: Plan, connections: Map<SpeechProvider, IntegrationConnection>, provider: SpeechProvider | undefined): SpeechProvider[] {
  allowed(plan, provider ?? SPEECH_PROVIDERS[0]);
  const live = SPEECH_PROVIDERS.filter((p) => connections.get(p)?.status === 'connected');
  if (provider) {
    integrations.usable(connections.get(provider), provider);
  } else if (!live.length) {
    const lapsed = SPEECH_PROVIDERS.find((p) => connections.has(p));
    if (lapsed) integrations.usable(connections.get(lapsed), lapsed);
    throw new ApiError('INTEGRATION_NOT_CONNECTED', `No speech provider is connected to this workspace (${SPEECH_PROVIDERS.join(', ')}); connect one in the dashboard (or \`integration:connect\`, \`--engine local\` for the offline engine)`);
  }
  return live;
}

/** 402/409 unless the workspace can transcribe now (a render with `alias://` captions asks before anything is held). */
export async function requireSpeech(integrations: IntegrationsService, workspaceId: string, plan: Plan): Promise<void> {
  requireConnection(integrations, plan, await speechConnections(integrations, workspaceId), undefined);
}

/**
 * The captions API (§4.3; docs/captions.md): which providers a workspace has, their options, and a
 * generate request turned into a transcription — answered at once from the cache when the
 * recording is known, else queued for the worker (`enqueue`).
 */
export class CaptionsService {
  constructor(private readonly deps: {
    integrations: IntegrationsService;
    transcriptions: TranscriptionsService;
    engines: SpeechEngines;
    sources: SourceLookup;
    enqueue: (transcriptionId: string) => Promise<void>;
    /** The validators an audioUrl answers now (a HEAD through the outbound rules); none: a URL is never answered from the cache here. */
    checkUrl?: (url: string) => Promise<UrlValidators>;
  }) {}

  private connections(workspaceId: string): Promise<Map<SpeechProvider, IntegrationConnection>> {
    return speechConnections(this.deps.integrations, workspaceId);
  }

  /** The engine a provider answers with for this workspace (its connection's, else the provider's API). */
  private engineOf(provider: SpeechProvider, connection: IntegrationConnection | undefined, mode: KeyMode = 'live'): SpeechEngine {
    return this.deps.engines.create(provider, engineIn(mode, connection));
  }

  async providers(workspaceId: string): Promise<{ providers: ProviderView[]; connected: number; cache: CacheStats }> {
    const connections = await this.connections(workspaceId);
    const recommended = SPEECH_PROVIDERS.find((p) => connections.get(p)?.status === 'connected');
    const providers = SPEECH_PROVIDERS.map((slug): ProviderView => {
      const c = connections.get(slug);
      return {
        slug, name: PROVIDER_NAMES[slug], connected: c?.status === 'connected', account: c ? (c.accountEmail ?? c.accountName ?? null) : null,
        recommended: slug === recommended, engine: c?.engine ?? 'provider', status: c?.status ?? 'not_connected', support: this.engineOf(slug, c).support,
      };
    });
    return { providers, connected: providers.filter((p) => p.connected).length, cache: await this.deps.transcriptions.stats(workspaceId) };
  }

  /** A provider's options; none named: the default (the first connected one, in preference order). */
  async options(workspaceId: string, provider?: SpeechProvider): Promise<ProviderOptions> {
    const connections = await this.connections(workspaceId);
    const slug = provider ?? SPEECH_PROVIDERS.find((p) => connections.get(p)?.status === 'connected') ?? SPEECH_PROVIDERS[0];
    const engine = this.engineOf(slug, connections.get(slug));
    const languages = engine.support.autoLanguage ? [{ code: 'auto', label: 'Detect the language' }, ...engine.languages] : [...engine.languages];
    return { provider: slug, name: PROVIDER_NAMES[slug], support: engine.support, languages, models: engine.models.map((m) => ({ ...m })) };
  }

  /**
   * The recording's hash when it is known before it is read: an asset's or a render's (their bytes
   * never change), or what the worker read at an audioUrl within URL_MEMORY_MS — `current` then asks
   * the URL (a HEAD) whether its validators are unchanged; no answer, or another, is no hit.
   */
  private async knownRecording(workspaceId: string, source: TranscriptionSource): Promise<{ hash: string; current: () => Promise<boolean> } | null> {
    if (source.kind !== 'audioUrl') {
      const hash = await this.deps.transcriptions.knownAudioHash(workspaceId, source);
      return hash ? { hash, current: async () => true } : null;
    }
    const { checkUrl } = this.deps;
    if (!checkUrl) return null;
    const memory = await this.deps.transcriptions.rememberedUrl(workspaceId, source.value, new Date(Date.now() - URL_MEMORY_MS));
    if (!memory) return null;
    return {
      hash: memory.hash,
      current: () => checkUrl(source.value).then((now) => unchanged(memory.validators, now), () => false),
    };
  }

  async generate(workspaceId: string, plan: Plan, req: CaptionRequest): Promise<Generated> {
    const { transcriptions, sources } = this.deps;
    const connections = await this.connections(workspaceId);
    // §7 order after auth: the plan (402), the connection (409), then the request's own content.
    const live = requireConnection(this.deps.integrations, plan, connections, req.provider);
    const file = req.source.kind === 'assetId' ? await sources.asset(workspaceId, req.source.value)
      : req.source.kind === 'renderId' ? await sources.render(workspaceId, req.source.value) : null;
    if (req.route === 'speech-gamma' && file?.kind === 'video') {
      throw new ApiError('VALIDATION_FAILED', 'assetId: a video file is refused on this path (MP3, WAV, FLAC or OGG); POST /v1/captions transcribes videos', {
        errors: { assetId: ['is a video; this path takes audio only (MP3, WAV, FLAC, OGG)'] },
      });
    }
    const settingsFor = (engine: SpeechEngine): RecognitionSettings => ({
      ...req.settings, languageCode: req.settings.languageCode ?? (engine.support.autoLanguage ? 'auto' : 'en-US'),
    });
    const whyNot = (p: SpeechProvider, mode = req.mode) => {
      const engine = this.engineOf(p, connections.get(p), mode);
      return refusals(engine, settingsFor(engine), file);
    };
    const able = () => SPEECH_PROVIDERS.filter((p) => whyNot(p).length === 0);
    const refuse = (provider: SpeechProvider | null, reasons: string[]) => {
      const can = able();
      const named = can.map((p) => `${p}${connections.get(p)?.status === 'connected' ? ' (connected)' : ''}`);
      // Test mode: every provider is the offline engine; say which providers would take it in live mode.
      const liveOnly = req.mode === 'test' ? SPEECH_PROVIDERS.filter((p) => whyNot(p, 'live').length === 0) : [];
      const inTest = req.mode === 'test' ? ` In test mode every speech provider is the offline engine (pocketsphinx, en-US)${liveOnly.length ? `; in live mode ${liveOnly.join(', ')} can take it: use a live key` : ''}.` : '';
      throw new ApiError('VALIDATION_FAILED', `${provider ? `${provider} cannot take this request: ${reasons.join('; ')}` : 'No connected speech provider can take this request'}. ${can.length ? `Providers that can: ${named.join(', ')}` : 'No provider can: change the settings'}${inTest}`, {
        errors: { provider: [can.length ? `must be one of ${can.join(', ')} for this request` : `no provider can take this request as it is${liveOnly.length ? ` in test mode (live mode only: ${liveOnly.join(', ')})` : ''}`] },
      });
    };

    let provider: SpeechProvider;
    if (req.provider) {
      provider = req.provider;
      const reasons = whyNot(provider);
      if (reasons.length) refuse(provider, reasons);
    } else {
      const chosen = live.find((p) => whyNot(p).length === 0);
      if (!chosen) refuse(null, []);
      provider = chosen as SpeechProvider;
    }

    const connection = connections.get(provider) as IntegrationConnection;
    // The engine recorded is the one that runs (the worker builds it from the record) and keys the cache.
    const engineKind = engineIn(req.mode, connection);
    const engine = this.engineOf(provider, connection, req.mode);
    const settings = settingsFor(engine);
    const cacheMode = req.cache === true ? 'on' : 'fresh';
    const row = await transcriptions.create(workspaceId, {
      mode: req.mode, route: req.route, provider, engine: engineKind, source: req.source, settings, cueOptions: req.cueOptions,
      cacheMode, save: req.save, name: req.name ?? null,
    });
    if (cacheMode === 'on') {
      const known = await this.knownRecording(workspaceId, req.source);
      const hash = known?.hash;
      const hit = hash ? await transcriptions.cached(workspaceId, recognitionCacheKey(hash, provider, engineKind, settings)) : null;
      if (hash && hit && (await known.current())) {
        const done = await transcriptions.complete(row, { hash, sec: hit.audioSec }, hit, true);
        return { status: 200, transcription: transcriptions.view(done) };
      }
    }
    try {
      await this.deps.enqueue(row.id);
    } catch {
      await transcriptions.fail(row.id, { code: 'DEPENDENCY_UNAVAILABLE', message: 'The job queue was unavailable' });
      throw dependencyUnavailable('redis');
    }
    return { status: 202, transcription: transcriptions.view(row) };
  }
}
