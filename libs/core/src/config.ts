import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parseCidrList, type CidrRule } from './ip.js';
import { privateDir, privateFile } from './private-files.js';

export type AppEnv = 'development' | 'production';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgresql'; url: string };

export interface AppConfig {
  env: AppEnv;
  host: string;
  port: number;
  /** API prefix without slashes, e.g. `api`. */
  prefix: string;
  dataDir: string;
  database: DatabaseConfig;
  redisUrl: string;
  /** Prefix of every Redis key and BullMQ queue this deployment owns. */
  redisPrefix: string;
  /** Master secret; key hashes, cursor signatures and at-rest encryption derive from it. */
  appSecret: Buffer;
  trustedProxies: CidrRule[];
  bodyLimitBytes: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `json`: one JSON object a line (production's default); `text`: readable lines (LOG_FORMAT). */
  logFormat: 'json' | 'text';
  /**
   * Prometheus metrics (issue 30): the bearer token `/metrics` asks for (METRICS_TOKEN; unset: no
   * `/metrics` at all), and the worker's listener for it (WORKER_METRICS_PORT, 0: none; on
   * WORKER_METRICS_HOST, loopback by default).
   */
  metrics: { token: string | null; workerPort: number; workerHost: string };
  workerConcurrency: number;
  /** Jobs of the webhooks queue a worker runs at once (I/O bound): an event's first attempts (up to EVENT_SENDS_AT_ONCE sends each, libs/webhooks) or one attempt of one delivery. */
  webhookConcurrency: number;
  /** A delivery attempt's job lock: the attempts a dead worker held are run again by another within about twice this (WEBHOOK_LOCK_MS). */
  webhookLockMs: number;
  /**
   * WEBHOOK_RETRY_DELAYS_MS, development only: the 4 waits between a delivery's 5 attempts instead of
   * §6's 1, 4, 9 and 16 s, so tests of what retries do (not of the schedule) need not wait 30 s; unset: §6's.
   */
  webhookRetryDelaysMs?: number[];
  /** Stills a worker draws at once (libvips uses the cores within each). */
  stillConcurrency: number;
  /** A still's job lock: a still whose worker died is noticed within about twice this, and fails WORKER_LOST (never drawn again). */
  stillLockMs: number;
  /** Workflow rows a worker runs at once (each waits on its render and its providers). */
  workflowConcurrency: number;
  /** The video engine (Remotion + Chromium) in workers: `auto` starts it when Chromium is found. */
  video: { engine: 'auto' | 'on' | 'off'; browserExecutable?: string; bundleDir: string; concurrency: number; lockMs: number; licenseKey?: string; chunkFrames: number; chunkMinFrames: number };
  /** Operator setting: multiplies every plan's per-minute rate (self-hosters with bigger machines; benchmarks). */
  rateLimitMultiplier: number;
  sms: SmsConfig;
  /**
   * SIGN_IN: dashboard sign-in by phone code (`on`, the default) or `off` (send-otp and verify-otp
   * answer 404). In production it needs a real SMS provider: the outbox texts no one (issue 28).
   */
  signIn: boolean;
  /** credits.low fires when available falls below these. */
  creditsLowThreshold: { image: number; video: number };
  /** A render older than this whose hold was never settled is treated as lost. */
  maxRenderAgeSec: number;
  /** Base URL clients reach this deployment at, no trailing slash; stored files are `<publicUrl>/files/<key>`. */
  publicUrl: string;
  storage: StorageConfig;
  /** The media library: the largest upload (ASSET_MAX_BYTES) and assets a worker processes at once. */
  /** `lockMs`: an asset job's lock; an asset whose worker died fails WORKER_LOST within about twice this (ASSET_LOCK_MS). */
  assets: { maxBytes: number; concurrency: number; lockMs: number; stock: boolean };
  /** Transcriptions a worker runs at once (CAPTION_CONCURRENCY); the offline engine takes a core each. */
  captions: { concurrency: number; pollIntervalMs: number; providerTimeoutMs: number };
  /** workspace-suite (Google's APIs): the OAuth client, its endpoints, one call's budget (docs/suite.md). */
  google: GoogleConfig;
  /**
   * messaging-provider (docs/messaging.md): one provider attempt's time limit (MESSAGING_TIMEOUT_MS), the
   * waits before retrying an unavailable provider (MESSAGING_RETRY_DELAYS_MS, comma-separated ms), and
   * the campaign runners a worker runs at once (CAMPAIGN_CONCURRENCY).
   */
  messaging: { timeoutMs: number; retryDelaysMs: number[]; campaignConcurrency: number };
  /** OFFLOAD_THREADS: worker threads for CPU-heavy transforms of large payloads (a big sheet read; libs/suite offload.ts); 0 runs them on the event loop. By default the cores, at most 2 (the main thread keeps its own core busy with I/O). */
  offloadThreads: number;
  /** DASHBOARD_DIR: the built dashboard (index.html + assets/) served at `/`; unset: apps/dashboard/dist of this checkout. */
  dashboardDir: string | null;
}

export interface GoogleConfig {
  /** GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET: the OAuth client refreshing access tokens (unset: a lapsed token cannot be refreshed). */
  clientId: string | null;
  clientSecret: string | null;
  /** GOOGLE_OAUTH_TOKEN_URL: where tokens are refreshed when the connection names no base URL. */
  tokenUrl: string;
  /** GOOGLE_OAUTH_AUTH_URL: the consent page of the authorization-code flow. */
  authUrl: string;
  /** GOOGLE_OAUTH_REDIRECT_URI: where the consent page sends the code (registered with the client); a loopback address by default (the code is read from the browser's address bar). */
  redirectUri: string;
  /** GOOGLE_TIMEOUT_MS: the whole of one Sheets/Drive call, retries and a token refresh included. */
  timeoutMs: number;
}

/** Where rendered outputs and library media are kept (libs/storage, docs/storage.md). */
export type StorageConfig = { driver: 'local'; dir: string } | S3StorageConfig;

/** An S3-compatible bucket (STORAGE_DRIVER=s3): shared by every API and worker of a fleet. */
export interface S3StorageConfig {
  driver: 's3';
  /** Absolute http(s) origin of an S3-compatible server (MinIO…); unset: AWS's regional endpoint. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Static keys: URLs are presigned in-process, synchronously, with them. */
  accessKeyId: string;
  secretAccessKey: string;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint host>/<key>`. */
  forcePathStyle: boolean;
  /** Public base URL of the bucket (a CDN…), no trailing slash: `url(key)` = `<publicUrl>/<key>`; unset: presigned GET URLs. */
  publicUrl?: string;
  /** Lifetime of a presigned URL in seconds (S3's ceiling: 7 days). */
  urlTtlSec: number;
  /** Create the bucket when it is missing (default in development only). */
  createBucket: boolean;
}

export type SmsConfig =
  | { provider: 'outbox' }
  | { provider: 'twilio'; accountSid: string; authToken: string; from: string; baseUrl: string };

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Configuration error: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Stills a worker draws at once unless STILL_CONCURRENCY says otherwise (bench/still-render uses it too). */
export const DEFAULT_STILL_CONCURRENCY = 4;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
  }
  return raw as T;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

/**
 * WEBHOOK_RETRY_DELAYS_MS: exactly 4 waits (a delivery has 5 attempts, §6), for tests in development; production
 * keeps §6's schedule, part of the contract with receivers.
 */
function webhookRetryDelays(env: Env, appEnv: AppEnv): number[] | undefined {
  const raw = env.WEBHOOK_RETRY_DELAYS_MS;
  if (raw === undefined || raw === '') return undefined;
  if (appEnv === 'production') throw new ConfigError('WEBHOOK_RETRY_DELAYS_MS', 'is for tests in development only: production keeps §6\'s retry schedule (1, 4, 9 and 16 s)');
  const waits = delays(env, 'WEBHOOK_RETRY_DELAYS_MS', []);
  if (waits.length !== 4) throw new ConfigError('WEBHOOK_RETRY_DELAYS_MS', `must be exactly 4 comma-separated waits in ms, one before each retry (got "${raw}")`);
  return waits;
}

/** Comma-separated waits in ms (at most 5, each up to a minute). */
function delays(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const parts = raw.split(',').map((x) => x.trim());
  if (parts.length > 5 || parts.some((x) => !/^\d{1,5}$/.test(x) || Number(x) > 60_000)) {
    throw new ConfigError(name, `must be up to 5 comma-separated waits in ms, each at most 60000 (got "${raw}")`);
  }
  return parts.map(Number);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(name, `must be true or false (got "${raw}")`);
  return raw === 'true';
}

function required(env: Env, name: string, why: string): string {
  const raw = env[name];
  if (!raw) throw new ConfigError(name, `is required ${why}`);
  return raw;
}

/** An absolute http(s) URL without query, fragment or credentials, returned without its trailing slash. */
function baseUrl(name: string, raw: string, opts: { path: boolean }): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL (got "${raw}")`);
  if (raw.includes('?') || raw.includes('#')) throw new ConfigError(name, 'must not carry a query or fragment');
  if (url.username || url.password) throw new ConfigError(name, 'must not carry credentials');
  if (!opts.path && url.pathname !== '/') throw new ConfigError(name, `must be an origin without a path (got "${raw}")`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function database(env: Env, dataDir: string): DatabaseConfig {
  const url = env.DATABASE_URL;
  if (!url) return { kind: 'sqlite', file: join(dataDir, 'app.sqlite') };
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return { kind: 'postgresql', url };
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!file) throw new ConfigError('DATABASE_URL', 'names no SQLite file (sqlite:./data/app.sqlite)');
    return { kind: 'sqlite', file: file === ':memory:' ? file : resolve(file) };
  }
  throw new ConfigError('DATABASE_URL', 'must start with postgres://, postgresql:// or sqlite:');
}

/**
 * The master secret. Production must set APP_SECRET (at least 32 bytes of hex or base64);
 * development generates one once and keeps it in the data folder.
 */
function appSecret(env: Env, appEnv: AppEnv, dataDir: string): Buffer {
  const raw = env.APP_SECRET;
  if (raw) {
    const buf = /^[0-9a-f]+$/i.test(raw) && raw.length % 2 === 0 ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (buf.length < 32) throw new ConfigError('APP_SECRET', 'must hold at least 32 bytes (64 hex characters)');
    return buf;
  }
  if (appEnv === 'production') throw new ConfigError('APP_SECRET', 'is required in production');
  const file = join(dataDir, 'app-secret');
  if (existsSync(file)) {
    privateFile(file, { create: false });
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  }
  privateDir(dataDir);
  const secret = randomBytes(32);
  writeFileSync(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' });
  return secret;
}

/**
 * Values written by `npm run up` (the Redis it started, for instance) live in
 * `<DATA_DIR>/local.env`; real environment variables take precedence.
 */
function withLocalEnv(env: Env): Env {
  const dataDir = env.DATA_DIR || './data';
  const file = join(dataDir, 'local.env');
  if (!existsSync(file)) return env;
  const local: Env = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) local[m[1]] = m[2];
  }
  return { ...local, ...env };
}

function sms(env: Env): SmsConfig {
  const provider = oneOf(env, 'SMS_PROVIDER', ['outbox', 'twilio'] as const, 'outbox');
  if (provider === 'outbox') return { provider };
  const need = (name: string) => {
    const v = env[name];
    if (!v) throw new ConfigError(name, 'is required when SMS_PROVIDER=twilio');
    return v;
  };
  const baseUrl = env.TWILIO_API_BASE || 'https://api.twilio.com';
  if (!/^https?:\/\//.test(baseUrl)) throw new ConfigError('TWILIO_API_BASE', 'must be an http(s) URL');
  return { provider, accountSid: need('TWILIO_ACCOUNT_SID'), authToken: need('TWILIO_AUTH_TOKEN'), from: need('TWILIO_FROM'), baseUrl };
}

/** PUBLIC_URL: an absolute http(s) URL without query, fragment or credentials; default from HOST and PORT. */
function publicUrl(env: Env, host: string, port: number): string {
  const raw = env.PUBLIC_URL;
  if (!raw) {
    const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
    return `http://${reachable}:${port}`;
  }
  return baseUrl('PUBLIC_URL', raw, { path: true });
}

/** S3's bucket naming rules: 3–63 lowercase letters, digits, dots and hyphens, a letter or digit at each end. */
const BUCKET = /^(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** S3 refuses presigned URLs valid longer than a week. */
export const MAX_S3_URL_TTL_SEC = 7 * 86_400;

function storage(env: Env, appEnv: AppEnv, dataDir: string): StorageConfig {
  const driver = oneOf(env, 'STORAGE_DRIVER', ['local', 's3'] as const, 'local');
  if (driver === 'local') return { driver, dir: join(dataDir, 'files') };
  const why = 'when STORAGE_DRIVER=s3';
  const bucket = required(env, 'S3_BUCKET', why);
  if (!BUCKET.test(bucket)) throw new ConfigError('S3_BUCKET', `must be 3–63 lowercase letters, digits, dots or hyphens, a letter or digit at each end (got "${bucket}")`);
  const region = env.S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,32}$/.test(region)) throw new ConfigError('S3_REGION', `must be a region name such as us-east-1 (got "${region}")`);
  const endpoint = env.S3_ENDPOINT ? baseUrl('S3_ENDPOINT', env.S3_ENDPOINT, { path: false }) : undefined;
  const publicUrl = env.S3_PUBLIC_URL ? baseUrl('S3_PUBLIC_URL', env.S3_PUBLIC_URL, { path: true }) : undefined;
  return {
    driver,
    ...(endpoint ? { endpoint } : {}),
    bucket,
    region,
    accessKeyId: required(env, 'S3_ACCESS_KEY_ID', why),
    secretAccessKey: required(env, 'S3_SECRET_ACCESS_KEY', why),
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', endpoint !== undefined),
    ...(publicUrl ? { publicUrl } : {}),
    urlTtlSec: integer(env, 'S3_URL_TTL_SEC', MAX_S3_URL_TTL_SEC, 1, MAX_S3_URL_TTL_SEC),
    createBucket: bool(env, 'S3_CREATE_BUCKET', appEnv === 'development'),
  };
}

/** Reads and validates the whole configuration once; throws ConfigError naming the variable. */
export function loadConfig(rawEnv: Env = process.env): AppConfig {
  const env = withLocalEnv(rawEnv);
  const appEnv = oneOf(env, 'APP_ENV', ['development', 'production'] as const, 'development');
  const dataDir = resolve(env.DATA_DIR || './data');
  const redisUrl = env.REDIS_URL;
  if (!redisUrl) throw new ConfigError('REDIS_URL', 'is required (npm run up starts a local Redis and sets it)');
  if (!/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://');
  const prefix = (env.API_PREFIX ?? 'api').replace(/^\/+|\/+$/g, '');
  if (!/^[a-z0-9/_-]*$/i.test(prefix)) throw new ConfigError('API_PREFIX', 'may hold only letters, digits, - _ /');
  const redisPrefix = env.REDIS_PREFIX || 'mr';
  if (!/^[a-z0-9:_-]+$/i.test(redisPrefix)) throw new ConfigError('REDIS_PREFIX', 'may hold only letters, digits, : _ -');
  let trustedProxies: CidrRule[];
  try {
    trustedProxies = parseCidrList(env.TRUSTED_PROXIES ?? '');
  } catch (err) {
    throw new ConfigError('TRUSTED_PROXIES', (err as Error).message);
  }
  if (!isAbsolute(dataDir)) throw new ConfigError('DATA_DIR', 'could not be resolved');
  const host = env.HOST || '127.0.0.1';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const secret = appSecret(env, appEnv, dataDir);
  const smsConfig = sms(env);
  const signIn = oneOf(env, 'SIGN_IN', ['on', 'off'] as const, 'on') === 'on';
  const webhookRetryDelaysMs = webhookRetryDelays(env, appEnv);
  if (appEnv === 'production' && signIn && smsConfig.provider === 'outbox') {
    throw new ConfigError('SMS_PROVIDER', `must be twilio in production${env.SMS_PROVIDER ? '' : ' (it is not set)'}: the outbox texts no one, so no one could sign in. Set SMS_PROVIDER=twilio with TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM, or SIGN_IN=off to run without dashboard sign-in`);
  }
  return {
    env: appEnv,
    host,
    port,
    prefix,
    dataDir,
    database: database(env, dataDir),
    redisUrl,
    redisPrefix,
    appSecret: secret,
    trustedProxies,
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 512 * 1024 * 1024),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, appEnv === 'production' ? 'info' : 'warn'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'text'] as const, appEnv === 'production' ? 'json' : 'text'),
    metrics: { token: env.METRICS_TOKEN || null, workerPort: integer(env, 'WORKER_METRICS_PORT', 0, 0, 65535), workerHost: env.WORKER_METRICS_HOST || '127.0.0.1' },
    workerConcurrency: integer(env, 'WORKER_CONCURRENCY', 2, 1, 64),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 50, 1, 1000),
    // BullMQ's default lock (and stalled check): what a SIGKILLed worker's attempts wait before another takes them.
    webhookLockMs: integer(env, 'WEBHOOK_LOCK_MS', 30_000, 1_000, 600_000),
    ...(webhookRetryDelaysMs ? { webhookRetryDelaysMs } : {}),
    stillConcurrency: integer(env, 'STILL_CONCURRENCY', DEFAULT_STILL_CONCURRENCY, 1, 64),
    stillLockMs: integer(env, 'STILL_LOCK_MS', 15_000, 1_000, 60_000),
    workflowConcurrency: integer(env, 'WORKFLOW_CONCURRENCY', 8, 1, 64),
    video: {
      engine: oneOf(env, 'VIDEO_ENGINE', ['auto', 'on', 'off'] as const, 'auto'),
      ...(env.BROWSER_EXECUTABLE ? { browserExecutable: env.BROWSER_EXECUTABLE } : {}),
      bundleDir: env.VIDEO_BUNDLE_DIR || join(dataDir, 'video-bundle'),
      concurrency: integer(env, 'VIDEO_CONCURRENCY', 1, 1, 16),
      lockMs: integer(env, 'VIDEO_LOCK_MS', 30_000, 1_000, 600_000),
      // Long mp4s are split into chunks of this many frames, rendered by any workers, then joined.
      chunkFrames: integer(env, 'VIDEO_CHUNK_FRAMES', 600, 5, 100_000),
      // Only outputs of more frames than this are chunked (0: never).
      chunkMinFrames: integer(env, 'VIDEO_CHUNK_MIN_FRAMES', 1_200, 0, 10_000_000),
      // A Remotion company licence key (README "Remotion's licence"); unset: no usage events are sent.
      ...(env.REMOTION_LICENSE_KEY ? { licenseKey: env.REMOTION_LICENSE_KEY } : {}),
    },
    rateLimitMultiplier: integer(env, 'RATE_LIMIT_MULTIPLIER', 1, 1, 1_000_000),
    sms: smsConfig,
    signIn,
    creditsLowThreshold: {
      image: integer(env, 'CREDITS_LOW_IMAGE', 10, 0, 1_000_000_000),
      video: integer(env, 'CREDITS_LOW_VIDEO', 2, 0, 1_000_000_000),
    },
    maxRenderAgeSec: integer(env, 'MAX_RENDER_AGE_SEC', 6 * 3600, 60, 30 * 86_400),
    publicUrl: publicUrl(env, host, port),
    storage: storage(env, appEnv, dataDir),
    assets: {
      maxBytes: integer(env, 'ASSET_MAX_BYTES', 200 * 1024 * 1024, 1024, 10 * 1024 * 1024 * 1024),
      concurrency: integer(env, 'ASSET_CONCURRENCY', 2, 1, 32),
      lockMs: integer(env, 'ASSET_LOCK_MS', 30_000, 1_000, 600_000),
      // Seeds the stock library at start (the tests turn it off where they do not use it).
      stock: oneOf(env, 'ASSET_STOCK', ['on', 'off'] as const, 'on') === 'on',
    },
    captions: {
      concurrency: integer(env, 'CAPTION_CONCURRENCY', 2, 1, 32),
      // Between two polls of a provider's job (AssemblyAI, Google's operations).
      pollIntervalMs: integer(env, 'SPEECH_POLL_INTERVAL_MS', 3000, 10, 60_000),
      // The whole of one provider call, polls included.
      providerTimeoutMs: integer(env, 'SPEECH_PROVIDER_TIMEOUT_MS', 10 * 60_000, 1000, 3 * 3600_000),
    },
    dashboardDir: env.DASHBOARD_DIR ? resolve(env.DASHBOARD_DIR) : null,
    offloadThreads: integer(env, 'OFFLOAD_THREADS', Math.min(2, availableParallelism()), 0, 16),
    google: {
      clientId: env.GOOGLE_CLIENT_ID || null,
      clientSecret: env.GOOGLE_CLIENT_SECRET || null,
      tokenUrl: baseUrl('GOOGLE_OAUTH_TOKEN_URL', env.GOOGLE_OAUTH_TOKEN_URL || 'https://oauth2.googleapis.com/token', { path: true }),
      authUrl: baseUrl('GOOGLE_OAUTH_AUTH_URL', env.GOOGLE_OAUTH_AUTH_URL || 'https://accounts.google.com/o/oauth2/v2/auth', { path: true }),
      redirectUri: baseUrl('GOOGLE_OAUTH_REDIRECT_URI', env.GOOGLE_OAUTH_REDIRECT_URI || 'http://127.0.0.1', { path: true }),
      timeoutMs: integer(env, 'GOOGLE_TIMEOUT_MS', 30_000, 100, 600_000),
    },
    messaging: {
      timeoutMs: integer(env, 'MESSAGING_TIMEOUT_MS', 15_000, 100, 120_000),
      retryDelaysMs: delays(env, 'MESSAGING_RETRY_DELAYS_MS', [500, 2000]),
      campaignConcurrency: integer(env, 'CAMPAIGN_CONCURRENCY', 2, 1, 32),
    },
  };
}
