import type { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import type { AppConfig } from '#libs/core';

/**
 * Reconnection delay while Redis is down: short and capped, so that a command waiting in the offline
 * queue is refused (MaxRetriesPerRequestError) within about a second per retry, and the connection is
 * back within a second of Redis (decisions.md "HTTP and errors": fail fast).
 */
export const REDIS_RETRY_CAP_MS = 500;

export function redisRetryDelay(attempt: number): number {
  return Math.min(attempt * 50, REDIS_RETRY_CAP_MS);
}

/** A Redis connection for this deployment; `role` names it in CLIENT LIST and in its outage log. */
export function createRedis(config: Pick<AppConfig, 'redisUrl'>, role: string, extra: RedisOptions = {}): Redis {
  const redis = new Redis(config.redisUrl, {
    connectionName: `media-render:${role}`,
    enableAutoPipelining: false,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    retryStrategy: redisRetryDelay,
    connectTimeout: 3_000,
    ...extra,
  });
  logOutages(redis, `redis:${role}`);
  return redis;
}

/**
 * The log of one Redis client's (or a group's) outages: one line when an outage starts (again at
 * most once a minute while it lasts, for clients that never say they are ready) and one when a client
 * is ready again. The message is the driver's (an address, never the URL, whose password stays out
 * of the log; a URL in it loses its credentials all the same).
 */
export class OutageLog {
  private readonly logger: Logger;
  private loggedAt = 0;

  constructor(name: string) {
    this.logger = new Logger(name);
  }

  error(err: Error): void {
    if (Date.now() - this.loggedAt < 60_000) return;
    this.loggedAt = Date.now();
    this.logger.error(`Redis unavailable (${err.message.replace(/\/\/[^@\s/]*@/g, '//')}); requests that need it answer 503 until it is back`);
  }

  ready(): void {
    if (!this.loggedAt) return;
    this.loggedAt = 0;
    this.logger.log('Redis available again');
  }
}

/**
 * Every Redis client (ioredis, BullMQ queues, queue events and workers) gets an 'error' listener:
 * without one ioredis prints "Unhandled error event" and BullMQ prints the error, on every
 * reconnection attempt. `clients` share one OutageLog.
 */
export function logOutages(clients: EventEmitter | EventEmitter[], name: string): void {
  const log = new OutageLog(name);
  for (const client of [clients].flat()) {
    client.on('error', (err: Error) => log.error(err));
    client.on('ready', () => log.ready());
  }
}

/** Names of the Redis keys shared by every process of one deployment. */
export class RedisKeys {
  constructor(private readonly prefix: string) {}

  /** Bumped whenever a workspace's keys, plan or suspension change; API processes compare it per request. */
  authVersion(workspaceId: string): string {
    return `${this.prefix}:{ws:${workspaceId}}:authv`;
  }

  rateWindow(workspaceId: string, mode: string, windowStart: number): string {
    return `${this.prefix}:{ws:${workspaceId}}:rate:${mode}:${windowStart}`;
  }

  /** The user's session epoch (sign-out bumps it); mirrors app_user.session_epoch. */
  sessionEpoch(userId: string): string {
    return `${this.prefix}:{user:${userId}}:sesv`;
  }

  /**
   * Whether a sign-in (a refresh-token family) still stands: `live` or `revoked`, mirroring its refresh
   * tokens' `revoked_at` (issue 28). Beside the user's epoch (one slot): both are read in one MGET.
   */
  sessionFamily(userId: string, familyId: string): string {
    return `${this.prefix}:{user:${userId}}:sesf:${familyId}`;
  }

  /** Refused sign-in code tries of a phone number, across its codes (a fixed window, expiring). */
  otpWrongTries(phone: string): string {
    return `${this.prefix}:otp:wrong:${phone}`;
  }

  /** Requests of a user's sessions in the current minute (a fixed window, expiring). */
  sessionRequests(userId: string): string {
    return `${this.prefix}:{user:${userId}}:sesreq`;
  }

  /** The pub/sub channel of a workspace's render feed (libs/events RenderFeed). */
  renderFeed(workspaceId: string): string {
    return `${this.prefix}:{ws:${workspaceId}}:feed`;
  }

  /** Held for a moment after a render's progress figure went out on the feed (the throttle). */
  renderFeedThrottle(workspaceId: string, renderId: string): string {
    return `${this.prefix}:{ws:${workspaceId}}:feed:p:${renderId}`;
  }

  otpSends(kind: 'phone' | 'ip', value: string): string {
    return `${this.prefix}:otp:${kind}:${value}`;
  }

  monthlyRequests(workspaceId: string, month: string): string {
    return `${this.prefix}:{ws:${workspaceId}}:req:${month}`;
  }

  /** The set of workers that reported their offline-engine programs (the dashboard's census). */
  offlineEngines(): string {
    return `${this.prefix}:engines:offline`;
  }

  /** One worker's report (its programs, JSON), with a TTL it renews. */
  offlineEngine(worker: string): string {
    return `${this.prefix}:engines:offline:${worker}`;
  }

  /** Set (with a TTL, refreshed) by every worker whose video engine is running; the API's 503 check. */
  videoEngine(): string {
    return `${this.prefix}:video:engine`;
  }

  /** Frames drawn so far by each chunk of a chunked render (a hash: chunk index → frames). */
  videoChunkProgress(renderId: string): string {
    return `${this.prefix}:video:chunks:${renderId}`;
  }

  /** Held while one process refreshes a connection's OAuth access token (libs/suite). */
  oauthRefresh(connectionId: string): string {
    return `${this.prefix}:oauth:refresh:${connectionId}`;
  }

  /** A pending authorization-code consent (its PKCE verifier, sealed) under its state; expires. */
  oauthConsent(state: string): string {
    return `${this.prefix}:oauth:consent:${state}`;
  }

  /** The workspace's video renders in progress (a sorted set of render ids scored by lease expiry). */
  videoSlots(workspaceId: string): string {
    return `${this.prefix}:{ws:${workspaceId}}:video:slots`;
  }

  /** The prefix of a campaign's rate windows (`:pace`, `:calls`): its grants in the last second across every worker (sorted sets; libs/messaging RateLimiter). */
  campaignRate(campaignId: string): string {
    return `${this.prefix}:campaign:${campaignId}:rate`;
  }

  /** Set, with a short TTL refreshed while it runs, by one campaign runner: the recipients it claimed are in flight, not lost. */
  campaignRunner(token: string): string {
    return `${this.prefix}:campaign:runner:${token}`;
  }
}

/**
 * Bumps a workspace's auth version so that every API process reloads its cached keys
 * on that workspace's next request (revocation, suspension and plan changes take effect at once).
 */
export async function bumpAuthVersion(redis: Redis, keys: RedisKeys, workspaceId: string): Promise<void> {
  await redis.incr(keys.authVersion(workspaceId));
}

/** Checks that Redis will not evict queue data: maxmemory-policy must be noeviction. */
export async function redisEvictionPolicy(redis: Redis): Promise<string> {
  try {
    const [, policy] = (await redis.config('GET', 'maxmemory-policy')) as [string, string];
    return policy;
  } catch {
    // CONFIG may be disabled on managed Redis; INFO carries the same value.
    const info = await redis.info('memory');
    return /maxmemory_policy:(\S+)/.exec(info)?.[1] ?? 'unknown';
  }
}

/**
 * Whether a command failed because Redis cannot be reached (ioredis gave up retrying, the
 * connection is closed or not writable, a BullMQ add on a fail-fast connection): the API answers
 * 503 DEPENDENCY_UNAVAILABLE, not 500.
 */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'MaxRetriesPerRequestError') return true;
  return typeof e.message === 'string' && /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false)$/.test(e.message);
}
