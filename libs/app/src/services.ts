import { AssetRefs, AssetsService } from '#libs/assets';
import { join } from 'node:path';
import type { Redis, RedisOptions } from 'ioredis';
import { AuthService, FanoutSmsSender, OutboxSmsSender, TwilioSmsSender, type SmsSender } from '#libs/auth';
import { AutoCaptions, captionSources, CaptionsService, createSpeechEngines, requireSpeech, TranscriptionRunner, TranscriptionsService, type SpeechEngines } from '#libs/captions';
import { ApiError, CursorCodec, deriveKey, privateDir, type AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { RenderFeed } from '#libs/events';
import { forWorkspace, type Orm } from '#libs/db';
import { IntegrationsService } from '#libs/integrations';
import { KeyAuthenticator, KeysService, RequestMeter } from '#libs/keys';
import { MediaProber, rangeReader, storageAwareFetcher } from '#libs/media';
import { createRedis, RedisKeys } from '#libs/redis';
import { Render, RenderLifecycle, RendersService, type RendersDeps } from '#libs/renders';
import { createStorage, type StorageDriver } from '#libs/storage';
import { httpReachability, storedOrHttp, templateAssets, TemplatesService } from '#libs/templates';
import { ContactsService, DriveService, GoogleConsent, GoogleTokens, OffloadPool, SheetsService, type SheetsDeps } from '#libs/suite';
import { CampaignsService, MessagingService } from '#libs/messaging';
import { VoiceService } from '#libs/voice';
import { sealPlainHeaders, WebhookDeliverer, WebhookDispatcher, WebhookEndpoints, WebhookStore } from '#libs/webhooks';
import { WorkflowRunner, WorkflowsService } from '#libs/workflows';
import { WorkspacePlans, WorkspacesService } from '#libs/workspaces';
import { openAppDatabase } from './database.js';

/** What differs between the processes that compose the services (PROCESS_ROLES). */
export interface ProcessRole {
  /** Names the process's Redis connection in CLIENT LIST (`media-render:<name>`). */
  name: string;
  /** Over createRedis's defaults. */
  redis?: RedisOptions;
  /** Where sign-in codes go: the configured SMS provider, or only the development outbox (the default). */
  sms?: 'provider' | 'outbox';
}

/** The three composition roots side by side: where they differ, they differ here. */
export const PROCESS_ROLES = {
  /** A request that needs Redis while it is down is refused within about a second (one retry; 503 DEPENDENCY_UNAVAILABLE). */
  api: { name: 'api', redis: { maxRetriesPerRequest: 1 }, sms: 'provider' },
  worker: { name: 'worker' },
  /** An operator's command fails fast when Redis is down (one retry, not three) and texts no one (`otp:last` reads the outbox). */
  cli: { name: 'cli', redis: { maxRetriesPerRequest: 1 }, sms: 'outbox' },
} satisfies Record<string, ProcessRole>;

/** The SMS adapter: the configured provider (outside production every message also lands in the development outbox), or the outbox only. */
function smsSender(config: AppConfig, orm: Orm, use: ProcessRole['sms'] = 'outbox'): SmsSender {
  const outbox = new OutboxSmsSender(orm);
  if (use === 'outbox' || config.sms.provider === 'outbox') return outbox;
  const twilio = new TwilioSmsSender(config.sms);
  return config.env === 'production' ? twilio : new FanoutSmsSender([twilio, outbox]);
}

/** What a process that registered the queues adds to renders (the API's Nest BullMQ module): producers and the stills' completion events. */
export type RenderQueues = Pick<RendersDeps, 'queues' | 'stillEvents'>;

/**
 * The libs' services of one process (API, worker or CLI), each built once from the configuration and
 * the shared infrastructure, on first use: a process that never asks for a service never builds it
 * (nor the Redis connection or storage it needs). `close()` releases what was opened.
 */
export class AppServices {
  private readonly built: Partial<AppServices> = {};
  private rendersService?: RendersService;
  private captionsService?: CaptionsService;
  private workflowsService?: WorkflowsService;
  private runner?: WorkflowRunner;
  private campaignsService?: CampaignsService;

  private constructor(
    readonly config: AppConfig,
    /** The database, opened (and migrated) by `open`: every process uses it. */
    readonly orm: Orm,
    private readonly role: ProcessRole,
  ) {}

  /**
   * Opens (and migrates) the database, then seals any webhook header value stored in clear before
   * issue 28 (a data step the schema migrations cannot do: the key derives from APP_SECRET).
   */
  static async open(config: AppConfig, role: ProcessRole): Promise<AppServices> {
    // The data folder is this user's alone (issue 28); what is made in it after (files/, work folders) sits behind it.
    privateDir(config.dataDir);
    const orm = await openAppDatabase(config.database);
    await sealPlainHeaders(orm, deriveKey(config.appSecret, 'encryption'));
    return new AppServices(config, orm, role);
  }

  private once<K extends keyof AppServices>(key: K, build: () => AppServices[K]): AppServices[K] {
    return (this.built[key] ??= build());
  }

  get redis(): Redis {
    return this.once('redis', () => createRedis(this.config, this.role.name, this.role.redis));
  }

  get redisKeys(): RedisKeys {
    return this.once('redisKeys', () => new RedisKeys(this.config.redisPrefix));
  }

  get storage(): StorageDriver {
    return this.once('storage', () => createStorage(this.config));
  }

  /** Signs the page tokens of lists. */
  get cursors(): CursorCodec {
    return this.once('cursors', () => new CursorCodec(deriveKey(this.config.appSecret, 'cursor')));
  }

  get workspaces(): WorkspacesService {
    return this.once('workspaces', () => new WorkspacesService(this.orm, this.redis, this.redisKeys, this.config));
  }

  /** The one read of a workspace's plan (libs/workspaces). */
  get workspacePlans(): WorkspacePlans {
    return this.once('workspacePlans', () => new WorkspacePlans(this.orm));
  }

  get keys(): KeysService {
    return this.once('keys', () => new KeysService(this.orm, this.redis, this.redisKeys, this.config));
  }

  get keyAuthenticator(): KeyAuthenticator {
    return this.once('keyAuthenticator', () => new KeyAuthenticator(this.orm, this.redis, this.redisKeys, this.keys));
  }

  get meter(): RequestMeter {
    return this.once('meter', () => new RequestMeter(this.redis, this.redisKeys, this.config.rateLimitMultiplier));
  }

  get auth(): AuthService {
    return this.once('auth', () => new AuthService(this.orm, this.redis, this.redisKeys, this.config, smsSender(this.config, this.orm, this.role.sms)));
  }

  get credits(): CreditsService {
    return this.once('credits', () => new CreditsService(this.orm, { lowThreshold: this.config.creditsLowThreshold }));
  }

  get templates(): TemplatesService {
    return this.once('templates', () => new TemplatesService(this.orm, {
      policy: this.config.env, reachability: storedOrHttp(this.storage, httpReachability(this.config.env)), assets: templateAssets(this.assets), storage: this.storage,
    }));
  }

  /** Settles renders (the worker; RendersService holds its own). */
  get assets(): AssetsService {
    return this.once('assets', () => new AssetsService(this.orm, this.storage));
  }

  /** Connected accounts: connect, list, and the check integration routes make (`use`). */
  get integrations(): IntegrationsService {
    return this.once('integrations', () => new IntegrationsService(this.orm, this.config));
  }

  /** The voice-provider routes: ElevenLabs' API or espeak-ng offline, voice-overs into the media library (libs/voice). */
  get voice(): VoiceService {
    return this.once('voice', () => new VoiceService({ integrations: this.integrations, assets: this.assets, storage: this.storage, config: this.config }));
  }

  /** The messaging-provider routes: channel accounts, WhatsApp Cloud API / Twilio / SMTP adapters, sent messages and contacts (libs/messaging). */
  get messaging(): MessagingService {
    return this.once('messaging', () => new MessagingService({
      orm: this.orm, integrations: this.integrations, config: this.config,
      timeoutMs: this.config.messaging.timeoutMs, retryDelaysMs: this.config.messaging.retryDelaysMs,
      statusCallbackUrl: (workspaceId, provider) => `${this.config.publicUrl}${this.config.prefix ? `/${this.config.prefix}` : ''}/v1/integrations/messaging-provider/status/${provider}/${workspaceId}`,
      render: async (workspaceId, id) => {
        const row = await forWorkspace(this.orm, workspaceId).findOne(Render, { id });
        if (!row) throw new ApiError('RENDER_NOT_FOUND', `No render ${id} in this workspace`);
        return { status: row.status, kind: row.kind, format: row.format, url: row.purgedAt ? null : (this.lifecycle.eventData(row).url as string | null) };
      },
    }));
  }

  /** workspace-suite's OAuth access tokens, refreshed once for every concurrent caller (libs/suite). */
  get googleTokens(): GoogleTokens {
    return this.once('googleTokens', () => new GoogleTokens({ integrations: this.integrations, redis: this.redis, redisKeys: this.redisKeys, config: this.config }));
  }

  /** The workspace-suite sheets routes: Drive's spreadsheet list and Sheets v4 (libs/suite, docs/suite.md). */
  get sheets(): SheetsService {
    return this.once('sheets', () => new SheetsService({ ...this.googleDeps, offload: this.offload }));
  }

  /** Worker threads for CPU-heavy transforms of large payloads (a big sheet read), started on first use (libs/core offload.ts). */
  get offload(): OffloadPool {
    return this.once('offload', () => new OffloadPool({ threads: this.config.offloadThreads }));
  }

  /** The workspace-suite Drive routes: files.list, folders, resumable uploads of a URL, imports into the media library (libs/suite, docs/suite.md). */
  get drive(): DriveService {
    return this.once('drive', () => new DriveService({ ...this.googleDeps, config: this.config, assets: this.assets, storage: this.storage }));
  }

  /** The workspace-suite connect flow (authorization code + PKCE) of the CLI (libs/suite consent.ts, docs/suite.md). */
  get googleConsent(): GoogleConsent {
    return this.once('googleConsent', () => new GoogleConsent({ ...this.googleDeps, config: this.config }));
  }

  /** The workspace-suite contacts routes: People v1 connections, search and contact groups (libs/suite, docs/suite.md). */
  get contacts(): ContactsService {
    return this.once('contacts', () => new ContactsService(this.googleDeps));
  }

  private get googleDeps(): SheetsDeps {
    return { integrations: this.integrations, redis: this.redis, redisKeys: this.redisKeys, config: this.config, tokens: this.googleTokens };
  }

  get transcriptions(): TranscriptionsService {
    return this.once('transcriptions', () => new TranscriptionsService(this.orm, this.storage));
  }

  /** The speech engines: the providers' adapters and the offline engine (libs/captions). */
  get speechEngines(): SpeechEngines {
    return this.once('speechEngines', () => createSpeechEngines(this.config));
  }

  /** The worker's half of transcriptions. */
  get transcriptionRunner(): TranscriptionRunner {
    return this.once('transcriptionRunner', () => new TranscriptionRunner({
      transcriptions: this.transcriptions, integrations: this.integrations, engines: this.speechEngines, storage: this.storage,
      sources: captionSources(this.assets, this.orm), fetch: storageAwareFetcher(this.config, this.storage, { maxBytes: this.config.assets.maxBytes, timeoutMs: 120_000 }),
      workDir: join(this.config.dataDir, 'caption-work'),
    }));
  }

  /** The worker's `alias://` captions: transcribed in the video job itself (no queue in between). */
  get autoCaptions(): AutoCaptions {
    return this.once('autoCaptions', () => new AutoCaptions({
      captions: this.captions(async () => undefined), transcriptions: this.transcriptions, runner: this.transcriptionRunner, storage: this.storage,
    }));
  }

  get lifecycle(): RenderLifecycle {
    return this.once('lifecycle', () => new RenderLifecycle(this.orm, this.credits, this.storage));
  }

  get webhookStore(): WebhookStore {
    return this.once('webhookStore', () => new WebhookStore(this.orm));
  }

  get webhookDeliverer(): WebhookDeliverer {
    return this.once('webhookDeliverer', () => new WebhookDeliverer(this.webhookStore, this.config));
  }

  get webhookEndpoints(): WebhookEndpoints {
    return this.once('webhookEndpoints', () => new WebhookEndpoints(this.orm, this.webhookStore, this.webhookDeliverer, this.redis, this.workspacePlans, this.config));
  }

  get webhookDispatcher(): WebhookDispatcher {
    return this.once('webhookDispatcher', () => new WebhookDispatcher(this.orm, this.webhookStore, this.redis, this.workspacePlans, this.config, this.renderFeed));
  }

  /** The live feed of render events and progress (Redis pub/sub; the API's streams subscribe to it). */
  get renderFeed(): RenderFeed {
    return this.once('renderFeed', () => new RenderFeed(this.redis, this.redisKeys));
  }

  /** `length: "auto"` media measured by range reads, a few at once per process, what it learnt reused per workspace (libs/media durations.ts). */
  get mediaProber(): MediaProber {
    return this.once('mediaProber', () => new MediaProber(rangeReader(this.config, this.storage), { dir: join(this.config.dataDir, 'probe') }));
  }

  /** Renders (the API), built once on the first caller's queues. */
  renders(queues: RenderQueues): RendersService {
    const { config } = this;
    return (this.rendersService ??= new RendersService({
      ...queues,
      orm: this.orm, credits: this.credits, lifecycle: this.lifecycle, templates: this.templates, storage: this.storage, env: config.env,
      videoAvailable: async () => (await this.redis.exists(this.redisKeys.videoEngine())) === 1,
      probeDurations: (workspaceId, sources) => this.mediaProber.durations(workspaceId, sources),
      assetRefs: new AssetRefs(this.assets, this.storage),
      speechReady: (workspaceId, plan) => requireSpeech(this.integrations, workspaceId, plan),
    }));
  }

  /** Captions (the API), built once on the first caller's queue. */
  captions(enqueue: (transcriptionId: string) => Promise<void>): CaptionsService {
    return (this.captionsService ??= new CaptionsService({
      integrations: this.integrations, transcriptions: this.transcriptions, engines: this.speechEngines, sources: captionSources(this.assets, this.orm), enqueue,
    }));
  }

  /** Workflows (the API), built once on the first caller's flow producer (libs/workflows, docs/workflows.md). */
  workflows(enqueue: (runId: string, round: number, rowIds: string[]) => Promise<void>): WorkflowsService {
    return (this.workflowsService ??= new WorkflowsService({
      orm: this.orm, templates: this.templates, integrations: this.integrations, sheets: this.sheets, messaging: this.messaging, enqueue,
    }));
  }

  /** Workflow rows and runs (the worker): renders through RendersService on the worker's queues, steps through the suite and messaging services. */
  workflowRunner(queues: RenderQueues): WorkflowRunner {
    return (this.runner ??= new WorkflowRunner({
      orm: this.orm, renders: this.renders(queues), integrations: this.integrations, sheets: this.sheets, drive: this.drive, messaging: this.messaging,
    }));
  }

  /** Broadcast campaigns (libs/messaging), built once on the first caller's queue: the API creates them, the worker runs them. */
  campaigns(enqueue: (campaignId: string, workspaceId: string, runners: number) => Promise<void>): CampaignsService {
    return (this.campaignsService ??= new CampaignsService({
      orm: this.orm, messaging: this.messaging, integrations: this.integrations, redis: this.redis, redisKeys: this.redisKeys, plans: this.workspacePlans,
      attemptTimeoutMs: this.config.messaging.timeoutMs, enqueue,
    }));
  }

  /** Releases what was opened: the Redis connection (if one was made) and the database, once queued sign-in codes are sent (5 s at most). */
  async close(): Promise<void> {
    await this.built.auth?.sendsSettled(5000);
    this.built.renderFeed?.close();
    await this.built.offload?.close();
    this.built.redis?.disconnect();
    await this.orm.close(true);
  }
}

/** The members a Nest module can provide (`fromServices`). */
type Member = Exclude<keyof AppServices, 'renders' | 'captions' | 'workflows' | 'workflowRunner' | 'close'>;

/**
 * One member of the process's AppServices as a Nest factory provider, under its class (the compiler
 * checks that the class is the member's) or under a token: `{ provide, inject: [AppServices], useFactory }`,
 * written out so that libs/app needs no Nest.
 */
export function fromServices<K extends Member>(provide: symbol | (abstract new (...args: never[]) => AppServices[K]), member: K) {
  return { provide, inject: [AppServices], useFactory: (services: AppServices) => services[member] };
}
