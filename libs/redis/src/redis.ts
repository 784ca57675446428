import { Redis, type RedisOptions } from 'ioredis';
import type { AppConfig } from '#libs/core';

/** A Redis connection for this deployment; `role` names it in CLIENT LIST. */
export function createRedis(config: Pick<AppConfig, 'redisUrl'>, role: string, extra: RedisOptions = {}): Redis {
  return new Redis(config.redisUrl, {
    connectionName: `media-render:${role}`,
    enableAutoPipelining: false,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    ...extra,
  });
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

  otpSends(kind: 'phone' | 'ip', value: string): string {
    return `${this.prefix}:otp:${kind}:${value}`;
  }

  monthlyRequests(workspaceId: string, month: string): string {
    return `${this.prefix}:{ws:${workspaceId}}:req:${month}`;
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
