import { decryptSecret, deriveKey, metrics, type AppConfig } from '#libs/core';
import { type OutboundPolicy } from '#libs/outbound';
import { buildDelivery, type DeliveryRequest } from './build.js';
import { openHeaders } from './header-values.js';
import type { DeliveryState } from './entities.js';
import { DELIVERY_ATTEMPTS } from '#libs/queue';
import { classifyResponse, type AttemptOutcome } from './retry.js';
import { sendDelivery, type DeliveryResult, type SendOptions } from './send.js';
import type { AttemptRow, WebhookStore } from './store.js';
import { TemplateRefused } from './template.js';
import type { EventEnvelope } from './types.js';

/** Consecutive failed deliveries that disable an endpoint (§6 "Retries" 4). */
export const DISABLE_AFTER_FAILURES = 20;

/**
 * A success writes the endpoint row only when its streak is not 0 or its lastSuccessAt is older
 * than this: lastSuccessAt is exact to within this much (docs/benchmarks.md, webhook fan-out).
 */
export const LAST_SUCCESS_GRANULARITY_MS = 1000;

/**
 * Sends of one event job at once (`firstAttempts`): the worker runs WEBHOOK_CONCURRENCY jobs, so at
 * most this many times as many requests are in flight; an event with more endpoints sends in waves.
 */
export const EVENT_SENDS_AT_ONCE = 16;

/**
 * A first-attempts job reads its deliveries once, at its start (one statement on PostgreSQL); a send
 * that starts this long or more after that read (a wave behind slow receivers) reads its delivery
 * again, so a pause, a deletion or a cancel (and an edit, a rotated secret, the endpoint's own
 * auto-disable) is seen within this long (decisions.md "Speed (issue 33): webhooks-speed").
 */
export const JOB_READ_FRESH_MS = 1000;

/** Decrypted secrets and header values kept per process, by their sealed text (a new secret is a new sealed text). */
const MAX_CACHED_SECRETS = 1000;

/** An event job's attempt of one delivery: its outcome, and the attempts made once it is done. */
export interface EventAttempt {
  deliveryId: string;
  outcome: AttemptOutcome | 'cancelled';
  after: number;
}

export interface DelivererOptions {
  /** Replaced in tests (DNS); defaults to sendDelivery. */
  send?: (req: DeliveryRequest, opts: SendOptions) => Promise<DeliveryResult>;
  timeoutMs?: number;
}

/** One HTTP attempt of a delivery (§6): the worker's `webhooks.deliver` job and the API's test sends. */
export class WebhookDeliverer {
  private readonly sealKey: Buffer;
  private readonly policy: OutboundPolicy;
  private readonly send: NonNullable<DelivererOptions['send']>;
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly store: WebhookStore,
    config: Pick<AppConfig, 'appSecret' | 'env'>,
    private readonly options: DelivererOptions = {},
  ) {
    this.sealKey = deriveKey(config.appSecret, 'encryption');
    this.policy = config.env;
    this.send = options.send ?? sendDelivery;
  }

  /**
   * One HTTP attempt of a delivery, recorded in the log. On success, or when the delivery ends
   * (non-retryable answer, or the last attempt), settles it and the endpoint's streak.
   * Returns the outcome; `retry` means another attempt is due.
   *
   * One read (the delivery with its endpoint, so a pause or deletion is seen at once) and one write
   * (one transaction, or one statement); the endpoint's secret and header values are decrypted once
   * per process and sealed text.
   */
  async attempt(deliveryId: string, attempt: number, opts: { final?: boolean } = {}): Promise<AttemptOutcome | 'cancelled'> {
    const row = await this.store.loadAttempt(deliveryId);
    if (!row || row.state !== 'pending') return 'cancelled';
    return this.attemptLoaded(deliveryId, row, attempt, opts);
  }

  /**
   * The first attempt of each of an event's deliveries (the `webhooks.deliver-event` job),
   * EVENT_SENDS_AT_ONCE at a time. A rerun of the job sends only what it had not recorded: a
   * delivery settled meanwhile is left alone, and one with attempts recorded is answered `retry`
   * with those attempts (`after`), so that its retry is enqueued even when the run that recorded it
   * died before enqueueing it (the retry's job id is the delivery's: enqueued once). The deliveries
   * are read together at the start, and again one by one once that read is JOB_READ_FRESH_MS old.
   */
  async firstAttempts(deliveryIds: readonly string[]): Promise<EventAttempt[]> {
    const out: EventAttempt[] = [];
    const readAt = performance.now();
    const read = await this.store.loadAttempts(deliveryIds);
    const rowOf = (id: string) => (performance.now() - readAt < JOB_READ_FRESH_MS ? read.get(id) : this.store.loadAttempt(id));
    let next = 0;
    // A lane that fails (the database) stops the others taking new deliveries, and the job fails only
    // once every lane has settled: a rerun never finds a first attempt still being sent by this run.
    let stop = false;
    const lane = async () => {
      try {
        while (!stop && next < deliveryIds.length) {
          const deliveryId = deliveryIds[next++];
          const row = await rowOf(deliveryId);
          if (!row || row.state !== 'pending') out.push({ deliveryId, outcome: 'cancelled', after: row?.attempts ?? 0 });
          else if (row.attempts > 0) out.push({ deliveryId, outcome: 'retry', after: row.attempts });
          else out.push({ deliveryId, outcome: await this.attemptLoaded(deliveryId, row, 1), after: 1 });
        }
      } catch (err) {
        stop = true;
        throw err;
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: Math.min(EVENT_SENDS_AT_ONCE, deliveryIds.length) }, lane));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return out;
  }

  private async attemptLoaded(deliveryId: string, row: AttemptRow, attempt: number, opts: { final?: boolean } = {}): Promise<AttemptOutcome | 'cancelled'> {
    const endpoint = row.endpoint;
    if (!endpoint || (!endpoint.isActive && !row.test)) {
      await this.store.cancel(deliveryId, new Date());
      return 'cancelled';
    }
    const timestamp = Math.floor(Date.now() / 1000);
    let result: DeliveryResult;
    try {
      const req = buildDelivery(
        {
          ...endpoint, id: row.endpointId, secret: this.secretOf(endpoint.secretSealed),
          headers: openHeaders(endpoint.headers, (sealed) => this.secretOf(sealed)),
        },
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
    await this.store.recordAttempt({
      deliveryId, endpointId: row.endpointId, attempt, status: result.status ?? null, error, durationMs: result.durationMs,
      signedAt: timestamp, at, state: last ? state : null,
      // Test deliveries never touch the streak (§6).
      streak: row.test ? null : outcome === 'success' ? 'success' : last ? 'failure' : null,
      disableAfter: DISABLE_AFTER_FAILURES,
      successStampAfter: new Date(at.getTime() - LAST_SUCCESS_GRANULARITY_MS),
    });
    // Metrics (issue 30): each attempt recorded, by what the receiver's answer made of it.
    const counted = outcome === 'success' ? 'delivered' : outcome === 'fail' ? 'refused' : 'failed';
    const m = metrics();
    m.webhookDeliveries.inc({ outcome: counted });
    m.webhookDuration.observe({ outcome: counted }, result.durationMs / 1000);
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
}
