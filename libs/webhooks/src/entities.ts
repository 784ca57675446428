import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import { workspaceFilter } from '#libs/db';
import type { StoredHeader } from './header-values.js';
import type { BodyFormat, HttpMethod, PayloadMode } from './types.js';

/**
 * A workspace's webhook endpoint (§2). States (§3): active (isActive), paused (isActive false, no
 * disabledAt), disabled (isActive false after 20 consecutive failed deliveries, disabledAt set).
 */
export type EndpointKind = 'endpoint' | 'callback';

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoint',
  filters: workspaceFilter(),
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32).index(),
    /** `endpoint`: registered by the workspace (§4.6); `callback`: a render callback URL's target, hidden from the lists. */
    kind: p.string().length(10).$type<EndpointKind>().default('endpoint'),
    url: p.text(),
    description: p.string().length(200).nullable(),
    events: p.json<string[]>(),
    /**
     * The mode it was made in (the caller's), or `live` once a live caller let it take live events: a
     * test caller may change only a `test` endpoint, whose `modes` never hold `live` (decisions.md
     * "Test mode (issue 28): events, webhooks, renders, assets").
     */
    mode: p.string().length(4).$type<KeyMode>().default('live'),
    /** The modes of the events it receives (a subset of live, test; never empty). */
    modes: p.json<KeyMode[]>(),
    method: p.string().length(6).$type<HttpMethod>(),
    bodyFormat: p.string().length(10).$type<BodyFormat>(),
    payloadMode: p.string().length(8).$type<PayloadMode>(),
    payloadTemplate: p.text().nullable(),
    /** Names with their values sealed (AES-GCM) and masked (header-values.ts); never shown in clear. */
    headers: p.json<StoredHeader[]>(),
    /** AES-GCM sealed with a key derived from APP_SECRET. */
    secretSealed: p.text(),
    secretHint: p.string().length(20),
    isActive: p.boolean(),
    disabledAt: p.datetime().nullable(),
    consecutiveFailures: p.integer(),
    lastSuccessAt: p.datetime().nullable(),
    lastFailureAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type WebhookEndpoint = InferEntity<typeof WebhookEndpoint>;

export const DELIVERY_STATES = ['pending', 'succeeded', 'failed', 'refused', 'cancelled', 'skipped'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * One event to one endpoint. (endpointId, eventId, sequence) is unique: the dispatcher can run an
 * event twice without creating a second delivery; a redelivery takes the next sequence.
 */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  filters: workspaceFilter(),
  uniques: [{ properties: ['endpointId', 'eventId', 'sequence'] }],
  indexes: [
    // The delivery log of an endpoint (cursor by id).
    { properties: ['endpointId', 'id'] },
    // A workspace's deliveries of the month (the allowance counter's seed).
    { properties: ['workspaceId', 'createdAt'] },
    // Pending deliveries left behind by a killed worker (the dispatcher's safety net, every second).
    { properties: ['state', 'createdAt'] },
  ],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    endpointId: p.string().length(32),
    eventId: p.string().length(40),
    eventType: p.string().length(40),
    /** The event's mode (a test delivery's: its sample event's). */
    mode: p.string().length(4).$type<KeyMode>().default('live'),
    sequence: p.integer(),
    test: p.boolean(),
    /** The envelope sent (so a redelivery and a test send the same event). */
    event: p.json<Record<string, unknown>>(),
    /**
     * The id of the first-attempts job that carries it (`webhooks.deliver-event`): `first-` and the id
     * of the first delivery it was made for (dispatcher.ts `assignJobs`). A re-enqueue of a never-attempted delivery (a dispatcher run again, the stale
     * sweep) uses it, so a job still waiting takes it instead of a second job sending it too. Null:
     * its own event's id (rows made before jobs carried several events, tests and redeliveries).
     */
    jobId: p.string().length(40).nullable(),
    state: p.string().length(10).$type<DeliveryState>(),
    attempts: p.integer(),
    lastStatus: p.integer().nullable(),
    lastError: p.text().nullable(),
    lastDurationMs: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
});
export type WebhookDelivery = InferEntity<typeof WebhookDelivery>;

/** Every HTTP attempt of a delivery (the delivery log). */
export const WebhookAttempt = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempt',
  uniques: [{ properties: ['deliveryId', 'attempt'] }],
  properties: {
    id: p.string().primary().length(48),
    deliveryId: p.string().length(32).index(),
    attempt: p.integer(),
    status: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
    signedAt: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type WebhookAttempt = InferEntity<typeof WebhookAttempt>;
