import type { EntityManager, MikroORM } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import type { QueryCreator } from 'kysely';
import { dbArray, dialectOf, queries, sql, writeTogether, type DbArray, type Tables, type Write } from '#libs/db';
import type { OutboxEvent } from '#libs/events';
import type { DeliveryState, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './entities.js';
import type { StoredHeader } from './header-values.js';
import type { BodyFormat, HttpMethod, PayloadMode } from './types.js';

/*
 * The delivery hot path's SQL: the dispatcher's fan-out and every attempt, as statements compiled
 * once and prepared once per connection (libs/db queries), on the ORM's connection. MikroORM builds,
 * inlines and re-prepares its SQL on every call, which cost more than the HTTP request of a delivery
 * (docs/benchmarks.md); the management routes keep using the ORM.
 */

/** A delivery and its endpoint as an attempt needs them (one read). */
export interface AttemptRow {
  state: DeliveryState;
  /** Attempts recorded so far. */
  attempts: number;
  test: boolean;
  event: Record<string, unknown>;
  workspaceId: string;
  endpointId: string;
  /** Null when the endpoint was deleted. */
  endpoint: {
    url: string;
    method: HttpMethod;
    bodyFormat: BodyFormat;
    payloadMode: PayloadMode;
    payloadTemplate: string | null;
    /** Values sealed: the deliverer unseals them. */
    headers: StoredHeader[];
    secretSealed: string;
    isActive: boolean;
  } | null;
}

/** What one attempt writes: its log line, the delivery's state, and the endpoint's streak. */
export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  attempt: number;
  status: number | null;
  error: string | null;
  durationMs: number;
  signedAt: number;
  at: Date;
  /** Set when the delivery ends with this attempt. */
  state: DeliveryState | null;
  /**
   * `success` clears the streak and stamps lastSuccessAt; `failure` (the delivery ended failed or
   * refused) lengthens it and disables the endpoint at `disableAfter`; null touches nothing (a retry
   * is due, or a test delivery).
   */
  streak: 'success' | 'failure' | null;
  disableAfter: number;
  /**
   * A success leaves the endpoint row alone when the streak is already 0 and lastSuccessAt is newer
   * than this (so lastSuccessAt is exact to this granularity, and a busy endpoint's row is written
   * about once per interval instead of once per delivery).
   */
  successStampAfter: Date;
}

export interface OutboxRow {
  id: string;
  workspaceId: string;
  type: string;
  /** The event's mode (its record's). */
  mode: KeyMode;
  data: Record<string, unknown>;
  createdAt: Date;
  /** A render's callback URL (settle events only). */
  target: string | null;
}

/** A pending delivery left behind, and the attempts it has had. */
export interface StaleDelivery {
  id: string;
  eventId: string;
  /** 0: the dispatcher's; above: a redelivery (its job, enqueued by the API, has the delivery's id). */
  sequence: number;
  attempts: number;
  /** Its first-attempts job's id; null: its event's (see WebhookDelivery.jobId). */
  jobId: string | null;
}

export interface SubscriberRow {
  id: string;
  events: string[];
  modes: KeyMode[];
}

/** A delivery row made by the dispatcher (sequence 0, not a test). */
export interface NewDelivery {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  mode: KeyMode;
  /** The envelope as JSON text (written once per event, shared by its endpoints). */
  eventJson: string;
  /** The first-attempts job that carries it (dispatcher.ts `assignJobs`); null for a skipped delivery. */
  jobId: string | null;
  state: 'pending' | 'skipped';
  lastError: string | null;
}

type WebhookTables = Tables<typeof WebhookEndpoint | typeof WebhookDelivery | typeof WebhookAttempt | typeof OutboxEvent>;
type Db = QueryCreator<WebhookTables>;

const webhooks = queries<WebhookTables>();

/** The values of an attempt's writes: the record, its log line's id and the delivery's end. */
type RecordParams = AttemptRecord & { attemptId: string; completedAt: Date | null };

function recordParams(r: AttemptRecord): RecordParams {
  return { ...r, attemptId: `${r.deliveryId}:${r.attempt}`, completedAt: r.state ? r.at : null };
}

/** The attempt's log line (a rerun of the same attempt after a crash keeps the first). */
const insertAttempt = (db: Db, p: RecordParams) => db.insertInto('webhook_attempt')
  .values({
    id: p.attemptId, delivery_id: p.deliveryId, attempt: p.attempt, status: p.status, error: p.error, duration_ms: p.durationMs,
    signed_at: p.signedAt, created_at: p.at,
  })
  .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing());

/** The delivery's last attempt, and its end when `state` is set. */
const updateDelivery = (db: Db, p: RecordParams) => db.updateTable('webhook_delivery')
  .set({
    attempts: p.attempt, last_status: p.status, last_error: p.error, last_duration_ms: p.durationMs,
    state: sql<DeliveryState>`coalesce(${p.state}, state)`, completed_at: sql<Date>`coalesce(${p.completedAt}, completed_at)`,
  })
  .where('id', '=', p.deliveryId);

/**
 * The endpoint's streak after an attempt that ended a delivery, in one UPDATE whose right-hand
 * sides all see the row as it was: a success clears the streak (written only when there is
 * something to change, see `successStampAfter`); a failure lengthens it and, at the limit,
 * disables an endpoint that is still active (a paused one stays paused). Render callback targets
 * (kind `callback`) are never disabled: each render names its own URL. No streak: no row.
 */
const updateStreak = (db: Db, p: RecordParams) => {
  const disables = sql<boolean>`${p.streak} = 'failure' and is_active and kind = 'endpoint' and consecutive_failures + 1 >= ${p.disableAfter}`;
  return db.updateTable('webhook_endpoint')
    .set({
      consecutive_failures: sql<number>`case when ${p.streak} = 'success' then 0 else consecutive_failures + 1 end`,
      last_success_at: sql<Date>`case when ${p.streak} = 'success' then ${p.at} else last_success_at end`,
      last_failure_at: sql<Date>`case when ${p.streak} = 'failure' then ${p.at} else last_failure_at end`,
      is_active: sql<boolean>`case when ${disables} then ${false} else is_active end`,
      disabled_at: sql<Date>`case when ${disables} then ${p.at} else disabled_at end`,
    })
    .where('id', '=', p.endpointId)
    .where(sql<boolean>`${p.streak} in ('success', 'failure')`)
    .where(sql<boolean>`(${p.streak} = 'failure' or consecutive_failures <> 0 or last_success_at is null or last_success_at < ${p.successStampAfter})`);
};

const INSERT_ATTEMPT = webhooks.prepare(insertAttempt);
const UPDATE_DELIVERY = webhooks.prepare(updateDelivery);
const UPDATE_STREAK = webhooks.prepare(updateStreak);
/** PostgreSQL: the three writes in one statement (one round trip, atomic). */
const RECORD_ATTEMPT = webhooks.prepare((db, p: RecordParams) => updateStreak(
  db.with('a', (qc) => insertAttempt(qc, p)).with('d', (qc) => updateDelivery(qc, p)) as unknown as Db,
  p,
));

/** What the worker reads of a delivery and its endpoint. */
const attemptColumns = (db: Db) => db
  .selectFrom('webhook_delivery as d')
  .leftJoin('webhook_endpoint as e', 'e.id', 'd.endpoint_id')
  .select([
    'd.id', 'd.state', 'd.attempts', 'd.test', 'd.event', 'd.workspace_id', 'd.endpoint_id', 'e.id as e_id', 'e.url', 'e.method', 'e.body_format',
    'e.payload_mode', 'e.payload_template', 'e.headers', 'e.secret_sealed', 'e.is_active',
  ]);

/** A delivery by the job's id, whichever workspace it is in (the worker's read). */
const LOAD_ATTEMPT = webhooks.prepare((db, p: { id: string }) => attemptColumns(db).where('d.id', '=', p.id), { allWorkspaces: true });

/** PostgreSQL: a job's deliveries in one statement (one round trip instead of one each). */
const LOAD_ATTEMPTS = webhooks.prepare((db, p: { ids: DbArray }) => attemptColumns(db).where(sql<boolean>`d.id = any(${p.ids}::text[])`), { allWorkspaces: true });

type AttemptColumns = Awaited<ReturnType<typeof LOAD_ATTEMPT.one>>;

function attemptRow(r: NonNullable<AttemptColumns>): AttemptRow {
  return {
    state: r.state, attempts: r.attempts, test: r.test, event: r.event, workspaceId: r.workspace_id, endpointId: r.endpoint_id,
    endpoint: r.e_id === null ? null : {
      url: r.url as string, method: r.method as HttpMethod, bodyFormat: r.body_format as BodyFormat, payloadMode: r.payload_mode as PayloadMode,
      payloadTemplate: r.payload_template ?? null, headers: r.headers as StoredHeader[], secretSealed: r.secret_sealed as string, isActive: r.is_active as boolean,
    },
  };
}

const CANCEL = webhooks.prepare((db, p: { id: string; at: Date }) =>
  db.updateTable('webhook_delivery').set({ state: 'cancelled', completed_at: p.at }).where('id', '=', p.id).where('state', '=', 'pending'));

/** The dispatcher's batch: every workspace's events not yet dispatched. */
const UNDISPATCHED = webhooks.prepare((db, p: { limit: number }) => db
  .selectFrom('outbox_event').select(['id', 'workspace_id', 'type', 'mode', 'data', 'created_at', 'target'])
  .where('dispatched_at', 'is', null).orderBy('id').limit(p.limit), { allWorkspaces: true });

const SUBSCRIBERS = webhooks.prepare((db, p: { workspaceId: string }) => db
  .selectFrom('webhook_endpoint').select(['id', 'events', 'modes'])
  .where('workspace_id', '=', p.workspaceId).where('is_active', '=', true).where('kind', '=', 'endpoint').orderBy('id'));

const EXISTING = webhooks.prepare((db, p: { workspaceId: string; endpointId: string; eventId: string }) => db
  .selectFrom('webhook_delivery').select(['id', 'state', 'job_id'])
  .where('endpoint_id', '=', p.endpointId).where('event_id', '=', p.eventId).where('sequence', '=', 0).where('workspace_id', '=', p.workspaceId));

/** The dispatcher's safety net: every workspace's pending deliveries left behind. */
const STALE_PENDING = webhooks.prepare((db, p: { before: Date; limit: number }) => db
  .selectFrom('webhook_delivery').select(['id', 'event_id', 'sequence', 'attempts', 'job_id'])
  .where('state', '=', 'pending').where('created_at', '<', p.before).where('test', '=', false).orderBy('id').limit(p.limit), { allWorkspaces: true });

const COUNT_USED = webhooks.prepare((db, p: { workspaceId: string; since: Date }) => db
  .selectFrom('webhook_delivery').select((eb) => eb.fn.countAll().as('n'))
  .where('workspace_id', '=', p.workspaceId).where('created_at', '>=', p.since).where('state', '<>', 'skipped'));

/** A dispatcher's delivery row (sequence 0, not a test), kept when one exists for its endpoint and event. */
const INSERT_DELIVERY = webhooks.prepare((db, p: NewDelivery & { at: Date; completedAt: Date | null }) => db
  .insertInto('webhook_delivery')
  .values({
    id: p.id, workspace_id: p.workspaceId, endpoint_id: p.endpointId, event_id: p.eventId, event_type: p.eventType, mode: p.mode, sequence: 0, test: false,
    // The envelope's JSON text as it is (the column's value, written once per event).
    event: sql<Record<string, unknown>>`${p.eventJson}`, job_id: p.jobId, state: p.state, attempts: 0, last_status: null, last_error: p.lastError,
    last_duration_ms: null, created_at: p.at, completed_at: p.completedAt,
  })
  .onConflict((oc) => oc.columns(['endpoint_id', 'event_id', 'sequence']).doNothing()));

/** PostgreSQL: a whole batch in one statement (one round trip), each column as one array parameter. */
type DeliveryColumns = 'ids' | 'workspaceIds' | 'endpointIds' | 'eventIds' | 'eventTypes' | 'modes' | 'events' | 'jobIds' | 'states' | 'lastErrors' | 'completedAts';
const INSERT_DELIVERIES = webhooks.prepare((db, p: Record<DeliveryColumns, DbArray> & { at: Date }) => db
  .insertInto('webhook_delivery')
  .columns([
    'id', 'workspace_id', 'endpoint_id', 'event_id', 'event_type', 'mode', 'sequence', 'test', 'event', 'job_id', 'state', 'attempts', 'last_status',
    'last_error', 'last_duration_ms', 'created_at', 'completed_at',
  ])
  .expression(sql`select t.id, t.workspace_id, t.endpoint_id, t.event_id, t.event_type, t.mode, 0, false, t.event, t.job_id, t.state, 0, null,
      t.last_error, null, ${p.at}::timestamptz, t.completed_at
    from unnest(${p.ids}::text[], ${p.workspaceIds}::text[], ${p.endpointIds}::text[], ${p.eventIds}::text[], ${p.eventTypes}::text[],
      ${p.modes}::text[], ${p.events}::jsonb[], ${p.jobIds}::text[], ${p.states}::text[], ${p.lastErrors}::text[], ${p.completedAts}::timestamptz[])
      as t(id, workspace_id, endpoint_id, event_id, event_type, mode, event, job_id, state, last_error, completed_at)`)
  .onConflict((oc) => oc.columns(['endpoint_id', 'event_id', 'sequence']).doNothing())
  .returning('id'));

/**
 * The webhook statements the endpoints, the dispatcher and the deliverer share. One implementation
 * for both databases; where they differ is how an attempt's three writes are committed (below).
 */
export class WebhookStore {
  /** Attempts recorded in this event-loop turn, committed together on SQLite (see `recordAttempt`). */
  private queued: { r: AttemptRecord; done: () => void; failed: (err: unknown) => void }[] = [];

  constructor(private readonly orm: MikroORM) {}

  private get em(): EntityManager {
    return this.orm.em;
  }

  async loadAttempt(deliveryId: string): Promise<AttemptRow | undefined> {
    const r = await LOAD_ATTEMPT.one(this.em, { id: deliveryId });
    return r ? attemptRow(r) : undefined;
  }

  /**
   * Several deliveries (a first-attempts job's), by id; one missing is absent from the map.
   * PostgreSQL: one statement. SQLite: one read each (each runs synchronously on the connection, so
   * the whole list costs what one statement for it does; measured, docs/benchmarks.md).
   */
  async loadAttempts(deliveryIds: readonly string[]): Promise<Map<string, AttemptRow>> {
    const out = new Map<string, AttemptRow>();
    if (dialectOf(this.em) === 'postgresql') {
      for (const r of await LOAD_ATTEMPTS.all(this.em, { ids: dbArray([...deliveryIds]) })) out.set(r.id, attemptRow(r));
    } else {
      for (const id of deliveryIds) {
        const r = await LOAD_ATTEMPT.one(this.em, { id });
        if (r) out.set(id, attemptRow(r));
      }
    }
    return out;
  }

  async cancel(deliveryId: string, at: Date): Promise<void> {
    await CANCEL.run(this.em, { id: deliveryId, at });
  }

  /**
   * PostgreSQL: one statement (a CTE), so one round trip. SQLite: the attempts that end in the same
   * event-loop turn are committed in one transaction (a commit writes every touched page to the WAL,
   * so one commit per attempt cost more than the attempt's statements); each caller's promise
   * settles only once its rows are committed.
   */
  recordAttempt(r: AttemptRecord): Promise<void> {
    if (dialectOf(this.em) === 'postgresql') return RECORD_ATTEMPT.run(this.em, recordParams(r)).then(() => undefined);
    return new Promise((done, failed) => {
      if (this.queued.push({ r, done, failed }) === 1) setImmediate(() => void this.flushAttempts());
    });
  }

  private async flushAttempts(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    const writes: Write[] = [];
    for (const { r } of batch) {
      const p = recordParams(r);
      writes.push(INSERT_ATTEMPT.with(p), UPDATE_DELIVERY.with(p));
      if (r.streak) writes.push(UPDATE_STREAK.with(p));
    }
    try {
      await writeTogether(this.em, writes);
    } catch (err) {
      for (const q of batch) q.failed(err);
      return;
    }
    for (const q of batch) q.done();
  }

  async undispatched(limit: number): Promise<OutboxRow[]> {
    const rows = await UNDISPATCHED.all(this.em, { limit });
    return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, type: r.type, mode: r.mode, data: r.data, createdAt: r.created_at, target: r.target ?? null }));
  }

  async subscribers(workspaceId: string): Promise<SubscriberRow[]> {
    return SUBSCRIBERS.all(this.em, { workspaceId });
  }

  /**
   * Inserts the rows, keeping any that already exist for the same (endpoint, event, sequence 0);
   * answers, row by row, the delivery that stands (the new one or the one found, with the job id it
   * was given). SQLite: one transaction of single-row inserts; PostgreSQL: one statement.
   */
  async insertDeliveries(rows: NewDelivery[], at: Date): Promise<{ id: string; state: DeliveryState; jobId: string | null }[]> {
    if (!rows.length) return [];
    const completedAt = (r: NewDelivery) => (r.state === 'pending' ? null : at);
    let inserted: Set<string>;
    if (dialectOf(this.em) === 'postgresql') {
      const column = <K extends keyof NewDelivery>(k: K) => dbArray(rows.map((r) => r[k]));
      inserted = new Set((await INSERT_DELIVERIES.all(this.em, {
        ids: column('id'), workspaceIds: column('workspaceId'), endpointIds: column('endpointId'), eventIds: column('eventId'),
        eventTypes: column('eventType'), modes: column('mode'), events: column('eventJson'), jobIds: column('jobId'), states: column('state'),
        lastErrors: column('lastError'), completedAts: dbArray(rows.map(completedAt)), at,
      })).map((r) => r.id));
    } else {
      const changed = await writeTogether(this.em, rows.map((r) => INSERT_DELIVERY.with({ ...r, at, completedAt: completedAt(r) })));
      inserted = new Set(rows.filter((_, i) => changed[i] === 1).map((r) => r.id));
    }
    const out: { id: string; state: DeliveryState; jobId: string | null }[] = [];
    for (const r of rows) {
      if (inserted.has(r.id)) {
        out.push({ id: r.id, state: r.state, jobId: r.jobId });
      } else {
        // Made by an earlier run that stopped before stamping its events (rare: look each up).
        const found = (await EXISTING.one(this.em, { workspaceId: r.workspaceId, endpointId: r.endpointId, eventId: r.eventId }))!;
        out.push({ id: found.id, state: found.state, jobId: found.job_id ?? null });
      }
    }
    return out;
  }

  async stampDispatched(eventIds: string[], at: Date): Promise<void> {
    await webhooks.run(this.em, (db) => db.updateTable('outbox_event').set({ dispatched_at: at }).where('id', 'in', eventIds));
  }

  async stalePending(before: Date, limit: number): Promise<StaleDelivery[]> {
    return (await STALE_PENDING.all(this.em, { before, limit })).map((r) => ({ id: r.id, eventId: r.event_id, sequence: r.sequence, attempts: r.attempts, jobId: r.job_id ?? null }));
  }

  /** Deliveries of a workspace since `since` that count toward the allowance (all but skipped). */
  async countUsed(workspaceId: string, since: Date): Promise<number> {
    return Number((await COUNT_USED.one(this.em, { workspaceId, since }))?.n ?? 0);
  }
}
