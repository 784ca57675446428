import type { EntityManager, FilterQuery, MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import {
  ApiError, deriveKey, hmacHex, isScope, newId, orderBy, parseCidrList, SCOPES, validationFailed,
  type AppConfig, type KeyMode, type ListQuery, type Scope,
} from '#libs/core';
import { allWorkspaces, forWorkspace } from '#libs/db';
import { bumpAuthVersion, type RedisKeys } from '#libs/redis';
import { planFor, Workspace } from '#libs/workspaces';
import { ApiKey } from './api-key.entity.js';
import { generateKey, keyHint } from './key-format.js';

export interface CreateKeyInput {
  workspaceId: string;
  mode: KeyMode;
  scopes?: readonly string[];
  ipAllowlist?: readonly string[];
  expiresAt?: Date | null;
  name?: string | null;
}

export interface CreatedKey {
  id: string;
  /** The secret key: shown once, never stored. */
  key: string;
  hint: string;
  mode: KeyMode;
  scopes: Scope[];
  ipAllowlist: string[];
  expiresAt: string | null;
}

/** A key as read (never the secret; the hash is not read). */
export type KeyView = Pick<ApiKey, 'id' | 'workspaceId' | 'mode' | 'name' | 'hint' | 'scopes' | 'ipAllowlist' | 'expiresAt' | 'revokedAt' | 'createdAt'>;

/** Creates, lists and revokes API keys (contract §5). Keys are stored only as a keyed hash. */
export class KeysService {
  private readonly hashKey: Buffer;

  constructor(
    private readonly orm: MikroORM,
    private readonly redis: Redis,
    private readonly redisKeys: RedisKeys,
    config: Pick<AppConfig, 'appSecret'>,
  ) {
    this.hashKey = deriveKey(config.appSecret, 'api-key-hash');
  }

  hash(rawKey: string): string {
    return hmacHex(this.hashKey, rawKey);
  }

  async create(input: CreateKeyInput): Promise<CreatedKey> {
    const scopes = [...new Set(input.scopes ?? SCOPES)];
    const badScopes = scopes.filter((s) => !isScope(s));
    if (badScopes.length) throw validationFailed({ scopes: [`unknown scope ${badScopes.join(', ')}; allowed: ${SCOPES.join(', ')}`] });
    let ipAllowlist: string[];
    try {
      ipAllowlist = parseCidrList(input.ipAllowlist ?? []).map((r) => r.text);
    } catch (err) {
      throw validationFailed({ ipAllowlist: [(err as Error).message] });
    }
    if (input.expiresAt && Number.isNaN(input.expiresAt.getTime())) throw validationFailed({ expiresAt: ['is not a valid date'] });
    const em = forWorkspace(this.orm, input.workspaceId);
    const workspace = await em.findOne(Workspace, { id: input.workspaceId });
    if (!workspace) throw new ApiError('NOT_FOUND', `Workspace ${input.workspaceId} does not exist`);
    if (input.mode === 'live') {
      const plan = planFor(workspace.plan, workspace.id);
      const active = await em.count(ApiKey, {
        mode: 'live', revokedAt: null,
        $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }],
      });
      if (active >= plan.liveKeyQuota) {
        throw new ApiError('LIMIT_APIKEYS', `The ${plan.name} plan allows ${plan.liveKeyQuota} live keys; revoke one first`);
      }
    }
    const key = generateKey(input.mode);
    const row = em.create(ApiKey, {
      id: newId('key'),
      workspaceId: workspace.id,
      mode: input.mode,
      name: input.name ?? null,
      hash: this.hash(key),
      hint: keyHint(key),
      scopes: scopes as Scope[],
      ipAllowlist,
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
    });
    await em.flush();
    return {
      id: row.id, key, hint: row.hint, mode: input.mode, scopes: row.scopes, ipAllowlist,
      expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    };
  }

  /** Revokes one of the workspace's keys; every API process refuses it from its next request on. */
  revoke(keyId: string, workspaceId: string): Promise<ApiKey> {
    return this.revokeIn(forWorkspace(this.orm, workspaceId), keyId);
  }

  /** revoke for the operator's CLI: any workspace's key by its id. */
  revokeAny(keyId: string): Promise<ApiKey> {
    return this.revokeIn(allWorkspaces(this.orm), keyId);
  }

  private async revokeIn(em: EntityManager, keyId: string): Promise<ApiKey> {
    const row = await em.findOne(ApiKey, { id: keyId });
    if (!row) throw new ApiError('API_KEY_NOT_FOUND', `API key ${keyId} does not exist`);
    if (!row.revokedAt) {
      row.revokedAt = new Date();
      await em.flush();
    }
    await bumpAuthVersion(this.redis, this.redisKeys, row.workspaceId);
    return row;
  }

  /** A workspace's keys, newest first by default (dashboard). */
  async list(workspaceId: string, query: ListQuery<'createdAt' | 'name'>): Promise<{ rows: ApiKey[]; total: number }> {
    const where: FilterQuery<ApiKey> = {};
    if (query.sets.mode) where.mode = { $in: query.sets.mode as KeyMode[] };
    if (query.sets.status) {
      const now = new Date();
      const conds: FilterQuery<ApiKey>[] = [];
      if (query.sets.status.includes('active')) conds.push({ revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
      if (query.sets.status.includes('revoked')) conds.push({ revokedAt: { $ne: null } });
      if (query.sets.status.includes('expired')) conds.push({ revokedAt: null, expiresAt: { $lte: now } });
      where.$or = conds;
    }
    const [rows, total] = await forWorkspace(this.orm, workspaceId).findAndCount(ApiKey, where, {
      orderBy: orderBy(query) as never, limit: query.limit, offset: query.offset,
    });
    return { rows, total };
  }
}
