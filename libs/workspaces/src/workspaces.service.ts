import type { MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { ApiError, decryptSecret, deriveKey, encryptSecret, newId, randomToken, type AppConfig } from '#libs/core';
import { isPlanCode, PLAN_CODES, type PlanCode } from './plans.js';
import { bumpAuthVersion, type RedisKeys } from '#libs/redis';
import { Workspace } from './workspace.entity.js';

export interface CreatedWorkspace {
  workspace: Workspace;
  /** Signs render callbacks; shown once. */
  callbackSecret: string;
}

/** Workspaces (organizations): creation, plan and suspension. */
export class WorkspacesService {
  private readonly sealKey: Buffer;

  constructor(
    private readonly orm: MikroORM,
    private readonly redis: Redis,
    private readonly redisKeys: RedisKeys,
    config: Pick<AppConfig, 'appSecret'>,
  ) {
    this.sealKey = deriveKey(config.appSecret, 'encryption');
  }

  async create(input: { name: string; plan?: string }): Promise<CreatedWorkspace> {
    const name = input.name.trim();
    if (!name || name.length > 200) throw new ApiError('INVALID_REQUEST', 'name must hold 1 to 200 characters');
    const plan = this.plan(input.plan ?? 'pro');
    const callbackSecret = `whsec_${randomToken(32)}`;
    const em = this.orm.em.fork();
    const workspace = em.create(Workspace, {
      id: newId('workspace'),
      name,
      plan,
      suspendedAt: null,
      callbackSecretSealed: encryptSecret(this.sealKey, callbackSecret),
      defaultCallbackUrl: null,
    });
    await em.flush();
    return { workspace, callbackSecret };
  }

  async get(workspaceId: string): Promise<Workspace> {
    const ws = await this.orm.em.fork().findOne(Workspace, { id: workspaceId });
    if (!ws) throw new ApiError('NOT_FOUND', `Workspace ${workspaceId} does not exist`);
    return ws;
  }

  async setSuspended(workspaceId: string, suspended: boolean): Promise<Workspace> {
    return this.update(workspaceId, (ws) => {
      ws.suspendedAt = suspended ? (ws.suspendedAt ?? new Date()) : null;
    });
  }

  async setPlan(workspaceId: string, plan: string): Promise<Workspace> {
    const code = this.plan(plan);
    return this.update(workspaceId, (ws) => {
      ws.plan = code;
    });
  }

  /** The dashboard's callback settings: the default URL and a hint of the signing secret. */
  async callbackSettings(workspaceId: string): Promise<{ defaultCallbackUrl: string | null; secretHint: string }> {
    const ws = await this.get(workspaceId);
    const secret = decryptSecret(this.sealKey, ws.callbackSecretSealed);
    return { defaultCallbackUrl: ws.defaultCallbackUrl ?? null, secretHint: `whsec_...${secret.slice(-4)}` };
  }

  /** Sets (or clears, with null) the URL that receives render settle events when a render names none. */
  async setDefaultCallback(workspaceId: string, url: string | null): Promise<Workspace> {
    const em = this.orm.em.fork();
    const ws = await em.findOne(Workspace, { id: workspaceId });
    if (!ws) throw new ApiError('NOT_FOUND', `Workspace ${workspaceId} does not exist`);
    ws.defaultCallbackUrl = url;
    await em.flush();
    return ws;
  }

  /** A new callback signing secret (shown once); returns it and its sealed form for the callback targets. */
  async rotateCallbackSecret(workspaceId: string): Promise<{ secret: string; sealed: string }> {
    const secret = `whsec_${randomToken(32)}`;
    const sealed = encryptSecret(this.sealKey, secret);
    const changed = await this.orm.em.fork().nativeUpdate(Workspace, { id: workspaceId }, { callbackSecretSealed: sealed });
    if (changed === 0) throw new ApiError('NOT_FOUND', `Workspace ${workspaceId} does not exist`);
    return { secret, sealed };
  }

  private plan(value: string): PlanCode {
    if (!isPlanCode(value)) throw new ApiError('INVALID_REQUEST', `Unknown plan "${value}"; allowed: ${PLAN_CODES.join(', ')}`);
    return value;
  }

  /** Applies a change and bumps the auth version so every API process sees it on the next request. */
  private async update(workspaceId: string, change: (ws: Workspace) => void): Promise<Workspace> {
    const em = this.orm.em.fork();
    const ws = await em.findOne(Workspace, { id: workspaceId });
    if (!ws) throw new ApiError('NOT_FOUND', `Workspace ${workspaceId} does not exist`);
    change(ws);
    await em.flush();
    await bumpAuthVersion(this.redis, this.redisKeys, workspaceId);
    return ws;
  }
}
