import type { MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { isLivemode, newId, type AppConfig } from '#libs/core';
import { forWorkspace } from '#libs/db';
import type { RenderFeed } from '#libs/events';
import { Workspace, type WorkspacePlans } from '#libs/workspaces';
import { DeliveryAllowance } from './allowance.js';
import { WebhookEndpoint } from './entities.js';
import type { NewDelivery, OutboxRow, StaleDelivery, WebhookStore } from './store.js';
import { EVENT_MODES, type EventEnvelope } from './types.js';

/** The settle events a render's callback URL receives (decisions.md "Webhooks"). */
export const CALLBACK_EVENTS = ['render.completed', 'render.failed', 'render.cancelled'] as const;

const SKIPPED_ERROR = 'LIMIT_WEBHOOKDELIVERIES: the month\'s webhook deliveries are used up';

/** The outbox dispatcher (§6): outbox events → one delivery per event and endpoint (and render callback). */
/** Events taken per dispatch batch (the deliveries of a batch are inserted and enqueued together). */
const DISPATCH_BATCH = 200;
/**
 * The deployment-wide dispatch lock's lifetime, renewed at every batch and every poll: a killed
 * dispatcher holds the others off for at most this long. (A batch slower than this lets a second
 * dispatcher in; that is safe, only wasted work.)
 */
const DISPATCH_LOCK_MS = 10_000;
/**
 * A run keeps watching the outbox for this long, polling every DISPATCH_POLL_MS, so an event
 * waits about DISPATCH_POLL_MS for its fan-out instead of up to the scheduler's 1 s; the next
 * scheduled run (every second) then takes over.
 */
const DISPATCH_WATCH_MS = 900;
const DISPATCH_POLL_MS = 50;
/** Pending deliveries this old are re-enqueued (their job was lost with a killed worker). */
const STALE_PENDING_MS = 120_000;

/**
 * What the dispatcher hands to the queue: the first attempts of events' deliveries (`jobId`: the id
 * stored on each of its deliveries; `eventId`: its first event), and deliveries whose retry job was
 * lost (one job each, whose id is the delivery's), with the attempts they have had.
 */
export interface DeliveryJobs {
  events: { jobId: string; eventId: string; deliveryIds: string[] }[];
  retries: { deliveryId: string; after: number }[];
}

/**
 * Deliveries one first-attempts job carries at most: the deliveries of consecutive events of a
 * dispatch batch, each event whole (one with more deliveries is a job of its own). A job per event
 * cost a BullMQ fetch and completion per event, ~10 % of the worker's CPU per delivery at four
 * endpoints an event (docs/benchmarks.md, webhook fan-out).
 */
export const DELIVERIES_PER_JOB = 32;

/**
 * Gives each pending row its first-attempts job: consecutive events of one workspace share one while
 * it holds at most `max` deliveries. A job never spans workspaces: one that fails (a secret that no
 * longer opens fails the job, which is then kept an hour) or waits on slow receivers holds up only its
 * own workspace's deliveries. The job's id is `first-` and the id of the first row it was made for,
 * new at every dispatch run: a run after a crash (rows found keep the job id they were given) never
 * names a new job like an old one, and a delivery's id alone stays its retry job's. Rows of an event,
 * and of a workspace, are consecutive.
 */
export function assignJobs(rows: { id: string; workspaceId: string; eventId: string; state: string; jobId: string | null }[], max = DELIVERIES_PER_JOB): void {
  const pendingOf = new Map<string, number>();
  for (const r of rows) if (r.state === 'pending') pendingOf.set(r.eventId, (pendingOf.get(r.eventId) ?? 0) + 1);
  let jobId: string | null = null;
  let size = 0;
  let event: string | null = null;
  let workspace: string | null = null;
  for (const r of rows) {
    if (r.state !== 'pending') continue;
    if (r.eventId !== event) {
      event = r.eventId;
      const n = pendingOf.get(event) as number;
      if (jobId === null || r.workspaceId !== workspace || size + n > max) {
        jobId = `first-${r.id}`;
        size = 0;
        workspace = r.workspaceId;
      }
      size += n;
    }
    r.jobId = jobId;
  }
}

/**
 * The first-attempts jobs of the deliveries, in their order: by the job id each was given (a row
 * without one, made before jobs carried several events, by its event's id, that job's id then).
 */
function firstAttemptJobs(deliveries: readonly { id: string; eventId: string; jobId: string | null }[]): DeliveryJobs['events'] {
  const byJob = new Map<string, DeliveryJobs['events'][number]>();
  for (const d of deliveries) {
    const jobId = d.jobId ?? d.eventId;
    const job = byJob.get(jobId);
    if (job) job.deliveryIds.push(d.id);
    else byJob.set(jobId, { jobId, eventId: d.eventId, deliveryIds: [d.id] });
  }
  return [...byJob.values()];
}

/**
 * A stale sweep's jobs, under the ids of the jobs they may still have: the dispatcher's deliveries
 * never attempted go back to their first-attempts job; the others (attempted, or a redelivery) to their own.
 */
export function staleJobs(stale: readonly StaleDelivery[]): DeliveryJobs {
  const first = (d: StaleDelivery) => d.attempts === 0 && d.sequence === 0;
  return {
    events: firstAttemptJobs(stale.filter(first)),
    retries: stale.filter((d) => !first(d)).map((d) => ({ deliveryId: d.id, after: d.attempts })),
  };
}

export class WebhookDispatcher {
  private readonly allowance: DeliveryAllowance;

  constructor(
    private readonly orm: MikroORM,
    private readonly store: WebhookStore,
    /** Takes the monthly allowance (one script call per workspace per batch). */
    private readonly redis: Redis,
    private readonly plans: WorkspacePlans,
    config: Pick<AppConfig, 'redisPrefix'>,
    /** Where each batch's render events are announced live (GET /v1/renders/events); best effort. */
    private readonly feed?: RenderFeed,
  ) {
    this.allowance = new DeliveryAllowance(config.redisPrefix, (ws, since) => store.countUsed(ws, since));
    this.lockKey = `${config.redisPrefix}:webhooks:dispatch-lock`;
  }

  private readonly lockKey: string;

  /**
   * One scheduled dispatch run (the `webhooks.dispatch` job): outbox → deliveries → `enqueue`d jobs.
   * Single-flight across every worker: the scheduler starts a run each second, and a run that finds
   * another one in progress returns at once instead of redoing its events. A run drains the outbox
   * batch by batch, then watches it until DISPATCH_WATCH_MS have passed; last, deliveries pending
   * too long (their job lost with a killed worker) are enqueued again.
   */
  async drain(enqueue: (jobs: DeliveryJobs) => Promise<void>): Promise<{ deliveries: number }> {
    const { redis } = this;
    const token = `${process.pid}:${Date.now()}:${Math.random()}`;
    if ((await redis.set(this.lockKey, token, 'PX', DISPATCH_LOCK_MS, 'NX')) !== 'OK') return { deliveries: 0 };
    try {
      const started = Date.now();
      let total = 0;
      for (;;) {
        const { events, deliveries } = await this.dispatch(enqueue, { batch: DISPATCH_BATCH });
        total += deliveries;
        if (events === 0) {
          if (Date.now() - started >= DISPATCH_WATCH_MS) break;
          await new Promise((r) => setTimeout(r, DISPATCH_POLL_MS));
        }
        await redis.pexpire(this.lockKey, DISPATCH_LOCK_MS);
      }
      const stale = await this.stalePending(STALE_PENDING_MS);
      if (stale.length) await enqueue(staleJobs(stale));
      return { deliveries: total };
    } finally {
      if ((await redis.get(this.lockKey)) === token) await redis.del(this.lockKey);
    }
  }

  /**
   * Fans a batch of undispatched outbox events out to every active endpoint subscribed to them and
   * to their mode (`modes`; a render's callback takes its own settle event whatever its mode):
   * one delivery row per (event, endpoint), all inserted in one transaction; then the batch's
   * pending deliveries are handed to `enqueue`, up to DELIVERIES_PER_JOB (whole events) a job, and
   * only then are the events stamped. Safe to run twice or crash half-way: the unique (endpoint,
   * event, sequence) keeps the rows made before, with the job id stored on them, and they are
   * enqueued again under it (a job still waiting takes them; a first-attempts job leaves alone what
   * was already attempted), so a crash never strands a delivery without its job nor sends it twice.
   * The monthly allowance is taken per workspace in one Redis call for the batch.
   */
  async dispatch(enqueue: (jobs: DeliveryJobs) => Promise<void>, opts: { batch?: number } = {}): Promise<{ events: number; deliveries: number }> {
    const store = this.store;
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
          const targets: { id: string }[] = endpoints.filter((e) => e.events.includes(ev.type) && e.modes.includes(ev.mode));
          const callback = callbacks.get(ev.id);
          if (callback) targets.push(callback);
          return { ev, targets };
        })
        .filter((f) => f.targets.length > 0);
      if (!fanned.length) continue;
      const plan = await this.plans.planOf(workspaceId);
      const sizes = fanned.map((f) => f.targets.length);
      const fits = await this.allowance.take(this.redis, workspaceId, sizes, plan.webhookDeliveriesPerMonth, now);
      fanned.forEach(({ ev, targets }, i) => {
        const envelope: EventEnvelope = { id: ev.id, type: ev.type, created: ev.createdAt.toISOString(), livemode: isLivemode(ev.mode), data: ev.data };
        const eventJson = JSON.stringify(envelope);
        for (const endpoint of targets) {
          rows.push({
            id: newId('delivery'), workspaceId, endpointId: endpoint.id, eventId: ev.id, eventType: ev.type, mode: ev.mode, eventJson, jobId: null,
            state: fits[i] ? 'pending' : 'skipped', lastError: fits[i] ? null : SKIPPED_ERROR,
          });
        }
      });
    }
    assignJobs(rows);
    const stored = await store.insertDeliveries(rows, now);
    // `stored` answers `rows` row by row (a row found keeps the job id it was given).
    const pending = stored.map((d, i) => ({ ...d, eventId: rows[i].eventId })).filter((d) => d.state === 'pending');
    if (pending.length) await enqueue({ events: firstAttemptJobs(pending), retries: [] });
    await store.stampDispatched(events.map((e) => e.id), new Date());
    // After the stamp: a stream resuming from the outbox (Last-Event-ID) reads only dispatched events, so none falls between.
    await this.feed?.announce(events).catch(() => undefined);
    return { events: events.length, deliveries: pending.length };
  }

  /**
   * Pending deliveries older than `olderThanMs`: re-enqueued by the dispatcher as a safety net
   * (`staleJobs`: the job ids are the event's or the delivery's, so a delivery whose job still exists
   * is not enqueued twice).
   */
  stalePending(olderThanMs: number, limit = 200): Promise<StaleDelivery[]> {
    return this.store.stalePending(new Date(Date.now() - olderThanMs), limit);
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
    const em = forWorkspace(this.orm, workspaceId);
    const found = await em.findOne(WebhookEndpoint, { kind: 'callback', url }, { fields: ['id'] });
    if (found) return { id: found.id };
    const row = em.create(WebhookEndpoint, {
      id: newId('webhook'), workspaceId, kind: 'callback', url, description: 'render callback', events: [...CALLBACK_EVENTS], mode: 'live', modes: [...EVENT_MODES], method: 'POST',
      bodyFormat: 'json', payloadMode: 'default', payloadTemplate: null, headers: [], secretSealed, secretHint: 'whsec_...',
      isActive: true, disabledAt: null, consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null,
    });
    await em.flush();
    return { id: row.id };
  }
}
