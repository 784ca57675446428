import { join } from 'node:path';
import { Global, Module, type DynamicModule, type FactoryProvider, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { getFlowProducerToken } from '@nestjs/bullmq';
import type { FlowProducer } from 'bullmq';
import type { Redis } from 'ioredis';
import { AssetRefs, AssetsService } from '#libs/assets';
import { AuthService, smsSenderFor } from '#libs/auth';
import { AutoCaptions, captionSources, CaptionsService, captionWorkDir, createSpeechEngines, recordingFetcher, recordingValidators, requireSpeech, TranscriptionRunner, TranscriptionsService } from '#libs/captions';
import { CursorCodec, deriveKey, privateDir, type AppConfig } from '#libs/core';
import { CreditsService } from '#libs/credits';
import type { Orm } from '#libs/db';
import { RenderFeed } from '#libs/events';
import { IntegrationsService } from '#libs/integrations';
import { KeyAuthenticator, KeysService, RequestMeter } from '#libs/keys';
import { MediaProber, rangeReader } from '#libs/media';
import { CampaignsService, MessagingService, StatusCallbacks, statusCallbackUrl } from '#libs/messaging';
import { enqueueCampaignRunners, JobQueues, QueueModule, RunFlows, StillEvents, VIDEO_FLOWS } from '#libs/queue';
import { createRedis, RedisKeys } from '#libs/redis';
import { BullVideoQueue, OrmRenderRepository, RedisSlotLeases, RenderLifecycle, RendersService, RenderSummaries, RenderSweeps, VideoEngineBeacon } from '#libs/renders';
import { createStorage } from '#libs/storage';
import { ContactsService, DriveService, GoogleConsent, GoogleTokens, OffloadPool, SheetsService } from '#libs/suite';
import { httpReachability, storedOrHttp, templateAssets, TemplatesService } from '#libs/templates';
import { VoiceService } from '#libs/voice';
import { sealPlainHeaders, WebhookDeliverer, WebhookDispatcher, WebhookEndpoints, WebhookStore } from '#libs/webhooks';
import { WorkflowRunner, WorkflowsService } from '#libs/workflows';
import { WorkspacePlans, WorkspacesService } from '#libs/workspaces';
import { openAppDatabase } from './database.js';
import type { ProcessRole } from './roles.js';
import { APP_CONFIG, ORM, REDIS, SPEECH_ENGINES, STORAGE, type Token } from './tokens.js';
import { EngineCensus } from './engine-census.js';

/** What a provider is injected by: a class, or a token that names its type. */
type Key<T> = Token<T> | (abstract new (...args: never[]) => T);
/** The values `inject` hands a factory, in order. */
type Values<D extends readonly unknown[]> = { [I in keyof D]: D[I] extends Token<infer T> ? Exclude<T, undefined> : D[I] extends abstract new (...args: never[]) => infer T ? T : never };

/** A factory provider whose factory the compiler checks against what it injects and what it provides. */
export function build<T, const D extends readonly Key<unknown>[]>(provide: Key<T>, inject: D, useFactory: (...deps: Values<D>) => T | Promise<T>): FactoryProvider<T> {
  return { provide, inject: [...inject], useFactory: useFactory as (...args: unknown[]) => T | Promise<T> };
}

/**
 * Releases what the process opened, once, in this order: queued sign-in codes sent (5 s at most),
 * the render feed's subscriber, the offload threads, the Redis connection, the database. Nest calls
 * it when the application closes; the worker calls it first, bounded (WorkerModule).
 */
export class ServicesCloser implements OnApplicationShutdown {
  private closing?: Promise<void>;

  constructor(
    private readonly auth: AuthService,
    private readonly feed: RenderFeed,
    private readonly offload: OffloadPool,
    private readonly redis: Redis,
    private readonly orm: Orm,
  ) {}

  close(): Promise<void> {
    return (this.closing ??= this.release());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private async release(): Promise<void> {
    await this.auth.sendsSettled(5000);
    this.feed.close();
    await this.offload.close();
    this.redis.disconnect();
    await this.orm.close(true);
  }
}

/** The libs' services every process may use, each built once from the configuration and the shared infrastructure. */
function services(config: AppConfig, role: ProcessRole): Provider[] {
  return [
    { provide: APP_CONFIG, useValue: config },
    // The data folder is this user's alone (issue 28); the database is opened and migrated, then any webhook
    // header value stored in clear before issue 28 is sealed (a data step the migrations cannot do: the key derives from APP_SECRET).
    build(ORM, [], async () => {
      privateDir(config.dataDir);
      const orm = await openAppDatabase(config.database);
      await sealPlainHeaders(orm, deriveKey(config.appSecret, 'encryption'));
      return orm;
    }),
    // createRedis connects on the first command: a process that never sends one (a CLI command on the database only) opens no connection.
    build(REDIS, [], () => createRedis(config, role.name, role.redis)),
    build(RedisKeys, [], () => new RedisKeys(config.redisPrefix)),
    build(STORAGE, [], () => createStorage(config)),
    /** Signs the page tokens of lists. */
    build(CursorCodec, [], () => new CursorCodec(deriveKey(config.appSecret, 'cursor'))),
    build(WorkspacesService, [ORM, REDIS, RedisKeys], (orm, redis, keys) => new WorkspacesService(orm, redis, keys, config)),
    build(WorkspacePlans, [ORM], (orm) => new WorkspacePlans(orm)),
    build(KeysService, [ORM, REDIS, RedisKeys], (orm, redis, keys) => new KeysService(orm, redis, keys, config)),
    build(KeyAuthenticator, [ORM, REDIS, RedisKeys, KeysService], (orm, redis, keys, apiKeys) => new KeyAuthenticator(orm, redis, keys, apiKeys)),
    build(RequestMeter, [REDIS, RedisKeys], (redis, keys) => new RequestMeter(redis, keys, config.rateLimitMultiplier)),
    build(AuthService, [ORM, REDIS, RedisKeys], (orm, redis, keys) => new AuthService(orm, redis, keys, config, smsSenderFor(config, orm, role.sms))),
    build(CreditsService, [ORM], (orm) => new CreditsService(orm, { lowThreshold: config.creditsLowThreshold })),
    build(AssetsService, [ORM, STORAGE], (orm, storage) => new AssetsService(orm, storage)),
    build(TemplatesService, [ORM, STORAGE, AssetsService], (orm, storage, assets) => new TemplatesService(orm, {
      policy: config.env, reachability: storedOrHttp(storage, httpReachability(config.env)), assets: templateAssets(assets), storage,
    })),
    build(IntegrationsService, [ORM], (orm) => new IntegrationsService(orm, config)),
    build(VoiceService, [IntegrationsService, AssetsService, STORAGE], (integrations, assets, storage) => new VoiceService({ integrations, assets, storage, config })),
    build(OrmRenderRepository, [ORM, CreditsService], (orm, credits) => new OrmRenderRepository(orm, credits)),
    build(RenderLifecycle, [OrmRenderRepository, STORAGE], (renders, storage) => new RenderLifecycle(renders, storage)),
    // The stale renders' sweeps (the worker's `system` queue).
    build(RenderSweeps, [OrmRenderRepository, RenderLifecycle, STORAGE], (renders, lifecycle, storage) => new RenderSweeps(renders, lifecycle, storage)),
    // Whether a worker's video engine runs (its heartbeat in Redis): the worker beats, the API reads.
    build(VideoEngineBeacon, [REDIS, RedisKeys], (redis, keys) => new VideoEngineBeacon(redis, keys)),
    // Which offline engines the workers run: each worker reports, the dashboard reads.
    build(EngineCensus, [REDIS, RedisKeys], (redis, keys) => new EngineCensus(redis, keys)),
    // A workspace's video slots (a Lua step each).
    build(RedisSlotLeases, [REDIS, RedisKeys], (redis, keys) => new RedisSlotLeases(redis, keys)),
    build(RenderSummaries, [ORM, RenderLifecycle], (orm, lifecycle) => new RenderSummaries(orm, lifecycle)),
    build(MessagingService, [ORM, IntegrationsService, RenderSummaries], (orm, integrations, renders) => new MessagingService({
      orm, integrations, config, timeoutMs: config.messaging.timeoutMs, retryDelaysMs: config.messaging.retryDelaysMs,
      statusCallbackUrl: statusCallbackUrl(config), render: (workspaceId, id) => renders.of(workspaceId, id),
    })),
    // Worker threads for CPU-heavy transforms of large payloads (a big sheet read), started on first use.
    build(OffloadPool, [], () => new OffloadPool({ threads: config.offloadThreads })),
    build(GoogleTokens, [IntegrationsService, REDIS, RedisKeys], (integrations, redis, redisKeys) => new GoogleTokens({ integrations, redis, redisKeys, config })),
    build(SheetsService, [IntegrationsService, REDIS, RedisKeys, GoogleTokens, OffloadPool], (integrations, redis, redisKeys, tokens, offload) =>
      new SheetsService({ integrations, redis, redisKeys, config, tokens, offload })),
    build(DriveService, [IntegrationsService, REDIS, RedisKeys, GoogleTokens, AssetsService, STORAGE], (integrations, redis, redisKeys, tokens, assets, storage) =>
      new DriveService({ integrations, redis, redisKeys, config, tokens, assets, storage })),
    build(GoogleConsent, [IntegrationsService, REDIS, RedisKeys], (integrations, redis, redisKeys) => new GoogleConsent({ integrations, redis, redisKeys, config })),
    build(ContactsService, [IntegrationsService, REDIS, RedisKeys, GoogleTokens], (integrations, redis, redisKeys, tokens) =>
      new ContactsService({ integrations, redis, redisKeys, config, tokens })),
    build(TranscriptionsService, [ORM, STORAGE], (orm, storage) => new TranscriptionsService(orm, storage)),
    build(SPEECH_ENGINES, [], () => createSpeechEngines(config)),
    // The worker's half of transcriptions.
    build(TranscriptionRunner, [TranscriptionsService, IntegrationsService, SPEECH_ENGINES, STORAGE, AssetsService, ORM], (transcriptions, integrations, engines, storage, assets, orm) =>
      new TranscriptionRunner({
        transcriptions, integrations, engines, storage, sources: captionSources(assets, orm),
        fetch: recordingFetcher(config, storage), workDir: captionWorkDir(config),
      })),
    // The worker's `alias://` captions: transcribed in the video job itself (no queue in between); a URL
    // read within a day whose validators a HEAD finds unchanged is answered from the cache (captions-url-cache).
    build(AutoCaptions, [IntegrationsService, TranscriptionsService, SPEECH_ENGINES, AssetsService, ORM, TranscriptionRunner, STORAGE], (integrations, transcriptions, engines, assets, orm, runner, storage) =>
      new AutoCaptions({ integrations, transcriptions, engines, sources: captionSources(assets, orm), runner, storage, checkUrl: recordingValidators(config) })),
    build(WebhookStore, [ORM], (orm) => new WebhookStore(orm)),
    build(WebhookDeliverer, [WebhookStore], (store) => new WebhookDeliverer(store, config)),
    build(WebhookEndpoints, [ORM, WebhookStore, WebhookDeliverer, REDIS, WorkspacePlans], (orm, store, deliverer, redis, plans) =>
      new WebhookEndpoints(orm, store, deliverer, redis, plans, config)),
    // The live feed of render events and progress (Redis pub/sub; the API's streams subscribe to it).
    build(RenderFeed, [REDIS, RedisKeys], (redis, keys) => new RenderFeed(redis, keys)),
    build(WebhookDispatcher, [ORM, WebhookStore, REDIS, WorkspacePlans, RenderFeed], (orm, store, redis, plans, feed) =>
      new WebhookDispatcher(orm, store, redis, plans, config, feed)),
    // `length: "auto"` media measured by range reads, a few at once per process, what it learnt reused per workspace.
    build(MediaProber, [STORAGE], (storage) => new MediaProber(rangeReader(config, storage), { dir: join(config.dataDir, 'probe') })),
    build(ServicesCloser, [AuthService, RenderFeed, OffloadPool, REDIS, ORM], (auth, feed, offload, redis, orm) => new ServicesCloser(auth, feed, offload, redis, orm)),
  ];
}

/** The services built on the job queues (the API and the worker): renders, captions, workflows and campaigns. */
function queued(config: AppConfig): Provider[] {
  return [
    StillEvents,
    RunFlows,
    // A video's chunk flows and their shared state.
    build(BullVideoQueue, [REDIS, RedisKeys, JobQueues, getFlowProducerToken(VIDEO_FLOWS) as Token<FlowProducer>], (redis, keys, queues, flows) => new BullVideoQueue(redis, keys, queues, flows)),
    build(RendersService, [ORM, CreditsService, RenderLifecycle, TemplatesService, STORAGE, JobQueues, StillEvents, VideoEngineBeacon, MediaProber, AssetsService, IntegrationsService],
      (orm, credits, lifecycle, templates, storage, queues, stills, beacon, prober, assets, integrations) => new RendersService({
        orm, credits, lifecycle, templates, storage, env: config.env, queues, stillEvents: () => stills.ready(),
        videoAvailable: () => beacon.alive(),
        probeDurations: (workspaceId, sources) => prober.durations(workspaceId, sources),
        assetRefs: new AssetRefs(assets, storage),
        speechReady: (workspaceId, plan) => requireSpeech(integrations, workspaceId, plan),
      })),
    build(CaptionsService, [IntegrationsService, TranscriptionsService, SPEECH_ENGINES, AssetsService, ORM, JobQueues], (integrations, transcriptions, engines, assets, orm, queues) =>
      new CaptionsService({
        integrations, transcriptions, engines, sources: captionSources(assets, orm), checkUrl: recordingValidators(config),
        enqueue: async (id) => {
          await queues.add('transcription.run', { transcriptionId: id }, { jobId: id });
        },
      })),
    build(WorkflowsService, [ORM, TemplatesService, IntegrationsService, SheetsService, MessagingService, RunFlows], (orm, templates, integrations, sheets, messaging, flows) =>
      new WorkflowsService({ orm, templates, integrations, sheets, messaging, enqueue: (runId, round, rowIds) => flows.enqueue(runId, round, rowIds) })),
    // Workflow rows (the worker): renders through RendersService, steps through the suite and messaging services.
    build(WorkflowRunner, [ORM, RendersService, IntegrationsService, SheetsService, DriveService, MessagingService], (orm, renders, integrations, sheets, drive, messaging) =>
      new WorkflowRunner({ orm, renders, integrations, sheets, drive, messaging })),
    // Broadcast campaigns: the API creates them, the worker runs them.
    build(CampaignsService, [ORM, MessagingService, IntegrationsService, REDIS, RedisKeys, WorkspacePlans, JobQueues], (orm, messaging, integrations, redis, redisKeys, plans, queues) =>
      new CampaignsService({
        orm, messaging, integrations, redis, redisKeys, plans, attemptTimeoutMs: config.messaging.timeoutMs,
        enqueue: (campaignId, workspaceId, runners) => enqueueCampaignRunners(queues, campaignId, workspaceId, runners),
      })),
    // The providers' delivery statuses (the API's status-callback routes), a campaign's recipients among them.
    build(StatusCallbacks, [IntegrationsService, CampaignsService], (integrations, campaigns) => new StatusCallbacks({ integrations, campaigns })),
  ];
}

/**
 * The one container of a process (API, worker or CLI): the libs' services as providers, each built
 * once by Nest from what it injects, for every module of the process to inject (global). The role
 * says where the processes differ (PROCESS_ROLES); with queues, it also registers them (libs/queue).
 */
@Global()
@Module({})
export class ServicesModule {
  static forRoot(config: AppConfig, role: ProcessRole): DynamicModule {
    const providers = [...services(config, role), ...(role.queues ? queued(config) : [])];
    return {
      module: ServicesModule,
      global: true,
      imports: role.queues ? [QueueModule.forRoot(config, { producer: role.queues === 'producer' })] : [],
      providers,
      exports: providers.map((p) => ('provide' in p ? p.provide : p)),
    };
  }
}
