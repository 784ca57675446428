import { UniqueConstraintViolationException, type FilterQuery, type MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import {
  ApiError, decryptSecret, deriveKey, encryptSecret, newId, orderBy, PLANS,
  type AppConfig, type ListQuery, type OutboundPolicy, type PlanCode,
} from '#libs/core';
import { createRedis } from '#libs/redis';
import { Workspace } from '#libs/workspaces';
import { DeliveryAllowance } from './allowance.js';
import { buildDelivery, type DeliveryRequest } from './build.js';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint, type DeliveryState } from './entities.js';
import { DELIVERY_ATTEMPTS } from '#libs/queue';
import { classifyResponse, type AttemptOutcome } from './retry.js';
import { generateSecret, secretHint } from './secret.js';
import { sendDelivery, type DeliveryResult, type SendOptions } from './send.js';
import { openDeliveryStore, type DeliveryStore, type NewDelivery, type OutboxRow } from './store.js';
import { TemplateRefused } from './template.js';
import type { EventEnvelope, WebhookEvent } from './types.js';
import { mergeEndpointUpdate, validateEndpointInput, type EndpointSettings } from './validate.js';

/** Consecutive failed deliveries that disable an endpoint (§6 "Retries" 4). */
export const DISABLE_AFTER_FAILURES = 20;

/** The settle events a render's callback URL receives (decisions.md "Webhooks"). */
export const CALLBACK_EVENTS = ['render.completed', 'render.failed', 'render.cancelled'] as const;

/**
 * A success writes the endpoint row only when its streak is not 0 or its lastSuccessAt is older
 * than this: lastSuccessAt is exact to within this much (docs/benchmarks.md, webhook fan-out).
 */
export const LAST_SUCCESS_GRANULARITY_MS = 1000;

const SKIPPED_ERROR = 'LIMIT_WEBHOOKDELIVERIES: the month\'s webhook deliveries are used up';

/** Decrypted secrets kept per process, by their sealed text (a new secret is a new sealed text). */
const MAX_CACHED_SECRETS = 1000;

export type EndpointView = ReturnType<WebhooksService['view']>;

export interface WebhooksOptions {
  /** Replaced in tests (DNS); defaults to sendDelivery. */
  send?: (req: DeliveryRequest, opts: SendOptions) => Promise<DeliveryResult>;
  timeoutMs?: number;
}

/** Webhook endpoints (§4.6, §4.7), the outbox dispatcher and single delivery attempts (§6). */
export class WebhooksService {
  private readonly sealKey: Buffer;
  private readonly policy: OutboundPolicy;
  private readonly send: NonNullable<WebhooksOptions['send']>;
  private storeOpened: Promise<DeliveryStore> | null = null;
  private ownRedis: Redis | null = null;
  private readonly allowance: DeliveryAllowance;
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly orm: MikroORM,
    private readonly config: Pick<AppConfig, 'appSecret' | 'env' | 'database' | 'redisUrl' | 'redisPrefix'>,
    private readonly options: WebhooksOptions = {},
  ) {
    this.sealKey = deriveKey(config.appSecret, 'encryption');
    this.policy = config.env;
    this.send = options.send ?? sendDelivery;
    this.allowance = new DeliveryAllowance(config.redisPrefix, async (ws, since) => (await this.store()).countUsed(ws, since));
  }

  /** Closes the Redis connection the service opened itself (Nest calls this on the API's shutdown). */
  onModuleDestroy(): void {
    this.ownRedis?.disconnect();
    this.ownRedis = null;
  }

  private store(): Promise<DeliveryStore> {
    this.storeOpened ??= openDeliveryStore(this.orm, this.config.database);
    return this.storeOpened;
  }

  /**
   * The service's own Redis connection for the allowance of tests and redeliveries (API), opened
   * on first use. The worker's dispatcher passes the worker's connection to `dispatch` instead.
   */
  private redis(): Redis {
    this.ownRedis ??= createRedis(this.config, 'webhooks');
    return this.ownRedis;
  }

  view(e: WebhookEndpoint) {
    return {
      id: e.id,
      url: e.url,
      description: e.description ?? '',
      events: e.events,
      method: e.method,
      bodyFormat: e.bodyFormat,
      payloadMode: e.payloadMode,
      payloadTemplate: e.payloadTemplate,
      headers: e.headers,
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
    const where: FilterQuery<WebhookEndpoint> = { workspaceId, kind: 'endpoint' };
    if (q.booleans.isActive !== undefined) where.isActive = q.booleans.isActive;
    if (q.search) {
      const like = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.$or = [{ description: { $like: like } }, { url: { $like: like } }];
    }
    const em = this.orm.em.fork();
    let rows = await em.find(WebhookEndpoint, where, { orderBy: orderBy(q) as never });
    // Event subscriptions live in a JSON array; filter them here (a workspace has few endpoints).
    if (q.sets.events) rows = rows.filter((r) => q.sets.events.some((ev) => r.events.includes(ev)));
    return { rows: rows.slice(q.offset, q.offset + q.limit), total: rows.length };
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpoint> {
    const row = await this.orm.em.fork().findOne(WebhookEndpoint, { id, workspaceId, kind: 'endpoint' });
    if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook endpoint ${id} does not exist`);
    return row;
  }

  async create(workspaceId: string, input: unknown, defaultEvents?: readonly WebhookEvent[]): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const checked = validateEndpointInput(input, { env: this.policy, defaultEvents });
    if (!checked.ok) throw invalid(checked.errors);
    const s = checked.value as EndpointSettings;
    const secret = generateSecret();
    const em = this.orm.em.fork();
    const endpoint = em.create(WebhookEndpoint, {
      id: newId('webhook'), workspaceId, kind: 'endpoint', url: s.url, description: s.description || null, events: s.events, method: s.method,
      bodyFormat: s.bodyFormat, payloadMode: s.payloadMode, payloadTemplate: s.payloadTemplate, headers: s.headers,
      secretSealed: encryptSecret(this.sealKey, secret), secretHint: secretHint(secret), isActive: s.isActive,
      disabledAt: null, consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null,
    });
    await em.flush();
    return { endpoint, secret };
  }

  /** Partial update; `isActive: true` re-enables a disabled endpoint and clears its failure streak (§3). */
  async update(workspaceId: string, id: string, input: unknown): Promise<WebhookEndpoint> {
    const em = this.orm.em.fork();
    const row = await em.findOne(WebhookEndpoint, { id, workspaceId });
    if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook endpoint ${id} does not exist`);
    const merged = mergeEndpointUpdate({ ...this.settingsOf(row), isActive: row.isActive }, input, { env: this.policy });
    if (!merged.ok) throw invalid(merged.errors);
    const m = merged.value;
    const s = input as Partial<EndpointSettings>;
    Object.assign(row, {
      url: m.url, description: m.description || null, events: m.events, method: m.method, bodyFormat: m.bodyFormat,
      payloadMode: m.payloadMode, payloadTemplate: m.payloadTemplate, headers: m.headers,
    });
    if (s.isActive === true && !row.isActive) Object.assign(row, { isActive: true, disabledAt: null, consecutiveFailures: 0 });
    if (s.isActive === false) row.isActive = false;
    await em.flush();
    return row;
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const em = this.orm.em.fork();
    const removed = await em.nativeDelete(WebhookEndpoint, { id, workspaceId, kind: 'endpoint' });
    if (removed === 0) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook endpoint ${id} does not exist`);
    await em.nativeUpdate(WebhookDelivery, { endpointId: id, state: 'pending' }, { state: 'cancelled', completedAt: new Date() });
  }

  /**
   * Sends a sample render.completed event through the endpoint's real method, encoding, headers
   * and template, once, with X-Service-Test. Its failure never counts toward the streak.
   */
  async test(workspaceId: string, id: string): Promise<{ ok: boolean; status: number | null; error?: string }> {
    const endpoint = await this.get(workspaceId, id);
    await this.takeOne(workspaceId);
    const event: EventEnvelope = {
      id: newId('event'),
      type: 'render.completed',
      created: new Date().toISOString(),
      data: sampleRender(),
    };
    const delivery = await this.record(endpoint, event, { test: true, sequence: 0 });
    const outcome = await this.attempt(delivery.id, 1, { final: true });
    const done = await this.orm.em.fork().findOneOrFail(WebhookDelivery, { id: delivery.id });
    return { ok: outcome === 'success', status: done.lastStatus ?? null, ...(done.lastError ? { error: done.lastError } : {}) };
  }

  async deliveries(workspaceId: string, endpointId: string, q: { limit: number; beforeId?: string }) {
    await this.get(workspaceId, endpointId);
    const em = this.orm.em.fork();
    const where: FilterQuery<WebhookDelivery> = { endpointId, workspaceId, ...(q.beforeId ? { id: { $lt: q.beforeId } } : {}) };
    const rows = await em.find(WebhookDelivery, where, { orderBy: { id: 'desc' }, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    const attempts = await em.find(WebhookAttempt, { deliveryId: { $in: page.map((d) => d.id) } }, { orderBy: { deliveryId: 'asc', attempt: 'asc' } });
    return {
      more: rows.length > q.limit,
      rows: page.map((d) => ({
        id: d.id, eventId: d.eventId, event: d.eventType, test: d.test, state: d.state, attempts: d.attempts,
        lastStatus: d.lastStatus, lastError: d.lastError, lastDurationMs: d.lastDurationMs,
        createdAt: d.createdAt.toISOString(), completedAt: d.completedAt?.toISOString() ?? null,
        log: attempts.filter((a) => a.deliveryId === d.id).map((a) => ({
          attempt: a.attempt, status: a.status, error: a.error, durationMs: a.durationMs, at: a.createdAt.toISOString(),
        })),
      })),
    };
  }

  /** A fresh delivery of a past delivery's event (the caller enqueues it). */
  async redeliver(workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    const endpoint = await this.get(workspaceId, endpointId);
    const em = this.orm.em.fork();
    const past = await em.findOne(WebhookDelivery, { id: deliveryId, endpointId, workspaceId });
    if (!past || past.test) throw new ApiError('DELIVERY_NOT_FOUND', `Delivery ${deliveryId} does not exist`);
    await this.takeOne(workspaceId);
    const last = await em.findOne(WebhookDelivery, { endpointId, eventId: past.eventId }, { orderBy: { sequence: 'desc' } });
    return this.record(endpoint, past.event as unknown as EventEnvelope, { test: false, sequence: (last?.sequence ?? 0) + 1 });
  }

  /**
   * Fans a batch of undispatched outbox events out to every active endpoint subscribed to them:
   * one delivery row per (event, endpoint), all inserted in one transaction (or one statement);
   * then the batch's pending deliveries are handed to `enqueue`, and only then are the events
   * stamped. Safe to run twice or crash half-way: the unique (endpoint, event, sequence) keeps the
   * rows made before and they are enqueued again (the job id is the delivery id, and an attempt on
   * a settled delivery does nothing), so a crash never strands a delivery without its job. The
   * monthly allowance is taken per workspace in one Redis call for the batch, on `redis` (the
   * worker's connection; the service's own when omitted).
   */
  async dispatch(
    enqueue: (deliveryIds: string[]) => Promise<void>,
    opts: { batch?: number; redis?: Redis } = {},
  ): Promise<{ events: number; deliveries: number }> {
    const store = await this.store();
    const events = await store.undispatched(opts.batch ?? 200);
    if (!events.length) return { events: 0, deliveries: 0 };
    const now = new Date();
    const byWorkspace = new Map<string, typeof events>();
    for (const ev of events) {
      const list = byWorkspace.get(ev.workspaceId);
      if (list) list.push(ev);
      else byWorkspace.set(ev.workspaceId, [ev]);
    }
    const rows: NewDelivery[] = [];
    for (const [workspaceId, wsEvents] of byWorkspace) {
      const endpoints = await store.subscribers(workspaceId);
      const callbacks = await this.callbackTargets(workspaceId, wsEvents);
      const fanned = wsEvents
        .map((ev) => {
          const targets: { id: string }[] = endpoints.filter((e) => e.events.includes(ev.type));
          const callback = callbacks.get(ev.id);
          if (callback) targets.push(callback);
          return { ev, targets };
        })
        .filter((f) => f.targets.length > 0);
      if (!fanned.length) continue;
      const plan = PLANS[((await store.plan(workspaceId)) ?? 'free') as PlanCode] ?? PLANS.free;
      const sizes = fanned.map((f) => f.targets.length);
      const fits = await this.allowance.take(opts.redis ?? this.redis(), workspaceId, sizes, plan.webhookDeliveriesPerMonth, now);
      fanned.forEach(({ ev, targets }, i) => {
        const envelope: EventEnvelope = { id: ev.id, type: ev.type, created: ev.createdAt.toISOString(), data: ev.data };
        const eventJson = JSON.stringify(envelope);
        for (const endpoint of targets) {
          rows.push({
            id: newId('delivery'), workspaceId, endpointId: endpoint.id, eventId: ev.id, eventType: ev.type, eventJson,
            state: fits[i] ? 'pending' : 'skipped', lastError: fits[i] ? null : SKIPPED_ERROR,
          });
        }
      });
    }
    const stored = await store.insertDeliveries(rows, now);
    const ids = stored.filter((d) => d.state === 'pending').map((d) => d.id);
    if (ids.length) await enqueue(ids);
    await store.stampDispatched(events.map((e) => e.id), new Date());
    return { events: events.length, deliveries: ids.length };
  }

  /**
   * Where render settle events go besides subscribed endpoints (decisions.md "Webhooks"): the render's
   * `callback`, else the workspace's default callback URL. Each URL is a hidden endpoint row (kind
   * `callback`, the default payload, signed with the workspace's callback secret), so deliveries,
   * retries, the log and the allowance work as for any endpoint; callback failures never disable it.
   */
  private async callbackTargets(workspaceId: string, events: readonly OutboxRow[]): Promise<Map<string, { id: string }>> {
    const settles = events.filter((ev) => (CALLBACK_EVENTS as readonly string[]).includes(ev.type));
    const out = new Map<string, { id: string }>();
    if (settles.length === 0) return out;
    const em = this.orm.em.fork();
    const workspace = await em.findOne(Workspace, { id: workspaceId });
    if (!workspace) return out;
    const byUrl = new Map<string, { id: string }>();
    for (const ev of settles) {
      const url = ev.target ?? workspace.defaultCallbackUrl;
      if (!url) continue;
      let endpoint = byUrl.get(url);
      if (!endpoint) {
        endpoint = await this.callbackEndpoint(workspaceId, url, workspace.callbackSecretSealed);
        byUrl.set(url, endpoint);
      }
      out.set(ev.id, endpoint);
    }
    return out;
  }

  private async callbackEndpoint(workspaceId: string, url: string, secretSealed: string): Promise<{ id: string }> {
    const em = this.orm.em.fork();
    const found = await em.findOne(WebhookEndpoint, { workspaceId, kind: 'callback', url }, { fields: ['id'] });
    if (found) return { id: found.id };
    const row = em.create(WebhookEndpoint, {
      id: newId('webhook'), workspaceId, kind: 'callback', url, description: 'render callback', events: [...CALLBACK_EVENTS], method: 'POST',
      bodyFormat: 'json', payloadMode: 'default', payloadTemplate: null, headers: [], secretSealed, secretHint: 'whsec_...',
      isActive: true, disabledAt: null, consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null,
    });
    await em.flush();
    return { id: row.id };
  }

  /** Signs future callback deliveries with a rotated workspace secret (pending retries included). */
  async resealCallbacks(workspaceId: string, secretSealed: string): Promise<void> {
    await this.orm.em.fork().nativeUpdate(WebhookEndpoint, { workspaceId, kind: 'callback' }, { secretSealed });
  }

  /**
   * Pending deliveries older than `olderThanMs`: re-enqueued by the dispatcher as a safety net (the
   * job id is the delivery id, so a delivery whose job still exists is not enqueued twice).
   */
  async stalePending(olderThanMs: number, limit = 200): Promise<string[]> {
    return (await this.store()).stalePending(new Date(Date.now() - olderThanMs), limit);
  }

  /**
   * One HTTP attempt of a delivery, recorded in the log. On success, or when the delivery ends
   * (non-retryable answer, or the last attempt), settles it and the endpoint's streak.
   * Returns the outcome; `retry` means another attempt is due.
   *
   * One prepared read (the delivery with its endpoint, so a pause or deletion is seen at once) and
   * one write (one transaction, or one statement); the endpoint's secret is decrypted once per
   * process and sealed text.
   */
  async attempt(deliveryId: string, attempt: number, opts: { final?: boolean } = {}): Promise<AttemptOutcome | 'cancelled'> {
    const store = await this.store();
    const row = await store.loadAttempt(deliveryId);
    if (!row || row.state !== 'pending') return 'cancelled';
    const endpoint = row.endpoint;
    if (!endpoint || (!endpoint.isActive && !row.test)) {
      await store.cancel(deliveryId, new Date());
      return 'cancelled';
    }
    const timestamp = Math.floor(Date.now() / 1000);
    let result: DeliveryResult;
    try {
      const req = buildDelivery(
        { ...endpoint, id: row.endpointId, secret: this.secretOf(endpoint.secretSealed) },
        row.event as unknown as EventEnvelope,
        { orgId: row.workspaceId, endpointId: row.endpointId, attempt, timestamp, test: row.test },
      );
      result = await this.send(req, { policy: this.policy, timeoutMs: this.options.timeoutMs });
    } catch (err) {
      if (!(err instanceof TemplateRefused)) throw err;
      result = { error: 'refused', errorMessage: err.message, durationMs: 0, responseSnippet: '', truncated: false };
    }
    const outcome = classifyResponse(result.error ? { error: result.error } : { status: result.status as number });
    const error = result.error ? `${result.error}: ${result.errorMessage}` : outcome === 'success' ? null : `HTTP ${result.status}`;
    const last = outcome !== 'retry' || attempt >= DELIVERY_ATTEMPTS || opts.final === true;
    const state: DeliveryState = outcome === 'success' ? 'succeeded' : outcome === 'fail' ? 'refused' : 'failed';
    const at = new Date();
    await store.recordAttempt({
      deliveryId, endpointId: row.endpointId, attempt, status: result.status ?? null, error, durationMs: result.durationMs,
      signedAt: timestamp, at, state: last ? state : null,
      // Test deliveries never touch the streak (§6).
      streak: row.test ? null : outcome === 'success' ? 'success' : last ? 'failure' : null,
      disableAfter: DISABLE_AFTER_FAILURES,
      successStampAfter: new Date(at.getTime() - LAST_SUCCESS_GRANULARITY_MS),
    });
    return outcome;
  }

  private secretOf(sealed: string): string {
    let secret = this.secrets.get(sealed);
    if (secret === undefined) {
      if (this.secrets.size >= MAX_CACHED_SECRETS) this.secrets.clear();
      secret = decryptSecret(this.sealKey, sealed);
      this.secrets.set(sealed, secret);
    }
    return secret;
  }

  private settingsOf(e: WebhookEndpoint) {
    return {
      url: e.url, description: e.description ?? '', events: e.events as WebhookEvent[], method: e.method, bodyFormat: e.bodyFormat,
      payloadMode: e.payloadMode, payloadTemplate: e.payloadTemplate ?? null, headers: e.headers,
    };
  }

  /** A test delivery or a redelivery (the dispatcher inserts its rows in bulk, `dispatch`). */
  private async record(endpoint: WebhookEndpoint, event: EventEnvelope, o: { test: boolean; sequence: number }): Promise<WebhookDelivery> {
    const em = this.orm.em.fork();
    const row = em.create(WebhookDelivery, {
      id: newId('delivery'), workspaceId: endpoint.workspaceId, endpointId: endpoint.id, eventId: event.id, eventType: event.type,
      sequence: o.test ? 0 : o.sequence, test: o.test, event: event as unknown as Record<string, unknown>,
      state: 'pending', attempts: 0, lastStatus: null, lastError: null, lastDurationMs: null, completedAt: null,
    });
    try {
      await em.flush();
      return row;
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      return this.orm.em.fork().findOneOrFail(WebhookDelivery, { endpointId: endpoint.id, eventId: event.id, sequence: o.sequence });
    }
  }

  /** One delivery from the month's allowance (a test or a redelivery), or 402 LIMIT_WEBHOOKDELIVERIES. */
  private async takeOne(workspaceId: string): Promise<void> {
    const ws = await this.orm.em.fork().findOne(Workspace, { id: workspaceId });
    const plan = PLANS[(ws?.plan ?? 'free') as PlanCode] ?? PLANS.free;
    const [fits] = await this.allowance.take(this.redis(), workspaceId, [1], plan.webhookDeliveriesPerMonth);
    if (!fits) throw new ApiError('LIMIT_WEBHOOKDELIVERIES', 'This month\'s webhook deliveries are used up');
  }
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
