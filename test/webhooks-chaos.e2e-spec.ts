import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openAppDatabase } from '#libs/app';
import { forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent, writeEvent } from '#libs/events';
import { JobQueues } from '#libs/queue';
import { WebhookDelivery, WebhookEndpoint } from '#libs/webhooks';
import { startApi, type TestApi } from './harness.js';
import { until as poll } from './render-helpers.js';

/*
 * Webhook chaos (issue: "2,000 events to 4 endpoints, receivers misbehaving, a worker killed
 * mid-run"): a loopback receiver answers a deterministic, scripted mix per (endpoint, event) and
 * attempt number; the worker runs as a child process (`node dist/apps/worker/src/main.js`, the
 * build `npm test` makes first) and is killed with SIGKILL part-way through (while the dispatcher
 * is still fanning the outbox out and deliveries are in flight), then replaced. When
 * every delivery has settled, the books must balance: one delivery per (event, endpoint), none
 * pending, at most 5 attempts, every request signed (§6), and the receiver's 2xx count equal to
 * the succeeded deliveries.
 *
 * Bounded: the whole file must finish well under a minute on the 2-core CI machine. Two waits
 * would dominate with the production settings, and the workers here shorten both (what happens
 * is the same, only sooner): after a SIGKILL, BullMQ only takes the killed worker's active jobs
 * back once their lock has expired and a stalled check has seen them, within about twice
 * WEBHOOK_LOCK_MS (30–60 s by default, LOCK_MS here); and a delivery that keeps failing waits
 * §6's 1+4+9+16 = 30 s of back-off before its last attempt (RETRY_DELAYS here; the schedule
 * itself is test/webhooks.e2e-spec.ts's subject).
 * CHAOS_EVENTS overrides the number of events (default 1,000; the issue's figure is 2,000).
 */

// CI runs 1,000 events × 4 endpoints (both databases within the bound on 2 cores); the issue's
// 2,000 run with CHAOS_EVENTS=2000 (measured: settled in 64 s on SQLite, 76 s on PostgreSQL).
const EVENTS = Number(process.env.CHAOS_EVENTS ?? 1000);
const ENDPOINTS = 4;
const TOTAL = EVENTS * ENDPOINTS;
/** The test's own deadline for everything to settle, counted from the first publish. */
const SETTLE_MS = 140_000;
/** The worker is killed once this share of the events is dispatched (see the kill below), ... */
const KILL_AT = 0.3;
/** ... or at the latest this long after publishing. */
const KILL_CAP_MS = 30_000;
const MAX_ATTEMPTS = 5;
/**
 * The workers' delivery job lock (WEBHOOK_LOCK_MS; 30 s by default): the killed worker's attempts run
 * again once it has lapsed and a stalled check (as often) has seen them, so within about twice this.
 * Short here so the file does not wait out 30–60 s; long enough that a live worker on a busy 2-core
 * machine renews it in time (every half of it), else a running attempt would be taken over.
 */
const LOCK_MS = 5_000;
/** The waits between a delivery's 5 attempts (WEBHOOK_RETRY_DELAYS_MS, development only): 2 s in all instead of 30 s. */
const RETRY_DELAYS = '200,400,600,800';

/**
 * What a receiver does with one (endpoint, event), by attempt number. Chosen by hashing the pair,
 * so a run is reproducible. Rates keep each endpoint far from 20 consecutive failed deliveries
 * (which would disable it, §6 "Retries" 4) and keep 10 s timeouts rare (each holds a worker slot).
 */
const SCENARIOS = [
  { name: 'ok', per1000: 725, final: 'succeeded' },
  { name: '503-then-200', per1000: 80, final: 'succeeded' },
  { name: '429-then-200', per1000: 60, final: 'succeeded' },
  { name: 'reset-then-200', per1000: 50, final: 'succeeded' },
  { name: '503x2-then-200', per1000: 30, final: 'succeeded' },
  { name: 'timeout-then-200', per1000: 2, final: 'succeeded' },
  { name: '400', per1000: 50, final: 'refused' },
  { name: 'always-500', per1000: 3, final: 'failed' },
] as const;
type Scenario = (typeof SCENARIOS)[number];

function scenarioOf(path: string, eventId: string): Scenario {
  const bucket = createHash('sha256').update(`${path}|${eventId}`).digest().readUInt32BE(0) % 1000;
  let acc = 0;
  for (const s of SCENARIOS) {
    acc += s.per1000;
    if (bucket < acc) return s;
  }
  return SCENARIOS[0];
}

/** Independent verifier written from §6: HMAC-SHA256(secret, `${timestamp}.${raw body}`), hex, 5-minute window. */
function verify(secret: string, timestamp: string | undefined, body: Buffer, header: string | undefined): boolean {
  if (!timestamp || !header || !/^\d+$/.test(timestamp)) return false;
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
  return header.length === expected.length && timingSafeEqual(Buffer.from(header), Buffer.from(expected)) &&
    Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
}

interface ReceiverStats {
  requests: number;
  badSignatures: number;
  malformed: number;
  maxAttempt: number;
  /** `${path} ${eventId}` of every pair the receiver answered 2xx, and every pair it saw at all. */
  ok: Set<string>;
  seen: Set<string>;
  byScenario: Map<string, number>;
}

interface WorkerChild {
  proc: ChildProcess;
  output: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe('webhooks: chaos (scripted failures, a worker killed mid-run)', () => {
  let api: TestApi;
  let orm: Orm;
  let receiver: Server;
  let base: string;
  let workspaceId: string;
  const secrets = new Map<string, string>();
  const endpointPath = new Map<string, string>();
  const held: ServerResponse[] = [];
  const workers: WorkerChild[] = [];
  const stats: ReceiverStats = {
    requests: 0, badSignatures: 0, malformed: 0, maxAttempt: 0, ok: new Set(), seen: new Set(), byScenario: new Map(),
  };

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    stats.requests++;
    const path = (req.url ?? '').split('?')[0];
    const attempt = Number(req.headers['x-service-attempt']);
    stats.maxAttempt = Math.max(stats.maxAttempt, Number.isInteger(attempt) ? attempt : Infinity);
    const secret = secrets.get(path);
    if (!secret || !verify(secret, req.headers['x-service-timestamp'] as string, body, req.headers['x-service-signature'] as string)) {
      stats.badSignatures++;
    }
    let eventId: string;
    try {
      eventId = JSON.parse(body.toString('utf8')).id;
      if (typeof eventId !== 'string') throw new Error('no id');
    } catch {
      stats.malformed++;
      return void res.writeHead(400).end();
    }
    const pair = `${path} ${eventId}`;
    stats.seen.add(pair);
    const s = scenarioOf(path, eventId);
    stats.byScenario.set(s.name, (stats.byScenario.get(s.name) ?? 0) + 1);
    const answer = (status: number) => {
      if (status >= 200 && status < 300) stats.ok.add(pair);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(String(status));
    };
    switch (s.name) {
      case 'ok': return answer(200);
      case '503-then-200': return answer(attempt <= 1 ? 503 : 200);
      case '429-then-200': return answer(attempt <= 1 ? 429 : 200);
      case '503x2-then-200': return answer(attempt <= 2 ? 503 : 200);
      case 'reset-then-200':
        if (attempt <= 1) return void req.socket.destroy();
        return answer(200);
      case 'timeout-then-200':
        if (attempt <= 1) return void held.push(res); // never answered: the product gives up at 10 s
        return answer(200);
      case '400': return answer(400);
      case 'always-500': return answer(500);
    }
  }

  function startWorker(): WorkerChild {
    const proc = spawn(process.execPath, ['dist/apps/worker/src/main.js'], {
      cwd: process.cwd(),
      env: { ...process.env, ...api.env, WEBHOOK_CONCURRENCY: '50', WEBHOOK_LOCK_MS: String(LOCK_MS), WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const w: WorkerChild = {
      proc,
      output: '',
      exited: new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal }))),
    };
    const keep = (c: Buffer) => {
      w.output = (w.output + c.toString()).slice(-8000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    workers.push(w);
    return w;
  }

  const until = <T>(what: string, probe: () => T | false | undefined | Promise<T | false | undefined>, deadline: number, every = 250) =>
    poll(probe, what, deadline - Date.now(), every);

  async function stateCounts(): Promise<Record<string, number>> {
    const em = forWorkspace(orm, workspaceId);
    const out: Record<string, number> = {};
    for (const state of ['pending', 'succeeded', 'failed', 'refused', 'cancelled', 'skipped'] as const) {
      out[state] = await em.count(WebhookDelivery, { workspaceId, state });
    }
    return out;
  }

  /** Diagnostics of a run that did not settle: the pending deliveries and what BullMQ holds for them. */
  async function stuck(): Promise<string> {
    const queue = api.app.get(JobQueues).queue('webhooks');
    try {
      const pending = await forWorkspace(orm, workspaceId).find(WebhookDelivery, { state: 'pending' }, { orderBy: { id: 'asc' } });
      const jobStates = new Map<string, number>();
      const sample: string[] = [];
      for (const d of pending) {
        // Never attempted: the event's job (its id is the event's) holds it; else its own retry job.
        const state = await queue.getJobState(d.attempts > 0 ? d.id : d.eventId);
        jobStates.set(state, (jobStates.get(state) ?? 0) + 1);
        if (sample.length < 8) sample.push(`${d.id} (event ${d.eventId}, attempts ${d.attempts}, job ${state})`);
      }
      const counts = await queue.getJobCounts('active', 'wait', 'delayed', 'completed', 'failed');
      const active = await queue.getActive(0, 200);
      const activeByName = active.reduce<Record<string, number>>((m, j) => ({ ...m, [j.name]: (m[j.name] ?? 0) + 1 }), {});
      return `pending deliveries: ${pending.length}, their BullMQ jobs by state ${JSON.stringify(Object.fromEntries(jobStates))} ` +
        `(e.g. ${sample.join('; ')}); queue webhooks ${JSON.stringify(counts)}, active by name ${JSON.stringify(activeByName)}`;
    } catch (err) {
      return `(diagnostics failed: ${(err as Error).message})`;
    }
  }

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handle(req, res, Buffer.concat(chunks)));
    });
    receiver.keepAliveTimeout = 1000;
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    api = await startApi();
    orm = await openAppDatabase(api.config.database, { migrate: false });
    // Enterprise: 10 M deliveries a month, so none of the 8,000 is skipped for the allowance.
    const ws = (await api.cli('workspace:create', '--name', 'Chaos', '--plan', 'enterprise')).json as { workspaceId: string; liveKey: string };
    workspaceId = ws.workspaceId;
    for (let i = 0; i < ENDPOINTS; i++) {
      const path = `/chaos/${i}`;
      const res = await api.app.inject({
        method: 'POST', url: '/api/v1/webhooks', headers: { 'x-api-key': ws.liveKey },
        payload: { url: `${base}${path}`, events: ['render.completed'], description: `chaos ${i}` },
      });
      expect(res.statusCode).toBe(201);
      const { id, secret } = res.json().data as { id: string; secret: string };
      secrets.set(path, secret);
      endpointPath.set(id, path);
    }
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) {
      if (w.proc.exitCode === null && w.proc.signalCode === null) {
        w.proc.kill('SIGTERM');
        const t = setTimeout(() => w.proc.kill('SIGKILL'), 5000);
        await w.exited;
        clearTimeout(t);
      }
    }
    for (const res of held) res.destroy();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
    await orm?.close(true);
    await api?.close();
  }, 30_000);

  it(`delivers ${EVENTS} events to ${ENDPOINTS} misbehaving endpoints exactly once each, across a SIGKILL of the worker`, async () => {
    const started = Date.now();
    const deadline = started + SETTLE_MS;
    const first = startWorker();
    await until('the first worker to start', () => first.output.includes('Worker consuming queues') || first.proc.exitCode !== null, started + 20_000);
    expect(first.proc.exitCode).toBeNull();

    // Publish: outbox rows written straight to the database, flushed 200 at a time.
    const published: string[] = [];
    for (let i = 0; i < EVENTS; i += 200) {
      await orm.em.fork().transactional(async (em) => {
        for (let j = i; j < Math.min(i + 200, EVENTS); j++) {
          published.push(await writeEvent(em, workspaceId, 'render.completed', {
            id: `rnd_chaos_${j}`, status: 'done', kind: 'image', url: `https://cdn.example.com/r/${j}.png`, width: 640, height: 480, credits: 1,
          }, { mode: 'live' }));
        }
      });
    }
    const publishedAt = Date.now();

    // Kill the worker part-way through, without warning, and start another. The kill aims at the
    // harshest moment, which the dispatcher promises to survive ("safe to run twice or crash
    // half-way"): while it is fanning a batch of outbox events out (the batch's delivery rows
    // made, and maybe enqueued, but its events not yet stamped dispatched) once at least KILL_AT
    // of the events are stamped, so earlier batches are being delivered. The dispatcher inserts
    // and stamps a whole batch at once, so that window is short and can be missed; the worker is
    // then killed after the dispatch while deliveries are in flight, or at KILL_CAP_MS.
    let killPoint = '';
    await until('a point to kill the worker at', async () => {
      const em = forWorkspace(orm, workspaceId);
      const left = await em.count(OutboxEvent, { workspaceId, dispatchedAt: null });
      const stamped = EVENTS - left;
      const made = await em.count(WebhookDelivery, { workspaceId });
      const midBatch = left > 0 && made > stamped * ENDPOINTS;
      if (midBatch && stamped >= KILL_AT * EVENTS) killPoint = `mid-dispatch: ${stamped} events stamped, ${made} deliveries made, ${left} left`;
      else if (left === 0 && stats.seen.size >= KILL_AT * TOTAL) killPoint = `after dispatch, ${stats.seen.size} pairs seen`;
      else if (Date.now() - publishedAt > KILL_CAP_MS) killPoint = `at the ${KILL_CAP_MS / 1000} s cap: ${stamped} events stamped, ${left} left`;
      return killPoint;
    }, deadline, 25);
    const seenAtKill = stats.seen.size;
    first.proc.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    const second = startWorker();
    await until('the second worker to start', () => second.output.includes('Worker consuming queues') || second.proc.exitCode !== null, deadline);

    // Settled: every outbox event dispatched, every pair has its row, and none is pending.
    let last: Record<string, number> = {};
    let rows = 0;
    let undispatched = 0;
    try {
      await until('every delivery to settle', async () => {
        if (second.proc.exitCode !== null) throw new Error(`the second worker exited (${second.proc.exitCode}):\n${second.output}`);
        const em = forWorkspace(orm, workspaceId);
        undispatched = await em.count(OutboxEvent, { workspaceId, dispatchedAt: null });
        rows = await em.count(WebhookDelivery, { workspaceId });
        last = await stateCounts();
        return undispatched === 0 && rows >= TOTAL && last.pending === 0;
      }, deadline, 1000);
    } catch (err) {
      throw new Error(
        `${(err as Error).message} within ${SETTLE_MS / 1000} s: ${undispatched} outbox events undispatched, ${rows}/${TOTAL} delivery rows, ` +
          `states ${JSON.stringify(last)}; receiver saw ${stats.seen.size} pairs, ${stats.ok.size} with 2xx; ` +
          `killed after ${(killedAt - started) / 1000} s (${killPoint})\n${await stuck()}\nsecond worker output:\n${second.output}`,
        { cause: err },
      );
    }
    const settledAt = Date.now();
    process.stderr.write(
      `[chaos] ${EVENTS} events × ${ENDPOINTS} endpoints on ${api.config.database.kind}: published in ${(publishedAt - started) / 1000} s, ` +
        `SIGKILL at ${(killedAt - started) / 1000} s (${killPoint}; ${seenAtKill} pairs seen), all settled at ${(settledAt - started) / 1000} s; ` +
        `${stats.requests} requests, states ${JSON.stringify(last)}\n`,
    );

    const all = await forWorkspace(orm, workspaceId).find(WebhookDelivery, {});

    // Exactly one delivery row per (event, endpoint), and nothing else.
    const pairs = new Set(all.map((d) => `${d.endpointId} ${d.eventId}`));
    expect(all).toHaveLength(TOTAL);
    expect(pairs.size).toBe(TOTAL);
    const publishedSet = new Set(published);
    expect(all.every((d) => publishedSet.has(d.eventId) && endpointPath.has(d.endpointId) && d.sequence === 0 && !d.test)).toBe(true);

    // The books balance: succeeded + failed (retries exhausted) + refused (the 400s) = published × 4.
    const counts = await stateCounts();
    expect(counts.pending).toBe(0);
    expect(counts.cancelled).toBe(0);
    expect(counts.skipped).toBe(0);
    expect(counts.succeeded + counts.failed + counts.refused).toBe(EVENTS * ENDPOINTS);

    // At most 5 attempts, in the rows and on the wire.
    expect(Math.max(...all.map((d) => d.attempts))).toBeLessThanOrEqual(MAX_ATTEMPTS);
    expect(all.every((d) => d.attempts >= 1)).toBe(true);
    expect(stats.maxAttempt).toBeLessThanOrEqual(MAX_ATTEMPTS);

    // Every request the receiver got was signed as §6 says.
    expect(stats.malformed).toBe(0);
    expect(stats.badSignatures).toBe(0);

    // The receiver's 2xx pairs are exactly the succeeded deliveries.
    const succeeded = new Set(all.filter((d) => d.state === 'succeeded').map((d) => `${endpointPath.get(d.endpointId)} ${d.eventId}`));
    expect(stats.ok.size).toBe(counts.succeeded);
    expect([...stats.ok].filter((p) => !succeeded.has(p))).toEqual([]);

    // And each pair ended as its script says (a 400 is refused at once, a 500 every time fails).
    const wrong = all
      .map((d) => ({ d, want: scenarioOf(endpointPath.get(d.endpointId) as string, d.eventId) }))
      .filter(({ d, want }) => d.state !== want.final)
      .map(({ d, want }) => `${d.id} ${want.name}: ${d.state} after ${d.attempts}`);
    expect(wrong).toEqual([]);
    // A 400 is never retried (a job rerun after the kill finds its delivery settled, or sends attempt 1 again).
    expect(all.filter((d) => d.state === 'refused' && d.attempts !== 1).map((d) => d.id)).toEqual([]);
    expect(all.filter((d) => d.state === 'failed').every((d) => d.attempts === MAX_ATTEMPTS)).toBe(true);

    // No endpoint was disabled by the mix (20 consecutive failures).
    const endpoints = await forWorkspace(orm, workspaceId).find(WebhookEndpoint, {});
    expect(endpoints.map((e) => e.isActive)).toEqual(Array(ENDPOINTS).fill(true));
  }, 170_000);
});
