import { UniqueConstraintViolationException, type FilterQuery, type MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { ApiError, assertModeMayAct, deriveKey, encryptSecret, isLivemode, newId, orderBy, type AppConfig, type KeyMode, type ListQuery } from '#libs/core';
import { type OutboundPolicy } from '#libs/outbound';
import { forWorkspace } from '#libs/db';
import type { WorkspacePlans } from '#libs/workspaces';
import { DeliveryAllowance } from './allowance.js';
import type { WebhookDeliverer } from './deliverer.js';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './entities.js';
import { maskedHeaders, sealHeaders, sealStored } from './header-values.js';
import { generateSecret, secretHint } from './secret.js';
import type { WebhookStore } from './store.js';
import type { EventEnvelope, HeaderPair, WebhookEvent } from './types.js';
import { mergeEndpointUpdate, validateEndpointInput, type EndpointSettings } from './validate.js';

export type EndpointView = ReturnType<WebhookEndpoints['view']>;

/**
 * A workspace's webhook endpoints (§4.6, §4.7): the routes' create, read, update and delete, the
 * test send, the deliveries log and redeliveries; and the render callbacks' secret.
 */
export class WebhookEndpoints {
  private readonly sealKey: Buffer;
  private readonly policy: OutboundPolicy;
  private readonly allowance: DeliveryAllowance;

  constructor(
    private readonly orm: MikroORM,
    store: WebhookStore,
    /** Sends the test deliveries. */
    private readonly deliverer: WebhookDeliverer,
    /** Takes tests and redeliveries from the monthly allowance. */
    private readonly redis: Redis,
    private readonly plans: WorkspacePlans,
    config: Pick<AppConfig, 'appSecret' | 'env' | 'redisPrefix'>,
  ) {
    this.sealKey = deriveKey(config.appSecret, 'encryption');
    this.policy = config.env;
    this.allowance = new DeliveryAllowance(config.redisPrefix, (ws, since) => store.countUsed(ws, since));
  }

  view(e: WebhookEndpoint) {
    return {
      id: e.id,
      url: e.url,
      description: e.description ?? '',
      events: e.events,
      mode: e.mode,
      modes: e.modes,
      method: e.method,
      bodyFormat: e.bodyFormat,
      payloadMode: e.payloadMode,
      payloadTemplate: e.payloadTemplate,
      // Names and masked values only: the values are sealed and never read back (issue 28).
      headers: maskedHeaders(e.headers),
      secretHint: e.secretHint,
      isActive: e.isActive,
      disabled: e.disabledAt !== null,
      consecutiveFailures: e.consecutiveFailures,
      lastSuccessAt: e.lastSuccessAt?.toISOString() ?? null,
      lastFailureAt: e.lastFailureAt?.toISOString() ?? null,
      createdAt: e.createdAt.toISOString(),
      updatedAt: e.updatedAt.toISOString(),
    };
  }

  async list(workspaceId: string, q: ListQuery): Promise<{ rows: WebhookEndpoint[]; total: number }> {
    const where: FilterQuery<WebhookEndpoint> = { kind: 'endpoint' };
    if (q.booleans.isActive !== undefined) where.isActive = q.booleans.isActive;
    if (q.search) {
      const like = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.$or = [{ description: { $like: like } }, { url: { $like: like } }];
    }
    let rows = await forWorkspace(this.orm, workspaceId).find(WebhookEndpoint, where, { orderBy: orderBy(q) as never });
    // Event subscriptions live in a JSON array; filter them here (a workspace has few endpoints).
    if (q.sets.events) rows = rows.filter((r) => q.sets.events.some((ev) => r.events.includes(ev)));
    return { rows: rows.slice(q.offset, q.offset + q.limit), total: rows.length };
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpoint> {
    const row = await forWorkspace(this.orm, workspaceId).findOne(WebhookEndpoint, { id, kind: 'endpoint' });
    if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook endpoint ${id} does not exist`);
    return row;
  }

  /** A new endpoint, made in the caller's mode (a test caller's takes test events only). */
  async create(workspaceId: string, callerMode: KeyMode, input: unknown, defaultEvents?: readonly WebhookEvent[]): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const checked = validateEndpointInput(input, { env: this.policy, defaultEvents, callerMode });
    if (!checked.ok) throw invalid(checked.errors);
    const s = checked.value as EndpointSettings;
    const headers = this.sealed(s.headers, []);
    const secret = generateSecret();
    const em = forWorkspace(this.orm, workspaceId);
    const endpoint = em.create(WebhookEndpoint, {
      id: newId('webhook'), workspaceId, kind: 'endpoint', url: s.url, description: s.description || null, events: s.events,
      mode: endpointMode(callerMode, s.modes), modes: s.modes, method: s.method,
      bodyFormat: s.bodyFormat, payloadMode: s.payloadMode, payloadTemplate: s.payloadTemplate, headers,
      secretSealed: encryptSecret(this.sealKey, secret), secretHint: secretHint(secret), isActive: s.isActive,
      disabledAt: null, consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null,
    });
    await em.flush();
    return { endpoint, secret };
  }

  /**
   * Partial update; `isActive: true` re-enables a disabled endpoint and clears its failure streak (§3).
   * A test caller may change only a test endpoint (403 LIVE_MODE_REQUIRED, before the body is checked).
   */
  async update(workspaceId: string, callerMode: KeyMode, id: string, input: unknown): Promise<WebhookEndpoint> {
    const em = forWorkspace(this.orm, workspaceId);
    const row = await em.findOne(WebhookEndpoint, { id, kind: 'endpoint' });
    if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook endpoint ${id} does not exist`);
    assertModeMayAct(callerMode, row.mode, 'webhook endpoint');
    const merged = mergeEndpointUpdate({ ...this.settingsOf(row), isActive: row.isActive }, input, { env: this.policy, callerMode });
    if (!merged.ok) throw invalid(merged.errors);
    const m = merged.value;
    const s = input as Partial<EndpointSettings>;
    // `headers` replaces the list (values sealed; a masked value as shown keeps the stored one); else they stay, sealed.
    const headers = s.headers !== undefined ? this.sealed(m.headers, row.headers) : sealStored(row.headers, this.sealKey);
    Object.assign(row, {
      url: m.url, description: m.description || null, events: m.events, method: m.method, bodyFormat: m.bodyFormat,
      payloadMode: m.payloadMode, payloadTemplate: m.payloadTemplate, headers, modes: m.modes, mode: endpointMode(row.mode, m.modes),
    });
    if (s.isActive === true && !row.isActive) Object.assign(row, { isActive: true, disabledAt: null, consecutiveFailures: 0 });
    if (s.isActive === false) row.isActive = false;
    await em.flush();
    return row;
  }

  async remove(workspaceId: string, callerMode: KeyMode, id: string): Promise<void> {
    const em = forWorkspace(this.orm, workspaceId);
    assertModeMayAct(callerMode, (await this.get(workspaceId, id)).mode, 'webhook endpoint');
    const removed = await em.nativeDelete(WebhookEndpoint, { id, kind: 'endpoint' });
    if (removed === 0) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook endpoint ${id} does not exist`);
    await em.nativeUpdate(WebhookDelivery, { endpointId: id, state: 'pending' }, { state: 'cancelled', completedAt: new Date() });
  }

  /**
   * Sends a sample render.completed event through the endpoint's real method, encoding, headers
   * and template, once, with X-Service-Test. Its failure never counts toward the streak. The sample
   * is live when the endpoint takes live events, else a test event: what its real deliveries look like.
   */
  async test(workspaceId: string, callerMode: KeyMode, id: string): Promise<{ ok: boolean; status: number | null; error?: string }> {
    const endpoint = await this.get(workspaceId, id);
    assertModeMayAct(callerMode, endpoint.mode, 'webhook endpoint');
    await this.takeOne(workspaceId);
    const mode: KeyMode = endpoint.modes.includes('live') ? 'live' : 'test';
    const event: EventEnvelope = {
      id: newId('event'),
      type: 'render.completed',
      created: new Date().toISOString(),
      livemode: isLivemode(mode),
      data: sampleRender(),
    };
    const delivery = await this.record(endpoint, event, { test: true, sequence: 0, mode });
    const outcome = await this.deliverer.attempt(delivery.id, 1, { final: true });
    const done = await forWorkspace(this.orm, workspaceId).findOneOrFail(WebhookDelivery, { id: delivery.id });
    return { ok: outcome === 'success', status: done.lastStatus ?? null, ...(done.lastError ? { error: done.lastError } : {}) };
  }

  async deliveries(workspaceId: string, endpointId: string, q: { limit: number; beforeId?: string }) {
    await this.get(workspaceId, endpointId);
    const em = forWorkspace(this.orm, workspaceId);
    const where: FilterQuery<WebhookDelivery> = { endpointId, ...(q.beforeId ? { id: { $lt: q.beforeId } } : {}) };
    const rows = await em.find(WebhookDelivery, where, { orderBy: { id: 'desc' }, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    const attempts = await em.find(WebhookAttempt, { deliveryId: { $in: page.map((d) => d.id) } }, { orderBy: { deliveryId: 'asc', attempt: 'asc' } });
    return {
      more: rows.length > q.limit,
      rows: page.map((d) => ({
        id: d.id, eventId: d.eventId, event: d.eventType, mode: d.mode, test: d.test, state: d.state, attempts: d.attempts,
        lastStatus: d.lastStatus, lastError: d.lastError, lastDurationMs: d.lastDurationMs,
        createdAt: d.createdAt.toISOString(), completedAt: d.completedAt?.toISOString() ?? null,
        log: attempts.filter((a) => a.deliveryId === d.id).map((a) => ({
          attempt: a.attempt, status: a.status, error: a.error, durationMs: a.durationMs, at: a.createdAt.toISOString(),
        })),
      })),
    };
  }

  /** A fresh delivery of a past delivery's event (the caller enqueues it); a test caller redelivers only test events. */
  async redeliver(workspaceId: string, callerMode: KeyMode, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    const endpoint = await this.get(workspaceId, endpointId);
    const em = forWorkspace(this.orm, workspaceId);
    const past = await em.findOne(WebhookDelivery, { id: deliveryId, endpointId });
    if (!past || past.test) throw new ApiError('DELIVERY_NOT_FOUND', `Delivery ${deliveryId} does not exist`);
    assertModeMayAct(callerMode, past.mode, 'webhook delivery');
    await this.takeOne(workspaceId);
    const last = await em.findOne(WebhookDelivery, { endpointId, eventId: past.eventId }, { orderBy: { sequence: 'desc' } });
    return this.record(endpoint, past.event as unknown as EventEnvelope, { test: false, sequence: (last?.sequence ?? 0) + 1, mode: past.mode });
  }

  /** Signs future callback deliveries with a rotated workspace secret (pending retries included). */
  async resealCallbacks(workspaceId: string, secretSealed: string): Promise<void> {
    await forWorkspace(this.orm, workspaceId).nativeUpdate(WebhookEndpoint, { kind: 'callback' }, { secretSealed });
  }

  /** The stored settings an update is merged with; the headers (sealed) are the update's own business (`sealed`). */
  private settingsOf(e: WebhookEndpoint) {
    return {
      url: e.url, description: e.description ?? '', events: e.events as WebhookEvent[], method: e.method, bodyFormat: e.bodyFormat,
      payloadMode: e.payloadMode, payloadTemplate: e.payloadTemplate ?? null, headers: [], modes: e.modes,
    };
  }

  /** A create's or an update's headers, sealed; 422 for a masked value that stands for no stored one. */
  private sealed(given: readonly HeaderPair[], stored: WebhookEndpoint['headers']) {
    const { headers, errors } = sealHeaders(given, stored, this.sealKey);
    if (Object.keys(errors).length) throw invalid(errors);
    return headers;
  }

  /** A test delivery or a redelivery (the dispatcher inserts its rows in bulk, `dispatch`). */
  private async record(endpoint: WebhookEndpoint, event: EventEnvelope, o: { test: boolean; sequence: number; mode: KeyMode }): Promise<WebhookDelivery> {
    const em = forWorkspace(this.orm, endpoint.workspaceId);
    const row = em.create(WebhookDelivery, {
      id: newId('delivery'), workspaceId: endpoint.workspaceId, endpointId: endpoint.id, eventId: event.id, eventType: event.type, mode: o.mode,
      sequence: o.test ? 0 : o.sequence, test: o.test, event: event as unknown as Record<string, unknown>,
      state: 'pending', attempts: 0, lastStatus: null, lastError: null, lastDurationMs: null, completedAt: null,
    });
    try {
      await em.flush();
      return row;
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      return forWorkspace(this.orm, endpoint.workspaceId).findOneOrFail(WebhookDelivery, { endpointId: endpoint.id, eventId: event.id, sequence: o.sequence });
    }
  }

  /** One delivery from the month's allowance (a test or a redelivery), or 402 LIMIT_WEBHOOKDELIVERIES. */
  private async takeOne(workspaceId: string): Promise<void> {
    const plan = await this.plans.planOf(workspaceId);
    const [fits] = await this.allowance.take(this.redis, workspaceId, [1], plan.webhookDeliveriesPerMonth);
    if (!fits) throw new ApiError('LIMIT_WEBHOOKDELIVERIES', 'This month\'s webhook deliveries are used up');
  }
}

/**
 * An endpoint's mode after its `modes` are set: one that takes live events is a live record (so a test
 * caller can never again change where live events go); otherwise it keeps the mode it was made in.
 */
function endpointMode(current: KeyMode, modes: readonly KeyMode[]): KeyMode {
  return modes.includes('live') ? 'live' : current;
}

function invalid(errors: Record<string, string[]>): ApiError {
  return new ApiError('VALIDATION_FAILED', `Invalid webhook endpoint: ${Object.entries(errors).map(([k, v]) => `${k}: ${v[0]}`).join('; ')}`, { errors });
}

/** The render of a test delivery (decisions.md: id starting rnd_test_). */
function sampleRender(): Record<string, unknown> {
  const now = new Date();
  return {
    id: `rnd_test_${newId('render').slice(4)}`, status: 'done', kind: 'video', templateId: 'tpl_test', url: 'https://example.com/renders/sample.mp4',
    posterUrl: 'https://example.com/renders/sample-poster.jpg', thumbnailUrl: 'https://example.com/renders/sample-thumb.jpg',
    format: 'mp4', width: 1280, height: 720, duration: 10, fileSizeBytes: 1_048_576, renderTime: 8_400, credits: 1, watermarked: false,
    expiresAt: new Date(now.getTime() + 30 * 86_400_000).toISOString(),
  };
}
