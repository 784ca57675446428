import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError, type AppConfig, type GoogleConfig } from '#libs/core';
import { parseJson, ProviderCall, ProviderError, stringAt, type ErrorReader, type IntegrationsService, type ProviderAnswer, type ProviderFailureKind, type ProviderRequest, type UsableConnection } from '#libs/integrations';
import type { RedisKeys } from '#libs/redis';

/**
 * Google's side of workspace-suite: OAuth 2 access tokens (refreshed at the token endpoint once for
 * every concurrent caller) and one authenticated, retried JSON call to Sheets v4 or Drive v3, over
 * libs/integrations' ProviderCall (SSRF-checked, pinned, one deadline, credentials scrubbed).
 *
 * A connection's `baseUrl`, when set, is the root of every Google API it uses (`/v4/spreadsheets`,
 * `/drive/v3/files`, `/v1/people`, `/v1/contactGroups`, `/token`): a gateway, or the loopback fake in tests. Unset: Google's hosts.
 */
export const SHEETS_BASE_URL = 'https://sheets.googleapis.com';
export const DRIVE_BASE_URL = 'https://www.googleapis.com';
export const PEOPLE_BASE_URL = 'https://people.googleapis.com';
export type GoogleApi = 'sheets' | 'drive' | 'people';
const BASE_URLS: Record<GoogleApi, string> = { sheets: SHEETS_BASE_URL, drive: DRIVE_BASE_URL, people: PEOPLE_BASE_URL };
/** An access token this close to its expiry is refreshed before use. */
const EXPIRY_SKEW_MS = 60_000;
/** How long one refresh may hold the lock, and how often a waiting caller looks again. */
const LOCK_MS = 15_000;
const LOCK_POLL_MS = 25;
/** Attempts of a call answered 429 or 5xx (or not at all), and the waits between them. */
export const GOOGLE_ATTEMPTS = 3;
const BACKOFF_MS = [250, 1000];
/** A Retry-After longer than this is not waited for: the caller gets 503 with it instead. */
const MAX_RETRY_AFTER_MS = 2000;

const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** Google answered 2xx with something that is not the JSON it documents: 502 PROVIDER_ERROR. */
export class GarbledAnswer extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GarbledAnswer';
  }
}

interface GoogleStatus {
  code?: number;
  message?: string;
  status?: string;
  errors?: { reason?: string }[];
  details?: { reason?: string }[];
}

const AUTH_STATUSES = new Set(['UNAUTHENTICATED']);
const AUTH_REASONS = new Set(['ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'insufficientPermissions', 'authError', 'ACCESS_TOKEN_EXPIRED']);
const TRANSIENT_STATUSES = new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'INTERNAL', 'DEADLINE_EXCEEDED']);
const TRANSIENT_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'backendError', 'RATE_LIMIT_EXCEEDED']);

/**
 * Google's error bodies, `{"error": {code, message, status, errors|details}}`. A 403 PERMISSION_DENIED
 * is a file the account cannot open (rejected, not a lapsed grant); a missing scope is a grant to
 * renew; Drive's 403 rate limits are a wait.
 */
export const readGoogleError: ErrorReader = (status, body) => {
  const error = ((body as { error?: unknown } | undefined)?.error ?? {}) as GoogleStatus;
  if (typeof error !== 'object') return {};
  const reasons = [...(error.errors ?? []), ...(error.details ?? [])].map((e) => e.reason ?? '');
  let kind: ProviderFailureKind | undefined;
  if ((error.status && AUTH_STATUSES.has(error.status)) || reasons.some((r) => AUTH_REASONS.has(r))) kind = 'auth';
  else if ((error.status && TRANSIENT_STATUSES.has(error.status)) || reasons.some((r) => TRANSIENT_REASONS.has(r))) kind = 'unavailable';
  else if (status === 403) kind = 'rejected';
  return { message: stringAt(error, 'message') ?? error.status, kind };
};

/** The token endpoint's error bodies: `{"error": "invalid_grant", "error_description": "…"}`. */
const readTokenError: ErrorReader = (_status, body) => {
  const code = stringAt(body, 'error');
  const description = stringAt(body, 'error_description');
  const message = [code, description].filter(Boolean).join(': ') || undefined;
  // invalid_grant: the refresh token is revoked or expired; the user must consent again.
  if (code === 'invalid_grant') return { message, kind: 'auth' };
  // invalid_client / unauthorized_client: this deployment's OAuth client, not the user's grant.
  if (code === 'invalid_client' || code === 'unauthorized_client') return { message: `${message ?? code} (check GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET)`, kind: 'rejected' };
  return { message };
};

export interface GoogleDeps {
  integrations: IntegrationsService;
  redis: Redis;
  redisKeys: RedisKeys;
  config: { env: AppConfig['env']; google: GoogleConfig };
  /** The DNS lookup behind the SSRF check (tests); the system resolver by default. */
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

function expired(expiresAt: string | undefined, now = Date.now()): boolean {
  if (!expiresAt) return false;
  const at = Date.parse(expiresAt);
  return !Number.isFinite(at) || at - EXPIRY_SKEW_MS <= now;
}

/**
 * Access tokens of workspace-suite connections. An expired token (or one Google answered 401) is
 * refreshed once: callers of one process share one refresh (in-flight promise), processes share it
 * through a Redis lock, and whoever takes the lock second reads the token the first one stored.
 * `invalid_grant` → ProviderError `auth` (the caller marks the connection lapsed: 409).
 */
export class GoogleTokens {
  private readonly inflight = new Map<string, Promise<UsableConnection>>();

  constructor(private readonly deps: GoogleDeps) {}

  /** The connection with an access token fit to use now (refreshed first when it expired). */
  async fresh(use: UsableConnection, call: ProviderCall): Promise<UsableConnection> {
    if (use.credentials.accessToken && !expired(use.credentials.expiresAt)) return use;
    return this.refresh(use, call);
  }

  /** A new access token for `use` (whose token is expired or was refused), shared by concurrent callers. */
  refresh(use: UsableConnection, call: ProviderCall): Promise<UsableConnection> {
    const id = use.connection.id;
    let running = this.inflight.get(id);
    if (!running) {
      running = this.refreshLocked(use, call).finally(() => this.inflight.delete(id));
      this.inflight.set(id, running);
    }
    return running;
  }

  private async refreshLocked(use: UsableConnection, call: ProviderCall): Promise<UsableConnection> {
    const { redis, redisKeys } = this.deps;
    const key = redisKeys.oauthRefresh(use.connection.id);
    const holder = randomBytes(12).toString('hex');
    while ((await redis.set(key, holder, 'PX', LOCK_MS, 'NX')) !== 'OK') {
      if (call.remainingMs() <= LOCK_POLL_MS) throw call.timedOut();
      await call.wait(LOCK_POLL_MS);
    }
    try {
      // Another process may have refreshed while this one waited: its token is used as it is.
      const now = await this.deps.integrations.reload(use);
      if (now.credentials.accessToken && now.credentials.accessToken !== use.credentials.accessToken && !expired(now.credentials.expiresAt)) return now;
      const credentials = { ...now.credentials, ...(await this.exchange(now, call)) };
      await this.deps.integrations.updateCredentials(now.connection, credentials);
      return { connection: now.connection, credentials };
    } finally {
      await redis.eval(RELEASE, 1, key, holder);
    }
  }

  /** `POST {token endpoint}` grant_type=refresh_token (RFC 6749 §6) with this deployment's client. */
  private async exchange(use: UsableConnection, parent: ProviderCall): Promise<GrantedTokens> {
    const { google } = this.deps.config;
    const refreshToken = use.credentials.refreshToken;
    return postToken(this.deps, use.connection.baseUrl ?? null, { timeoutMs: Math.max(1, parent.remainingMs()), signal: parent.signal, secret: refreshToken, subject: 'the token refresh' }, (call) => {
      if (!refreshToken) throw call.failure('auth', 'access token expired and the connection holds no refresh token');
      if (!google.clientId || !google.clientSecret) throw call.failure('rejected', 'access token expired and this deployment has no OAuth client to refresh it (set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET)');
      return { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: google.clientId, client_secret: google.clientSecret };
    });
  }
}

/** What the token endpoint granted. */
export interface GrantedTokens {
  accessToken: string;
  expiresAt?: string;
  refreshToken?: string;
}

/** The token endpoint of a connection: `{baseUrl}/token`, or GOOGLE_OAUTH_TOKEN_URL. */
function tokenUrl(config: GoogleDeps['config'], baseUrl: string | null): URL {
  return new URL(baseUrl ? `${baseUrl.replace(/\/+$/, '')}/token` : config.google.tokenUrl);
}

/**
 * One `POST {token endpoint}` (RFC 6749 §4.1.3 / §6) of the form `build` returns (it may refuse
 * first, with the call's failure): SSRF-checked, the grant and the client secret scrubbed from any
 * message, Google's error bodies read (`invalid_grant` → `auth`).
 */
export async function postToken(
  deps: Pick<GoogleDeps, 'config' | 'lookup'>,
  baseUrl: string | null,
  opts: { timeoutMs: number; signal?: AbortSignal; secret?: string; subject: string },
  build: (call: ProviderCall) => Record<string, string>,
): Promise<GrantedTokens> {
  const { google, env } = deps.config;
  const url = tokenUrl(deps.config, baseUrl);
  const call = new ProviderCall('workspace-suite', url.origin, {
    credentials: { apiKey: opts.secret, accessToken: google.clientSecret ?? undefined }, outboundPolicy: env, timeoutMs: opts.timeoutMs, lookup: deps.lookup,
  }, opts.signal ?? new AbortController().signal, readTokenError, opts.subject);
  const form = new URLSearchParams(build(call));
  const answer = await call.send({ method: 'POST', path: url.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(form.toString()) });
  if (answer.status < 200 || answer.status >= 300) throw call.refusal(answer);
  const body = parseJson(answer.body);
  const accessToken = stringAt(body, 'access_token');
  if (!accessToken) throw new GarbledAnswer(`workspace-suite answered ${opts.subject} without an access_token`);
  const expiresIn = (body as { expires_in?: unknown }).expires_in;
  return {
    accessToken,
    ...(typeof expiresIn === 'number' && expiresIn > 0 ? { expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString() } : {}),
    // Google rarely rotates the refresh token; when it does, the new one replaces the old.
    ...(stringAt(body, 'refresh_token') ? { refreshToken: stringAt(body, 'refresh_token') } : {}),
  };
}

export interface GoogleRequest extends ProviderRequest {
  api: GoogleApi;
  /** A JSON body (sent as application/json). */
  json?: unknown;
  /** `all`: retried after 429, 5xx and no answer (reads, idempotent writes); `refused`: only after 429 (an append). */
  retry: 'all' | 'refused';
  /** The whole call's budget (a file's transfer); GOOGLE_TIMEOUT_MS by default. */
  budgetMs?: number;
}

/** One route's conversation with Google on one connection: its token, its deadline. */
export class GoogleSession {
  private use: UsableConnection;

  constructor(
    private readonly tokens: GoogleTokens,
    use: UsableConnection,
    private readonly deps: Pick<GoogleDeps, 'config' | 'lookup'>,
    private readonly signal: AbortSignal = new AbortController().signal,
  ) {
    this.use = use;
  }

  /** The connection as last seen (its credentials refreshed, if they were). */
  get connection(): UsableConnection {
    return this.use;
  }

  private call(api: GoogleApi, budgetMs: number): ProviderCall {
    const base = this.use.connection.baseUrl ?? BASE_URLS[api];
    return new ProviderCall('workspace-suite', base, {
      credentials: { accessToken: this.use.credentials.accessToken, apiKey: this.use.credentials.refreshToken },
      outboundPolicy: this.deps.config.env, timeoutMs: budgetMs, lookup: this.deps.lookup,
    }, this.signal, readGoogleError);
  }

  /**
   * One JSON call: a fresh token first; a 401 refreshes the token once and tries again; 429, 5xx and
   * no answer are tried again (GOOGLE_ATTEMPTS, backoff, a short Retry-After honoured) when `retry`
   * allows; a 2xx that is not JSON is a GarbledAnswer.
   */
  async json<T>(req: GoogleRequest): Promise<T> {
    const answer = await this.send(req);
    const parsed = parseJson(answer.body);
    if (parsed === undefined || parsed === null || typeof parsed !== 'object') {
      throw new GarbledAnswer(`workspace-suite answered HTTP ${answer.status} with something that is not JSON`);
    }
    return parsed as T;
  }

  /** One call as `json` makes it (token, refresh, retries), answering Google's 2xx as it came (a header, a saved file). */
  async send(req: GoogleRequest): Promise<ProviderAnswer> {
    const budgetMs = req.budgetMs ?? this.deps.config.google.timeoutMs;
    const deadline = Date.now() + budgetMs;
    let call = this.call(req.api, budgetMs);
    this.use = await this.tokens.fresh(this.use, call);
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      call = this.call(req.api, Math.max(1, deadline - Date.now()));
      const headers = { ...req.headers, authorization: `Bearer ${this.use.credentials.accessToken}`, ...(req.json !== undefined ? { 'content-type': 'application/json' } : {}) };
      const body = req.json !== undefined ? Buffer.from(JSON.stringify(req.json)) : req.body;
      let answer;
      try {
        answer = await call.send({ ...req, headers, body });
      } catch (err) {
        if (err instanceof ProviderError && err.kind === 'unavailable' && req.retry === 'all' && attempt < GOOGLE_ATTEMPTS && call.remainingMs() > BACKOFF_MS[attempt - 1]!) {
          await call.wait(BACKOFF_MS[attempt - 1]!);
          continue;
        }
        throw err;
      }
      if (answer.status === 401 && !refreshed) {
        refreshed = true;
        this.use = await this.tokens.refresh(this.use, call);
        attempt--;
        continue;
      }
      const again = answer.status === 429 || (req.retry === 'all' && answer.status >= 500);
      if (again && attempt < GOOGLE_ATTEMPTS) {
        const after = Number(answer.headers['retry-after']);
        const waitMs = Number.isFinite(after) && after > 0 ? after * 1000 : BACKOFF_MS[attempt - 1]!;
        if (waitMs <= MAX_RETRY_AFTER_MS && call.remainingMs() > waitMs) {
          await call.wait(waitMs);
          continue;
        }
      }
      if (answer.status < 200 || answer.status >= 300) throw call.refusal(answer);
      return answer;
    }
  }
}

/**
 * One route's Google call on `use` with its failures answered as the API answers them (suiteFailure):
 * what SheetsService and ContactsService call.
 */
export function googleCall<T>(deps: GoogleDeps & { tokens: GoogleTokens }, use: UsableConnection, req: GoogleRequest, onRejected: (err: ProviderError) => ApiError): Promise<T> {
  return inSession(deps, use, onRejected, (session) => session.json<T>(req));
}

/** `googleCall` answering Google's 2xx as it came (its bytes unread): for answers read off the event loop. */
export function googleSend(deps: GoogleDeps & { tokens: GoogleTokens }, use: UsableConnection, req: GoogleRequest, onRejected: (err: ProviderError) => ApiError): Promise<ProviderAnswer> {
  return inSession(deps, use, onRejected, (session) => session.send(req));
}

async function inSession<T>(deps: GoogleDeps & { tokens: GoogleTokens }, use: UsableConnection, onRejected: (err: ProviderError) => ApiError, call: (session: GoogleSession) => Promise<T>): Promise<T> {
  const session = new GoogleSession(deps.tokens, use, deps);
  try {
    return await call(session);
  } catch (err) {
    return suiteFailure(err, session.connection, deps.integrations, onRejected);
  }
}

/** A ProviderError or GarbledAnswer as the API answers it (docs/suite.md "Failures"). */
export async function suiteFailure(err: unknown, use: UsableConnection, integrations: IntegrationsService, onRejected: (err: ProviderError) => ApiError): Promise<never> {
  if (err instanceof GarbledAnswer) throw new ApiError('PROVIDER_ERROR', `${err.message}; nothing was changed by this service`);
  if (!(err instanceof ProviderError)) throw err;
  if (err.kind === 'auth') {
    await integrations.markLapsed(use.connection.id, err.message);
    throw new ApiError('INTEGRATION_REAUTH_REQUIRED', `The workspace-suite account refused this workspace's grant (${err.message}); connect it again`);
  }
  if (err.kind === 'unavailable') throw new ApiError('PROVIDER_UNAVAILABLE', `${err.message}; try again shortly`, { headers: { 'Retry-After': '30' } });
  throw onRejected(err);
}

/** An answer that parsed but is not the shape Google documents: 502, nothing changed by us. */
export function garbled(what: string): ApiError {
  return new ApiError('PROVIDER_ERROR', `workspace-suite answered ${what}`);
}
