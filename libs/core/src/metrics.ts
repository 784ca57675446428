import { timingSafeEqual } from 'node:crypto';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

// Prometheus metrics (issue 30): one registry per process, in the text exposition format at
// `/metrics` (the API's route, the worker's own listener). Labels are of bounded cardinality: route
// templates, methods, statuses, queue names, kinds, formats, outcomes; never an id.
// docs/decisions.md "Fleet (issue 30): metrics".

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const RENDER_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/** Numbers read when scraped (queue depths, holds, outbox lag): each process registers what it can read. */
export type Sampler = () => Promise<void>;

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({ name: 'mr_http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'] as const, registers: [this.registry] });
  readonly httpDuration = new Histogram({ name: 'mr_http_request_duration_seconds', help: 'Time to answer an HTTP request, by route template and method', labelNames: ['route', 'method'] as const, buckets: SECONDS, registers: [this.registry] });
  readonly renders = new Counter({ name: 'mr_renders_total', help: 'Renders settled by this process, by kind, format and outcome (done, failed, cancelled)', labelNames: ['kind', 'format', 'outcome'] as const, registers: [this.registry] });
  readonly renderDuration = new Histogram({ name: 'mr_render_duration_seconds', help: 'A settled render\'s time from acceptance, by kind, format and outcome', labelNames: ['kind', 'format', 'outcome'] as const, buckets: RENDER_SECONDS, registers: [this.registry] });
  readonly frameSeconds = new Histogram({ name: 'mr_engine_frame_seconds', help: 'Engine time per frame drawn (a still is one frame), by engine', labelNames: ['engine'] as const, buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5], registers: [this.registry] });
  readonly webhookDeliveries = new Counter({ name: 'mr_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome (delivered, failed, refused)', labelNames: ['outcome'] as const, registers: [this.registry] });
  readonly webhookDuration = new Histogram({ name: 'mr_webhook_delivery_duration_seconds', help: 'A delivery attempt\'s time until the receiver answered (or failed)', labelNames: ['outcome'] as const, buckets: SECONDS, registers: [this.registry] });
  readonly providerCalls = new Counter({ name: 'mr_provider_calls_total', help: 'Calls to third-party providers, by provider and outcome', labelNames: ['provider', 'outcome'] as const, registers: [this.registry] });
  readonly queueJobs = new Gauge({ name: 'mr_queue_jobs', help: 'Jobs per queue and state (waiting, active, delayed, failed), sampled from BullMQ when scraped', labelNames: ['queue', 'state'] as const, registers: [this.registry] });
  readonly holdsOpen = new Gauge({ name: 'mr_credits_held', help: 'Credits held by renders not yet settled (every workspace), sampled when scraped', registers: [this.registry] });
  readonly outboxLag = new Gauge({ name: 'mr_outbox_lag_seconds', help: 'Age of the oldest event not yet dispatched (0: none), sampled when scraped', registers: [this.registry] });
  private readonly samplers: Sampler[] = [];

  constructor(readonly process: 'api' | 'worker') {
    this.registry.setDefaultLabels({ process });
    collectDefaultMetrics({ register: this.registry, prefix: 'mr_' });
  }

  /** Adds a sampler run at each scrape (a failing one leaves its gauges as they were); the answer removes it. */
  sample(sampler: Sampler): () => void {
    this.samplers.push(sampler);
    return () => void this.samplers.splice(this.samplers.indexOf(sampler) >>> 0, 1);
  }

  /** The exposition text (samplers first). */
  async exposition(): Promise<string> {
    await Promise.allSettled(this.samplers.map((s) => s()));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Whether an Authorization header carries the metrics token (compared in constant time). */
export function metricsAuthorized(token: string | null, header: string | undefined): boolean {
  if (!token || !header?.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice(7));
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

let current: Metrics | undefined;

/** This process's metrics (made on first use; the API and the worker name their process first). */
export function metrics(process?: 'api' | 'worker'): Metrics {
  current ??= new Metrics(process ?? 'api');
  return current;
}
