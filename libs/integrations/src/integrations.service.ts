import type { MikroORM } from '@mikro-orm/core';
import { ApiError, decryptSecret, deriveKey, encryptSecret, newId, type AppConfig } from '#libs/core';
import { underWorkspaceLock, type Plan } from '#libs/workspaces';
import { allWorkspaces, forWorkspace } from '#libs/db';
import {
  INTEGRATION_PROVIDERS, IntegrationConnection, type ConnectionEngine, type ConnectionStatus, type IntegrationProvider,
} from './entities.js';

/** What a connection holds to call its provider: never returned by the API, never logged. */
export interface ConnectionCredentials {
  apiKey?: string;
  accessToken?: string;
  refreshToken?: string;
  /** When the access token expires (ISO 8601), when the provider said. */
  expiresAt?: string;
  /** messaging-provider: one account per channel (libs/messaging's MessagingChannels). */
  channels?: Record<string, unknown>;
}

export interface ConnectInput {
  provider: string;
  engine?: ConnectionEngine;
  credentials: ConnectionCredentials;
  baseUrl?: string | null;
  accountEmail?: string | null;
  accountName?: string | null;
}

/** §2 Integration connection, as the API shows it. */
export interface ConnectionView {
  id: string;
  provider: IntegrationProvider;
  status: ConnectionStatus;
  engine: ConnectionEngine;
  account: { email: string | null; name: string | null };
  connectedAt: string;
  /** Set when status is reauth_required: what the provider answered (no credential in it). */
  reauthReason: string | null;
}

/** A usable connection, its credentials unsealed for one call. */
export interface UsableConnection {
  connection: IntegrationConnection;
  credentials: ConnectionCredentials;
}

/** Providers with an offline engine on this deployment (`engine: local`): the speech providers (pocketsphinx) and voice-provider (espeak-ng). */
const OFFLINE = new Set<IntegrationProvider>(['speech-alpha', 'speech-beta', 'speech-gamma', 'voice-provider']);

export function isIntegrationProvider(value: string): value is IntegrationProvider {
  return (INTEGRATION_PROVIDERS as readonly string[]).includes(value);
}

/**
 * Connected accounts (docs/integrations.md): the operator or the dashboard connects, routes use.
 * `use` is the one check integration routes make after authentication: the plan (402), never
 * connected (409 INTEGRATION_NOT_CONNECTED), a lapsed grant (409 INTEGRATION_REAUTH_REQUIRED).
 */
export class IntegrationsService {
  private readonly sealKey: Buffer;

  constructor(private readonly orm: MikroORM, config: Pick<AppConfig, 'appSecret'>) {
    this.sealKey = deriveKey(config.appSecret, 'encryption');
  }

  async list(workspaceId: string): Promise<IntegrationConnection[]> {
    return forWorkspace(this.orm, workspaceId).find(IntegrationConnection, {}, { orderBy: { provider: 'asc' } });
  }

  async find(workspaceId: string, provider: IntegrationProvider): Promise<IntegrationConnection | null> {
    return forWorkspace(this.orm, workspaceId).findOne(IntegrationConnection, { provider });
  }

  view(row: IntegrationConnection): ConnectionView {
    return {
      id: row.id,
      provider: row.provider,
      status: row.status,
      engine: row.engine,
      account: { email: row.accountEmail ?? null, name: row.accountName ?? null },
      connectedAt: row.connectedAt.toISOString(),
      reauthReason: row.status === 'reauth_required' ? (row.lapsedReason ?? null) : null,
    };
  }

  /** Connects (or reconnects, replacing the credentials and clearing a lapse) a workspace's account. */
  async connect(workspaceId: string, input: ConnectInput): Promise<IntegrationConnection> {
    const provider = input.provider;
    if (!isIntegrationProvider(provider)) {
      throw new ApiError('VALIDATION_FAILED', `Unknown provider "${provider}"`, { errors: { provider: [`must be one of ${INTEGRATION_PROVIDERS.join(', ')}`] } });
    }
    const engine = input.engine ?? 'provider';
    const errors: Record<string, string[]> = {};
    if (engine === 'local' && !OFFLINE.has(provider)) errors.engine = [`the local engine exists for ${[...OFFLINE].join(', ')} only`];
    const { apiKey, accessToken, channels } = input.credentials;
    if (engine === 'provider' && !apiKey && !accessToken && !(channels && Object.keys(channels).length)) errors.credentials = ['an API key or an access token is required (or --engine local for a speech provider or voice-provider)'];
    if (input.baseUrl) {
      let url: URL | null = null;
      try { url = new URL(input.baseUrl); } catch { /* reported below */ }
      if (!url || !['http:', 'https:'].includes(url.protocol)) errors.baseUrl = ['must be an absolute http(s) URL'];
    }
    if (Object.keys(errors).length) throw new ApiError('VALIDATION_FAILED', 'The connection is incomplete', { errors });
    const em = forWorkspace(this.orm, workspaceId);
    const fields = {
      status: 'connected' as const,
      engine,
      baseUrl: input.baseUrl ?? null,
      accountEmail: input.accountEmail ?? null,
      accountName: input.accountName ?? null,
      credentialsSealed: encryptSecret(this.sealKey, JSON.stringify(engine === 'local' ? {} : input.credentials)),
      connectedAt: new Date(),
      lapsedAt: null,
      lapsedReason: null,
    };
    const existing = await em.findOne(IntegrationConnection, { provider });
    if (existing) {
      em.assign(existing, fields);
      await em.flush();
      return existing;
    }
    const row = em.create(IntegrationConnection, { id: newId('connection'), workspaceId, provider, ...fields });
    await em.flush();
    return row;
  }

  /**
   * Changes the messaging-provider connection's channel accounts under the workspace's lock, so two
   * channels connected or removed at once both hold: `change` gets the accounts as they are and answers
   * the new ones (undefined: no change). No account left deletes the connection. Adding an account
   * reconnects (a lapse is cleared, as any connect does); removing one keeps the connection's state.
   */
  async changeChannels(
    workspaceId: string,
    change: (channels: Record<string, unknown>) => Record<string, unknown> | undefined,
  ): Promise<{ row: IntegrationConnection | null; changed: boolean }> {
    return underWorkspaceLock(this.orm, workspaceId, async (em) => {
      const row = await em.findOne(IntegrationConnection, { provider: 'messaging-provider' });
      const current = row ? (this.credentialsOf(row).channels ?? {}) : {};
      const next = change(current);
      if (!next) return { row, changed: false };
      if (!Object.keys(next).length) {
        if (row) await em.nativeDelete(IntegrationConnection, { id: row.id });
        return { row: null, changed: true };
      }
      const credentialsSealed = encryptSecret(this.sealKey, JSON.stringify({ channels: next }));
      const added = Object.keys(next).some((k) => !(k in current) || next[k] !== current[k]);
      const reconnect = added ? { status: 'connected' as const, engine: 'provider' as const, connectedAt: new Date(), lapsedAt: null, lapsedReason: null } : {};
      if (row) {
        em.assign(row, { credentialsSealed, ...reconnect });
        await em.flush();
        return { row, changed: true };
      }
      const made = em.create(IntegrationConnection, {
        id: newId('connection'), workspaceId, provider: 'messaging-provider', status: 'connected', engine: 'provider', baseUrl: null,
        accountEmail: null, accountName: null, credentialsSealed, connectedAt: new Date(), lapsedAt: null, lapsedReason: null,
      });
      await em.flush();
      return { row: made, changed: true };
    });
  }

  /** Names the account a connection acts as (read from the provider once it is connected). */
  async setAccount(workspaceId: string, provider: IntegrationProvider, account: { email: string | null; name: string | null }): Promise<void> {
    await forWorkspace(this.orm, workspaceId).nativeUpdate(IntegrationConnection, { provider }, { accountEmail: account.email, accountName: account.name });
  }

  /** Removes a connection and its credentials; false when there was none. */
  async disconnect(workspaceId: string, provider: string): Promise<boolean> {
    if (!isIntegrationProvider(provider)) return false;
    return (await forWorkspace(this.orm, workspaceId).nativeDelete(IntegrationConnection, { provider })) > 0;
  }

  /**
   * The check of every integration route, after authentication and scope (§7 order): the plan
   * includes integrations (402 LIMIT_INTEGRATION_NOT_ALLOWED), the provider is connected (409
   * INTEGRATION_NOT_CONNECTED) and its grant still holds (409 INTEGRATION_REAUTH_REQUIRED).
   */
  async use(workspaceId: string, plan: Plan, provider: IntegrationProvider): Promise<UsableConnection> {
    allowed(plan, provider);
    const connection = await this.find(workspaceId, provider);
    return this.usable(connection, provider);
  }

  /** `use` for a row already read (several providers considered at once). */
  usable(connection: IntegrationConnection | null | undefined, provider: IntegrationProvider): UsableConnection {
    if (!connection) throw notConnected(provider);
    if (connection.status === 'reauth_required') {
      throw new ApiError('INTEGRATION_REAUTH_REQUIRED', `The ${provider} account refused this workspace's grant (${connection.lapsedReason ?? 'no reason given'}); connect it again`);
    }
    return { connection, credentials: this.credentialsOf(connection) };
  }

  /** A connection's credentials unsealed whatever its status (a channel added to a lapsed messaging-provider connection keeps the others). */
  credentialsOf(connection: IntegrationConnection): ConnectionCredentials {
    return JSON.parse(decryptSecret(this.sealKey, connection.credentialsSealed)) as ConnectionCredentials;
  }

  /** The connection as it is now (another process may have refreshed its token); `usable`'s checks apply. */
  async reload(use: UsableConnection): Promise<UsableConnection> {
    const { workspaceId, provider } = use.connection;
    return this.usable(await this.find(workspaceId, provider), provider);
  }

  /**
   * Replaces a connection's credentials (a refreshed OAuth token), sealed; only while it is still
   * connected (a lapse in between wins). False when it was not.
   */
  async updateCredentials(connection: IntegrationConnection, credentials: ConnectionCredentials): Promise<boolean> {
    const changed = await allWorkspaces(this.orm).nativeUpdate(IntegrationConnection, { id: connection.id, status: 'connected' }, {
      credentialsSealed: encryptSecret(this.sealKey, JSON.stringify(credentials)),
    });
    return changed > 0;
  }

  /** The provider refused the grant: the connection needs reconnecting before the next use. */
  async markLapsed(connectionId: string, reason: string): Promise<void> {
    await allWorkspaces(this.orm).nativeUpdate(IntegrationConnection, { id: connectionId, status: 'connected' }, {
      status: 'reauth_required', lapsedAt: new Date(), lapsedReason: reason.slice(0, 300),
    });
  }
}

/** 402 when the plan excludes integrations (every provider: the plans table has one switch). */
export function allowed(plan: Plan, provider: IntegrationProvider): void {
  if (!plan.integrationsEnabled) {
    throw new ApiError('LIMIT_INTEGRATION_NOT_ALLOWED', `The ${plan.name} plan does not include connected accounts (${provider}); upgrade to use them`);
  }
}

export function notConnected(provider: string): ApiError {
  return new ApiError('INTEGRATION_NOT_CONNECTED', `No ${provider} account is connected to this workspace; connect one in the dashboard (or \`integration:connect\`)`);
}
