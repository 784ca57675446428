import type { MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { parseCidrList, type CidrRule, type KeyMode } from '#libs/core';
import { type Plan, planFor, Workspace } from '#libs/workspaces';
import { allWorkspaces, forWorkspace } from '#libs/db';
import type { RedisKeys } from '#libs/redis';
import { ApiKey } from './api-key.entity.js';
import type { KeysService, KeyView } from './keys.service.js';

/** What an API process remembers of one key between requests. */
export interface CachedKey {
  keyId: string;
  workspaceId: string;
  mode: KeyMode;
  scopes: ReadonlySet<string>;
  ipRules: readonly CidrRule[];
  expiresAt: number | null;
  revoked: boolean;
  suspended: boolean;
  plan: Plan;
  /** The workspace's auth version when this entry was read. */
  version: string;
  loadedAt: number;
  /**
   * The key's row as read (`GET /v1/keys/current` answers it): a key's row changes only when it is
   * revoked, which moves the auth version, so a request whose version checks out sees the row as stored.
   */
  row: KeyView;
}

/**
 * Resolves a raw API key to its cached record without a database round trip on the hot path.
 * Freshness is guaranteed per request by comparing the workspace's auth version in Redis
 * (see RequestMeter); entries also expire after `maxAgeMs` as a safety net.
 */
export class KeyAuthenticator {
  private readonly known = new Map<string, CachedKey>();
  /** Hashes of keys that do not exist. New keys are random, so a miss can never hide a new key. */
  private readonly unknown = new Set<string>();
  /** Cache misses in flight: concurrent requests with the same new key share one load. */
  private readonly loading = new Map<string, Promise<CachedKey | null>>();

  constructor(
    private readonly orm: MikroORM,
    private readonly redis: Redis,
    private readonly redisKeys: RedisKeys,
    private readonly keys: KeysService,
    private readonly limits = { maxEntries: 50_000, maxAgeMs: 60_000 },
  ) {}

  hash(rawKey: string): string {
    return this.keys.hash(rawKey);
  }

  /** The cached record for a key hash, loading it when absent or old; null for unknown keys. */
  async lookup(hash: string, now = Date.now()): Promise<CachedKey | null> {
    const hit = this.known.get(hash);
    if (hit && now - hit.loadedAt < this.limits.maxAgeMs) return hit;
    if (!hit && this.unknown.has(hash)) return null;
    let pending = this.loading.get(hash);
    if (!pending) {
      pending = this.load(hash).finally(() => this.loading.delete(hash));
      this.loading.set(hash, pending);
    }
    return pending;
  }

  /**
   * Reads the key afresh: the auth version first, then the rows. Forced reloads (a stale version
   * seen) call this directly, never joining a load that may have started before the change.
   */
  async load(hash: string): Promise<CachedKey | null> {
    // Until the key is found its workspace is unknown: the one read across workspaces, by the hash.
    const first = await allWorkspaces(this.orm).findOne(ApiKey, { hash }, { fields: ['workspaceId'] });
    if (!first) {
      this.remember(this.unknown, hash);
      this.known.delete(hash);
      return null;
    }
    const version = (await this.redis.get(this.redisKeys.authVersion(first.workspaceId))) ?? '0';
    const em = forWorkspace(this.orm, first.workspaceId);
    const key = await em.findOne(ApiKey, { hash });
    const workspace = key && (await em.findOne(Workspace, { id: key.workspaceId }));
    if (!key || !workspace) return null;
    const entry: CachedKey = {
      keyId: key.id,
      workspaceId: key.workspaceId,
      mode: key.mode,
      scopes: new Set(key.scopes),
      ipRules: parseCidrList(key.ipAllowlist),
      expiresAt: key.expiresAt ? key.expiresAt.getTime() : null,
      revoked: key.revokedAt !== null,
      suspended: workspace.suspendedAt !== null,
      plan: planFor(workspace.plan, workspace.id),
      version,
      loadedAt: Date.now(),
      row: {
        id: key.id, workspaceId: key.workspaceId, mode: key.mode, name: key.name, hint: key.hint, scopes: key.scopes,
        ipAllowlist: key.ipAllowlist, expiresAt: key.expiresAt, revokedAt: key.revokedAt, createdAt: key.createdAt,
      },
    };
    if (this.known.size >= this.limits.maxEntries) this.known.delete(this.known.keys().next().value as string);
    this.known.set(hash, entry);
    return entry;
  }

  /** True when the workspace's auth version moved since `entry` was read. */
  async isStale(entry: CachedKey): Promise<boolean> {
    const current = (await this.redis.get(this.redisKeys.authVersion(entry.workspaceId))) ?? '0';
    return current !== entry.version;
  }

  private remember(set: Set<string>, hash: string): void {
    if (set.size >= this.limits.maxEntries) set.delete(set.values().next().value as string);
    set.add(hash);
  }
}
