import type { MikroORM } from '@mikro-orm/core';
import { columnDate, columnJson, type AppConfig } from '#libs/core';
import type { DeliveryState } from './entities.js';
import type { BodyFormat, HeaderPair, HttpMethod, PayloadMode } from './types.js';

/*
 * The delivery hot path's SQL: the dispatcher's fan-out and every attempt, as statements prepared
 * once per process (SQLite) or named per connection (PostgreSQL), on the ORM's own connection.
 * MikroORM builds, inlines and re-prepares its SQL on every call, which cost more than the HTTP
 * request of a delivery (docs/benchmarks.md); the management routes keep using the ORM.
 *
 * SQLite: the ORM's better-sqlite3 handle, so the worker never has two writers of its own on the
 * file. Each write runs as one synchronous transaction (nothing can interleave with it), and only
 * when the ORM has no transaction of its own open on that handle (a statement run inside the
 * ORM's transaction would share its fate).
 * PostgreSQL: the ORM's pool; every write is one statement, so it is atomic without a transaction.
 */

/** A delivery and its endpoint as an attempt needs them (one read). */
export interface AttemptRow {
  state: DeliveryState;
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
    headers: HeaderPair[];
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
  data: Record<string, unknown>;
  createdAt: Date;
  /** A render's callback URL (settle events only). */
  target: string | null;
}

export interface SubscriberRow {
  id: string;
  events: string[];
}

/** A delivery row made by the dispatcher (sequence 0, not a test). */
export interface NewDelivery {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The envelope as JSON text (shared by every endpoint of one event). */
  eventJson: string;
  state: 'pending' | 'skipped';
  lastError: string | null;
}

export interface DeliveryStore {
  loadAttempt(deliveryId: string): Promise<AttemptRow | undefined>;
  cancel(deliveryId: string, at: Date): Promise<void>;
  recordAttempt(r: AttemptRecord): Promise<void>;
  undispatched(limit: number): Promise<OutboxRow[]>;
  subscribers(workspaceId: string): Promise<SubscriberRow[]>;
  plan(workspaceId: string): Promise<string | undefined>;
  /**
   * Inserts the rows, keeping any that already exist for the same (endpoint, event, sequence 0);
   * answers, row by row, the delivery that stands (the new one or the one found).
   */
  insertDeliveries(rows: NewDelivery[], at: Date): Promise<{ id: string; state: DeliveryState }[]>;
  stampDispatched(eventIds: string[], at: Date): Promise<void>;
  stalePending(before: Date, limit: number): Promise<string[]>;
  /** Deliveries of a workspace since `since` that count toward the allowance (all but skipped). */
  countUsed(workspaceId: string, since: Date): Promise<number>;
}

export async function openDeliveryStore(orm: MikroORM, database: AppConfig['database']): Promise<DeliveryStore> {
  const native = await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<unknown> }).getNativeClient();
  return database.kind === 'postgresql' ? new PgStore(native as PgPool) : new SqliteStore(native as SqliteDatabase);
}

const ATTEMPT_COLUMNS = `d.state, d.test, d.event, d.workspace_id, d.endpoint_id, e.id as e_id, e.url, e.method, e.body_format,
  e.payload_mode, e.payload_template, e.headers, e.secret_sealed, e.is_active`;
const ATTEMPT_FROM = 'from webhook_delivery d left join webhook_endpoint e on e.id = d.endpoint_id';

function attemptRow(r: Record<string, unknown> | undefined): AttemptRow | undefined {
  if (!r) return undefined;
  return {
    state: r.state as DeliveryState,
    test: Boolean(r.test),
    event: columnJson<Record<string, unknown>>(r.event),
    workspaceId: r.workspace_id as string,
    endpointId: r.endpoint_id as string,
    endpoint: r.e_id === null || r.e_id === undefined ? null : {
      url: r.url as string,
      method: r.method as HttpMethod,
      bodyFormat: r.body_format as BodyFormat,
      payloadMode: r.payload_mode as PayloadMode,
      payloadTemplate: (r.payload_template as string | null) ?? null,
      headers: columnJson<HeaderPair[]>(r.headers),
      secretSealed: r.secret_sealed as string,
      isActive: Boolean(r.is_active),
    },
  };
}

function outboxRow(r: Record<string, unknown>): OutboxRow {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    type: r.type as string,
    data: columnJson<Record<string, unknown>>(r.data),
    createdAt: columnDate(r.created_at) as Date,
    target: (r.target as string | null | undefined) ?? null,
  };
}

/**
 * The endpoint's streak after an attempt that ended a delivery, in one UPDATE whose right-hand
 * sides all see the row as it was: a success clears the streak (written only when there is
 * something to change, see `successStampAfter`); a failure lengthens it and, at the limit,
 * disables an endpoint that is still active (a paused one stays paused). Render callback targets
 * (kind `callback`) are never disabled: each render names its own URL. `:false` is the dialect's false.
 */
const STREAK_SET = `consecutive_failures = case when :kind = 'success' then 0 else consecutive_failures + 1 end,
  last_success_at = case when :kind = 'success' then :at else last_success_at end,
  last_failure_at = case when :kind = 'failure' then :at else last_failure_at end,
  is_active = case when :kind = 'failure' and is_active and kind = 'endpoint' and consecutive_failures + 1 >= :limit then :false else is_active end,
  disabled_at = case when :kind = 'failure' and is_active and kind = 'endpoint' and consecutive_failures + 1 >= :limit then :at else disabled_at end`;
const STREAK_WHERE = `(:kind = 'failure' or consecutive_failures <> 0 or last_success_at is null or last_success_at < :fresh)`;
/** A `:name` placeholder (not the second colon of a PostgreSQL `::type` cast). */
const PARAM = /(?<!:):(\w+)/g;

// ---------------------------------------------------------------------------------------------

interface SqliteStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  readonly inTransaction: boolean;
}

const SQLITE_STREAK = `update webhook_endpoint set ${STREAK_SET.replaceAll(':false', '0').replaceAll(PARAM, '@$1')}
  where id = @id and ${STREAK_WHERE.replaceAll(PARAM, '@$1')}`;

class SqliteStore implements DeliveryStore {
  private readonly statements = new Map<string, SqliteStatement>();
  /** Attempts recorded in this event-loop turn, committed together (see `recordAttempt`). */
  private queued: { r: AttemptRecord; done: () => void; failed: (err: unknown) => void }[] = [];

  constructor(private readonly db: SqliteDatabase) {}

  private stmt(sql: string): SqliteStatement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Waits until the ORM has no transaction open on the shared handle (see the file's comment). */
  private async idle(): Promise<void> {
    while (this.db.inTransaction) await new Promise((r) => setImmediate(r));
  }

  async loadAttempt(deliveryId: string): Promise<AttemptRow | undefined> {
    await this.idle();
    return attemptRow(this.stmt(`select ${ATTEMPT_COLUMNS} ${ATTEMPT_FROM} where d.id = ?`).get(deliveryId) as Record<string, unknown> | undefined);
  }

  async cancel(deliveryId: string, at: Date): Promise<void> {
    await this.idle();
    this.stmt(`update webhook_delivery set state = 'cancelled', completed_at = ? where id = ? and state = 'pending'`).run(at.getTime(), deliveryId);
  }

  /**
   * Attempts that end in the same event-loop turn are committed in one transaction (a commit
   * writes every touched page to the WAL, so one commit per attempt cost more than the attempt's
   * statements). Each caller's promise settles only once its row is committed.
   */
  recordAttempt(r: AttemptRecord): Promise<void> {
    return new Promise((done, failed) => {
      if (this.queued.push({ r, done, failed }) === 1) setImmediate(() => void this.flushAttempts());
    });
  }

  private async flushAttempts(): Promise<void> {
    await this.idle();
    const batch = this.queued;
    this.queued = [];
    try {
      this.db.transaction(() => {
        for (const { r } of batch) this.writeAttempt(r);
      })();
    } catch (err) {
      for (const q of batch) q.failed(err);
      return;
    }
    for (const q of batch) q.done();
  }

  private writeAttempt(r: AttemptRecord): void {
    const at = r.at.getTime();
    this.stmt(`insert into webhook_attempt (id, delivery_id, attempt, status, error, duration_ms, signed_at, created_at)
      values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (delivery_id, attempt) do nothing`)
      .run(`${r.deliveryId}:${r.attempt}`, r.deliveryId, r.attempt, r.status, r.error, r.durationMs, r.signedAt, at);
    this.stmt(`update webhook_delivery set attempts = ?, last_status = ?, last_error = ?, last_duration_ms = ?,
      state = coalesce(?, state), completed_at = case when ? is null then completed_at else ? end where id = ?`)
      .run(r.attempt, r.status, r.error, r.durationMs, r.state, r.state, at, r.deliveryId);
    if (r.streak) {
      this.stmt(SQLITE_STREAK).run({ id: r.endpointId, kind: r.streak, at, limit: r.disableAfter, fresh: r.successStampAfter.getTime() });
    }
  }

  async undispatched(limit: number): Promise<OutboxRow[]> {
    await this.idle();
    const rows = this.stmt('select id, workspace_id, type, data, created_at, target from outbox_event where dispatched_at is null order by id limit ?').all(limit);
    return (rows as Record<string, unknown>[]).map(outboxRow);
  }

  async subscribers(workspaceId: string): Promise<SubscriberRow[]> {
    await this.idle();
    const rows = this.stmt("select id, events from webhook_endpoint where workspace_id = ? and is_active = 1 and kind = 'endpoint' order by id").all(workspaceId);
    return (rows as Record<string, unknown>[]).map((r) => ({ id: r.id as string, events: columnJson<string[]>(r.events) }));
  }

  async plan(workspaceId: string): Promise<string | undefined> {
    await this.idle();
    return (this.stmt('select plan from workspace where id = ?').get(workspaceId) as { plan: string } | undefined)?.plan;
  }

  async insertDeliveries(rows: NewDelivery[], at: Date): Promise<{ id: string; state: DeliveryState }[]> {
    await this.idle();
    const ts = at.getTime();
    const insert = this.stmt(`insert into webhook_delivery (id, workspace_id, endpoint_id, event_id, event_type, sequence, test, event, state,
        attempts, last_status, last_error, last_duration_ms, created_at, completed_at)
      values (?, ?, ?, ?, ?, 0, 0, ?, ?, 0, null, ?, null, ?, ?) on conflict (endpoint_id, event_id, sequence) do nothing`);
    const existing = this.stmt('select id, state from webhook_delivery where endpoint_id = ? and event_id = ? and sequence = 0');
    const out: { id: string; state: DeliveryState }[] = [];
    this.db.transaction(() => {
      for (const r of rows) {
        const done = r.state === 'pending' ? null : ts;
        if (insert.run(r.id, r.workspaceId, r.endpointId, r.eventId, r.eventType, r.eventJson, r.state, r.lastError, ts, done).changes === 1) {
          out.push({ id: r.id, state: r.state });
        } else {
          out.push(existing.get(r.endpointId, r.eventId) as { id: string; state: DeliveryState });
        }
      }
    })();
    return out;
  }

  async stampDispatched(eventIds: string[], at: Date): Promise<void> {
    await this.idle();
    const stamp = this.stmt('update outbox_event set dispatched_at = ? where id = ?');
    this.db.transaction(() => {
      for (const id of eventIds) stamp.run(at.getTime(), id);
    })();
  }

  async stalePending(before: Date, limit: number): Promise<string[]> {
    await this.idle();
    const rows = this.stmt(`select id from webhook_delivery where state = 'pending' and created_at < ? and test = 0 order by id limit ?`).all(before.getTime(), limit);
    return (rows as { id: string }[]).map((r) => r.id);
  }

  async countUsed(workspaceId: string, since: Date): Promise<number> {
    await this.idle();
    const row = this.stmt(`select count(*) as n from webhook_delivery where workspace_id = ? and created_at >= ? and state <> 'skipped'`).get(workspaceId, since.getTime());
    return Number((row as { n: number }).n);
  }
}

// ---------------------------------------------------------------------------------------------

interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/** `:name` placeholders → `$n` (each name numbered once, in order of first use). */
function numbered(sql: string): { text: string; order: string[] } {
  const order: string[] = [];
  const text = sql.replaceAll(PARAM, (_, name: string) => {
    if (name === 'false') return 'false';
    let i = order.indexOf(name);
    if (i < 0) i = order.push(name) - 1;
    return `$${i + 1}`;
  });
  return { text, order };
}

// One statement, so one round trip and atomic: the log line, the delivery, the endpoint's streak.
const PG_RECORD = numbered(`with a as (
    insert into webhook_attempt (id, delivery_id, attempt, status, error, duration_ms, signed_at, created_at)
    values (:attemptId, :deliveryId, :attempt::int, :status::int, :error::text, :durationMs::int, :signedAt::int, :at::timestamptz)
    on conflict (delivery_id, attempt) do nothing
  ), d as (
    update webhook_delivery set attempts = :attempt::int, last_status = :status::int, last_error = :error::text,
      last_duration_ms = :durationMs::int, state = coalesce(:state::varchar, state),
      completed_at = case when :state::varchar is null then completed_at else :at::timestamptz end
    where id = :deliveryId
  )
  update webhook_endpoint set ${STREAK_SET.replaceAll(':kind', ':kind::text').replaceAll(':at', ':at::timestamptz').replaceAll(':limit', ':limit::int')}
  where id = :endpointId and :kind::text is not null and ${STREAK_WHERE.replaceAll(':kind', ':kind::text').replaceAll(':fresh', ':fresh::timestamptz')}`);

const PG_INSERT = `insert into webhook_delivery (id, workspace_id, endpoint_id, event_id, event_type, sequence, test, event, state,
    attempts, last_status, last_error, last_duration_ms, created_at, completed_at)
  select t.id, t.workspace_id, t.endpoint_id, t.event_id, t.event_type, 0, false, t.event, t.state, 0, null, t.last_error, null, $9::timestamptz, t.completed_at
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::text[], $8::text[], $10::timestamptz[])
    as t(id, workspace_id, endpoint_id, event_id, event_type, event, state, last_error, completed_at)
  on conflict (endpoint_id, event_id, sequence) do nothing
  returning id`;

class PgStore implements DeliveryStore {
  constructor(private readonly pool: PgPool) {}

  private async rows(name: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    return (await this.pool.query({ name: `webhooks.${name}`, text, values })).rows;
  }

  async loadAttempt(deliveryId: string): Promise<AttemptRow | undefined> {
    return attemptRow((await this.rows('attempt-load', `select ${ATTEMPT_COLUMNS} ${ATTEMPT_FROM} where d.id = $1`, [deliveryId]))[0]);
  }

  async cancel(deliveryId: string, at: Date): Promise<void> {
    await this.rows('cancel', `update webhook_delivery set state = 'cancelled', completed_at = $1 where id = $2 and state = 'pending'`, [at, deliveryId]);
  }

  async recordAttempt(r: AttemptRecord): Promise<void> {
    const named: Record<string, unknown> = {
      attemptId: `${r.deliveryId}:${r.attempt}`, deliveryId: r.deliveryId, attempt: r.attempt, status: r.status, error: r.error,
      durationMs: r.durationMs, signedAt: r.signedAt, at: r.at, state: r.state, endpointId: r.endpointId, kind: r.streak,
      limit: r.disableAfter, fresh: r.successStampAfter,
    };
    await this.rows('attempt-record', PG_RECORD.text, PG_RECORD.order.map((k) => named[k]));
  }

  async undispatched(limit: number): Promise<OutboxRow[]> {
    const rows = await this.rows('outbox-undispatched', 'select id, workspace_id, type, data, created_at, target from outbox_event where dispatched_at is null order by id limit $1', [limit]);
    return rows.map(outboxRow);
  }

  async subscribers(workspaceId: string): Promise<SubscriberRow[]> {
    const rows = await this.rows('subscribers', "select id, events from webhook_endpoint where workspace_id = $1 and is_active = true and kind = 'endpoint' order by id", [workspaceId]);
    return rows.map((r) => ({ id: r.id as string, events: columnJson<string[]>(r.events) }));
  }

  async plan(workspaceId: string): Promise<string | undefined> {
    return (await this.rows('workspace-plan', 'select plan from workspace where id = $1', [workspaceId]))[0]?.plan as string | undefined;
  }

  async insertDeliveries(rows: NewDelivery[], at: Date): Promise<{ id: string; state: DeliveryState }[]> {
    if (!rows.length) return [];
    const col = <K extends keyof NewDelivery>(k: K) => rows.map((r) => r[k]);
    const inserted = new Set((await this.rows('deliveries-insert', PG_INSERT, [
      col('id'), col('workspaceId'), col('endpointId'), col('eventId'), col('eventType'), col('eventJson'), col('state'), col('lastError'),
      at.toISOString(), rows.map((r) => (r.state === 'pending' ? null : at.toISOString())),
    ])).map((r) => r.id as string));
    const out: { id: string; state: DeliveryState }[] = [];
    for (const r of rows) {
      if (inserted.has(r.id)) out.push({ id: r.id, state: r.state });
      else {
        // Made by an earlier run that stopped before stamping its events (rare: look each up).
        const [found] = await this.rows('deliveries-existing', 'select id, state from webhook_delivery where endpoint_id = $1 and event_id = $2 and sequence = 0', [r.endpointId, r.eventId]);
        out.push(found as { id: string; state: DeliveryState });
      }
    }
    return out;
  }

  async stampDispatched(eventIds: string[], at: Date): Promise<void> {
    await this.rows('outbox-stamp', 'update outbox_event set dispatched_at = $1 where id = any($2::text[])', [at, eventIds]);
  }

  async stalePending(before: Date, limit: number): Promise<string[]> {
    const rows = await this.rows('stale-pending', `select id from webhook_delivery where state = 'pending' and created_at < $1 and test = false order by id limit $2`, [before, limit]);
    return rows.map((r) => r.id as string);
  }

  async countUsed(workspaceId: string, since: Date): Promise<number> {
    const rows = await this.rows('deliveries-used', `select count(*) as n from webhook_delivery where workspace_id = $1 and created_at >= $2 and state <> 'skipped'`, [workspaceId, since]);
    return Number(rows[0].n);
  }
}
