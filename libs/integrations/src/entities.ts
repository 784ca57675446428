import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { workspaceFilter } from '#libs/db';

/** Every provider a workspace can connect (contract §2 "Integration connection", §4.3, §4.5). */
export const INTEGRATION_PROVIDERS = [
  'workspace-suite', 'voice-provider', 'messaging-provider', 'speech-alpha', 'speech-beta', 'speech-gamma',
] as const;
export type IntegrationProvider = (typeof INTEGRATION_PROVIDERS)[number];

/** `connected`, or `reauth_required` once the provider refused the grant (§3: INTEGRATION_REAUTH_REQUIRED). */
export const CONNECTION_STATUSES = ['connected', 'reauth_required'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** `provider`: calls the provider's API with the stored credentials; `local`: the offline engine (speech providers and voice-provider). */
export type ConnectionEngine = 'provider' | 'local';

/**
 * One workspace's account at one provider (docs/integrations.md). The credentials are sealed
 * (AES-GCM under the app secret's `encryption` key) and leave the service only towards the provider.
 */
export const IntegrationConnection = defineEntity({
  name: 'IntegrationConnection',
  tableName: 'integration_connection',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'provider'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    provider: p.string().length(32).$type<IntegrationProvider>(),
    status: p.string().length(16).$type<ConnectionStatus>(),
    engine: p.string().length(8).$type<ConnectionEngine>(),
    /** The provider's API root when it is not the public one (a self-hosted gateway; a loopback fake in tests). */
    baseUrl: p.text().nullable(),
    accountEmail: p.string().length(320).nullable(),
    accountName: p.string().length(200).nullable(),
    /** Sealed JSON of ConnectionCredentials. */
    credentialsSealed: p.text(),
    connectedAt: p.datetime(),
    /** When and why the provider refused the grant (status reauth_required). */
    lapsedAt: p.datetime().nullable(),
    lapsedReason: p.string().length(300).nullable(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type IntegrationConnection = InferEntity<typeof IntegrationConnection>;
