#!/usr/bin/env node
/**
 * Webhook fan-out benchmark: deliveries per second from ONE worker (outbox → dispatcher → BullMQ →
 * signed HTTP POST) to a loopback receiver answering 200, against a bare loop of signed JSON POSTs
 * sent from one Node process to the same receiver in the same run, on kept-alive connections as the
 * product sends them (and, for comparison, on a fresh connection each). See docs/benchmarks.md.
 *
 *   node bench/webhook-fanout.mjs [--events 2000] [--endpoints 4] [--concurrency 50] [--timeout 120]
 *                                 [--pg postgres://user@host:port] [--profile DIR] [--json]
 *
 * Self-contained: its own redis-server (unless REDIS_URL is set), a temp DATA_DIR (SQLite, or a fresh
 * database on the PostgreSQL server given with --pg), the API, one worker and the receiver as child
 * processes (bench/lib: flags, the stack, cleanup on exit, error or Ctrl-C, the output).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Agent as HttpAgent, createServer as createHttpServer, request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  ROOT, busyBeforeLoad, cpuProfileArgs, cpuTimes, createPgDatabase, integer, log, machine, printProfile, procCpuTicks, profileSummary, runBench,
  sleep, startChild, startStack, startWorker, stealPct, stopChild, waitFor,
} from './lib/harness.mjs';

const TARGET_RATE = 500;
const TARGET_RATIO = 0.5;
const EVENT_TYPE = 'render.completed';

/** A render.completed `data` shaped like the product's (§6 "Default payload"), about 500 bytes. */
function renderData(i) {
  return {
    id: `rnd_bench${String(i).padStart(23, '0')}`, status: 'done', kind: 'image', templateId: 'tpl_01HX0000000000000000000000',
    url: `https://cdn.example.com/renders/rnd_bench${i}.png`, posterUrl: null, thumbnailUrl: `https://cdn.example.com/renders/rnd_bench${i}-thumb.png`,
    format: 'png', width: 1280, height: 720, duration: null, fileSizeBytes: 183_204, renderTime: 812, credits: 1, watermarked: false,
    expiresAt: '2026-12-22T00:00:00.000Z',
  };
}

/** A sleep that does not keep the process alive (the losing side of a race with a deadline). */
function raceTimer(ms) {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** Wall-clock milliseconds with sub-ms resolution, comparable between processes. */
function nowMs() {
  return performance.timeOrigin + performance.now();
}

/** User+system CPU seconds of each named process so far (null: unknown). */
function cpuSnapshot(procs) {
  return Object.fromEntries(Object.entries(procs).map(([name, pid]) => {
    const ticks = pid ? procCpuTicks(pid) : null;
    return [name, ticks === null ? null : ticks / 100];
  }));
}

function cpuDelta(before, after) {
  return Object.fromEntries(Object.keys(before).map((k) => [
    k, before[k] === null || after[k] === null ? null : Math.round((after[k] - before[k]) * 100) / 100,
  ]));
}

// ---------------------------------------------------------------------------------------------
// The receiver (a child: `node bench/webhook-fanout.mjs --receiver`, driven over IPC)
// ---------------------------------------------------------------------------------------------

function receiverMain() {
  let secrets = {};
  let verifyEvery = 25;
  let phase = null;
  let target = 0;
  let stats = null;
  const fresh = () => ({ requests: 0, distinct: 0, retries: 0, verified: 0, badSignatures: 0, badRequests: 0, firstAt: null, lastAt: null });
  let seen = new Set();

  const verify = (secret, ts, body, header) => {
    const expected = `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`;
    const got = String(header ?? '');
    return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected)) &&
      Math.abs(Date.now() / 1000 - Number(ts)) <= 300;
  };

  const server = createHttpServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (!stats) return;
      const at = nowMs();
      const s = stats;
      s.requests++;
      s.firstAt ??= at;
      s.lastAt = at;
      const body = Buffer.concat(chunks);
      const path = req.url ?? '';
      let id;
      try {
        id = JSON.parse(body.toString('utf8')).id;
      } catch {
        s.badRequests++;
        return;
      }
      if (req.headers['x-service-attempt'] !== '1') s.retries++;
      const secret = secrets[path];
      if (!secret || req.headers['x-service-event'] !== EVENT_TYPE) s.badRequests++;
      else if (s.requests % verifyEvery === 1) {
        if (verify(secret, req.headers['x-service-timestamp'], body, req.headers['x-service-signature'])) s.verified++;
        else s.badSignatures++;
      }
      const key = `${path} ${id}`;
      if (!seen.has(key)) {
        seen.add(key);
        s.distinct++;
        if (s.distinct === target) process.send({ type: 'done', phase, at, stats: s });
      }
    });
  });
  server.keepAliveTimeout = 5000;
  process.on('message', (m) => {
    if (m.type === 'config') {
      secrets = m.secrets;
      verifyEvery = m.verifyEvery ?? verifyEvery;
    } else if (m.type === 'expect') {
      phase = m.phase;
      target = m.total;
      stats = fresh();
      seen = new Set();
      process.send({ type: 'expecting', phase });
    } else if (m.type === 'stats') {
      process.send({ type: 'stats', phase, stats });
    }
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
}

/** Parent side: the receiver child and a promise per message type. */
function receiverClient(child) {
  const waiters = [];
  child.on('message', (m) => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].match(m)) {
        waiters[i].resolve(m);
        waiters.splice(i, 1);
      }
    }
  });
  const next = (match, what, timeoutMs) => new Promise((res, rej) => {
    const entry = { match, resolve: (m) => { clearTimeout(entry.timer); res(m); } };
    entry.timer = setTimeout(() => {
      const i = waiters.indexOf(entry);
      if (i >= 0) waiters.splice(i, 1);
      rej(new Error(`${what}: no answer from the receiver within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    entry.timer.unref();
    waiters.push(entry);
  });
  return {
    next,
    async expect(phase, total) {
      const ack = next((m) => m.type === 'expecting' && m.phase === phase, 'expect', 10_000);
      child.send({ type: 'expect', phase, total });
      await ack;
      return next((m) => m.type === 'done' && m.phase === phase, phase, 24 * 3600_000);
    },
    async stats() {
      const p = next((m) => m.type === 'stats', 'stats', 10_000);
      child.send({ type: 'stats' });
      return (await p).stats;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The bare loop: the same kind of signed JSON POST, on kept-alive connections as the product sends
// them (keepAlive), or on a fresh connection per request (agent: false, as the product did before)
// ---------------------------------------------------------------------------------------------

async function bareLoop({ port, endpoints, events, concurrency, keepAlive }) {
  const total = events * endpoints.length;
  let next = 0;
  let failures = 0;
  const agent = keepAlive ? new HttpAgent({ keepAlive: true, timeout: 4000 }) : false;
  const one = (i) => new Promise((done) => {
    const endpoint = endpoints[i % endpoints.length];
    const n = Math.floor(i / endpoints.length);
    const event = { id: `evt_bare${String(n).padStart(24, '0')}`, type: EVENT_TYPE, created: new Date().toISOString(), data: renderData(n) };
    const body = Buffer.from(JSON.stringify(event), 'utf8');
    const ts = Math.floor(Date.now() / 1000);
    const signature = `sha256=${createHmac('sha256', endpoint.secret).update(`${ts}.`).update(body).digest('hex')}`;
    const req = httpRequest({
      host: '127.0.0.1', port, path: endpoint.path, method: 'POST', agent,
      headers: {
        'Content-Type': 'application/json', 'User-Agent': 'service-webhooks/1.0', 'X-Service-Event': EVENT_TYPE,
        'X-Service-Timestamp': String(ts), 'X-Service-Attempt': '1', 'X-Service-Signature': signature, 'Content-Length': String(body.length),
      },
    }, (res) => {
      if (res.statusCode < 200 || res.statusCode >= 300) failures++;
      res.on('data', () => {});
      res.on('end', done);
      res.on('error', () => { failures++; done(); });
    });
    req.on('error', () => { failures++; done(); });
    req.end(body);
  });
  const started = nowMs();
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, async () => {
    while (next < total) await one(next++);
  }));
  const finished = nowMs();
  if (agent) agent.destroy();
  return { started, finished, failures };
}

async function bench(opts) {
  const total = opts.events * opts.endpoints;

  // 1-3. Redis, a temp DATA_DIR (SQLite) or a fresh database on the --pg server, a workspace
  //      (enterprise: 10 M deliveries a month, so none is skipped) and its live key, the API.
  const databaseUrl = opts.pg ? await createPgDatabase(opts.pg) : undefined;
  const { base, env, workspace, api, redis } = await startStack({
    // The video engine stays off (its bundling would share the worker's CPU with the deliveries).
    name: 'webhook-fanout', redisPrefix: `bench${randomBytes(3).toString('hex')}`, databaseUrl,
    extraEnv: { NODE_OPTIONS: undefined, VIDEO_ENGINE: process.env.VIDEO_ENGINE ?? 'off' },
  });

  // 4. The receiver and one worker.
  const receiver = startChild('receiver', process.execPath, [fileURLToPath(import.meta.url), '--receiver'], process.env, { ipc: true });
  const rc = receiverClient(receiver);
  const receiverPort = (await rc.next((m) => m.type === 'ready', 'receiver start', 10_000)).port;
  log(`receiver on http://127.0.0.1:${receiverPort}`);

  const nodeArgs = [];
  let profileSince = 0;
  if (opts.profile) {
    mkdirSync(opts.profile, { recursive: true });
    profileSince = Date.now();
    // --cpu-prof writes its file on a normal exit only; Nest ends a SIGTERM by re-raising it, so
    // SIGUSR2 (sent by this script at the end) exits the worker normally.
    nodeArgs.push(...cpuProfileArgs(opts.profile));
  }
  const workerEnv = process.env.BENCH_WORKER_NODE_OPTIONS ? { ...env, NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : env;
  const worker = startWorker('worker', workerEnv, { nodeArgs });
  await waitFor('worker', worker, () => worker.output.includes('Worker consuming queues'), 30_000);
  log(`worker pid ${worker.pid} (WEBHOOK_CONCURRENCY ${env.WEBHOOK_CONCURRENCY ?? '50 (default)'})${opts.profile ? `, profiling to ${opts.profile}` : ''}`);

  // 5. K endpoints subscribed to render.completed, one path each.
  const endpoints = [];
  for (let i = 0; i < opts.endpoints; i++) {
    const path = `/hook/${i}`;
    const res = await fetch(`${base}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': workspace.liveKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}${path}`, events: [EVENT_TYPE], description: `bench ${i}` }),
    });
    const body = await res.json().catch(() => null);
    if (res.status !== 201 || !body?.data?.secret) throw new Error(`POST /api/v1/webhooks answered ${res.status}: ${JSON.stringify(body)}`);
    endpoints.push({ id: body.data.id, path, secret: body.data.secret });
  }
  receiver.send({ type: 'config', secrets: Object.fromEntries(endpoints.map((e) => [e.path, e.secret])), verifyEvery: 25 });
  log(`${opts.endpoints} endpoints registered; ${opts.events} events × ${opts.endpoints} = ${total} deliveries per phase`);

  const busyBefore = await busyBeforeLoad();
  const procs = { worker: worker.pid, api: api.pid, receiver: receiver.pid, redis: redis?.pid ?? null, bench: process.pid };

  // 6. Baselines: the bare signed POST loop from this process, on fresh connections and then on
  //    kept-alive ones (the product keeps connections alive; that is the like-for-like figure).
  const runBare = async (phase, keepAlive) => {
    const done = rc.expect(phase, total);
    const cpu0 = cpuSnapshot(procs);
    const sys0 = cpuTimes();
    const b = await bareLoop({ port: receiverPort, endpoints, events: opts.events, concurrency: opts.concurrency, keepAlive });
    const seen = await Promise.race([done, raceTimer(10_000).then(() => null)]);
    if (!seen) throw new Error(`${phase} loop: the receiver saw ${(await rc.stats()).distinct} of ${total} requests`);
    if (b.failures) throw new Error(`${phase} loop: ${b.failures} requests failed`);
    b.stats = seen.stats;
    b.cpuSec = cpuDelta(cpu0, cpuSnapshot(procs));
    b.stealPct = stealPct(sys0, cpuTimes());
    b.seconds = (b.finished - b.started) / 1000;
    b.perSec = total / b.seconds;
    log(`${phase.padEnd(10)}  ${b.perSec.toFixed(0).padStart(6)} req/s  (${total} in ${b.seconds.toFixed(2)} s, concurrency ${opts.concurrency}, ` +
      `${keepAlive ? 'kept-alive connections' : 'a fresh connection per request'})`);
    return b;
  };
  const bareFresh = await runBare('bare-fresh', false);
  await sleep(500);
  const bare = await runBare('bare', true);
  await sleep(500);

  // 7. The product: outbox rows → dispatcher → deliveries → the receiver.
  const { loadConfig } = await import(pathToFileURL(join(ROOT, 'dist/libs/core/src/index.js')).href);
  const { openAppDatabase } = await import(pathToFileURL(join(ROOT, 'dist/libs/app/src/index.js')).href);
  const { writeEvent } = await import(pathToFileURL(join(ROOT, 'dist/libs/events/src/index.js')).href);
  const config = loadConfig(env);
  const orm = await openAppDatabase(config.database, { migrate: false });
  let product;
  try {
    const done = rc.expect('product', total);
    const cpu0 = cpuSnapshot(procs);
    const sys0 = cpuTimes();
    const started = nowMs();
    const batch = 200;
    for (let i = 0; i < opts.events; i += batch) {
      await orm.em.fork().transactional(async (em) => {
        for (let j = i; j < Math.min(i + batch, opts.events); j++) await writeEvent(em, workspace.workspaceId, EVENT_TYPE, renderData(j), { mode: 'live' });
      });
    }
    const published = nowMs();
    log(`published ${opts.events} outbox events in ${((published - started) / 1000).toFixed(2)} s; waiting for ${total} deliveries (timeout ${opts.timeout} s)`);
    let progress;
    const timer = setInterval(async () => {
      if (worker.exitCode !== null || worker.signalCode !== null) return;
      const s = await rc.stats().catch(() => null);
      if (s) log(`  ${((nowMs() - started) / 1000).toFixed(0).padStart(3)} s: ${s.distinct}/${total} delivered`);
      progress = s;
    }, 10_000);
    let seen;
    try {
      seen = await Promise.race([
        done,
        raceTimer(opts.timeout * 1000).then(() => null),
        worker.exited.then(({ code, signal }) => { throw new Error(`the worker exited (${code ?? signal}) during the run:\n${worker.output}`); }),
      ]);
    } finally {
      clearInterval(timer);
    }
    if (!seen) {
      const s = (await rc.stats().catch(() => progress)) ?? { distinct: '?' };
      throw new Error(`TIMEOUT: the receiver saw ${s.distinct} of ${total} deliveries within ${opts.timeout} s (worker output:\n${worker.output.slice(-4000)})`);
    }
    product = {
      started, published, finished: seen.at, stats: seen.stats,
      seconds: (seen.at - started) / 1000,
      firstDeliveryAfterSec: (seen.stats.firstAt - started) / 1000,
      cpuSec: cpuDelta(cpu0, cpuSnapshot(procs)),
      stealPct: stealPct(sys0, cpuTimes()),
    };
    product.perSec = total / product.seconds;
    product.steadyPerSec = total / ((seen.at - seen.stats.firstAt) / 1000);
    log(`worker      ${product.perSec.toFixed(0).padStart(6)} deliveries/s  (${total} in ${product.seconds.toFixed(2)} s from the first publish; ` +
      `first delivery after ${product.firstDeliveryAfterSec.toFixed(2)} s)`);
    if (seen.stats.badSignatures || seen.stats.badRequests) {
      throw new Error(`the receiver saw ${seen.stats.badSignatures} bad signatures and ${seen.stats.badRequests} malformed requests`);
    }

    // The delivery rows settle just after the receiver answers; check them.
    const conn = orm.em.getConnection();
    const deadline = Date.now() + 15_000;
    let states = {};
    for (;;) {
      const rows = await conn.execute('select state, count(*) as n from webhook_delivery group by state');
      states = Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
      if ((states.succeeded ?? 0) >= total || Date.now() > deadline) break;
      await sleep(200);
    }
    product.deliveryStates = states;
    if ((states.succeeded ?? 0) !== total) log(`warning: delivery rows ${JSON.stringify(states)} (expected ${total} succeeded)`);
  } finally {
    await orm.close(true);
  }

  // With --profile (or a hook that dumps on exit), SIGUSR2 ends the worker with a normal exit.
  if (opts.profile || process.env.BENCH_WORKER_NODE_OPTIONS) await stopChild(worker, { timeoutMs: 15_000, signal: 'SIGUSR2' });

  return {
    ...machine(),
    database: opts.pg ? 'postgresql' : 'sqlite',
    events: opts.events,
    endpoints: opts.endpoints,
    deliveries: total,
    workerConcurrency: Number(env.WEBHOOK_CONCURRENCY ?? 50),
    bareConcurrency: opts.concurrency,
    busyBeforePct: busyBefore,
    bare,
    bareFresh,
    product,
    ratio: product.perSec / bare.perSec,
    ratioFresh: product.perSec / bareFresh.perSec,
    targets: { perSec: TARGET_RATE, ratio: TARGET_RATIO },
    meetsTargets: product.perSec >= TARGET_RATE && product.perSec / bare.perSec >= TARGET_RATIO,
    ...(opts.profile ? { profile: profileSummary(opts.profile, profileSince) } : {}),
  };
}

function summary(r) {
  const p = r.product;
  const b = r.bare;
  const f = r.bareFresh;
  const cpu = (c) => Object.entries(c).filter(([, v]) => v !== null).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
  console.log(`\n${r.cpus} CPUs, Node ${r.node}, ${r.database}, ${r.events} events × ${r.endpoints} endpoints = ${r.deliveries} deliveries, ` +
    `worker concurrency ${r.workerConcurrency}, bare loop concurrency ${r.bareConcurrency}`);
  console.log(`bare loop : ${b.seconds.toFixed(2)} s (kept-alive connections), cpu s: ${cpu(b.cpuSec)}${b.stealPct === null ? '' : `, steal ${b.stealPct} %`}`);
  console.log(`            ${f.seconds.toFixed(2)} s (a fresh connection per request: ${f.perSec.toFixed(0)}/s, ratio ${(r.ratioFresh * 100).toFixed(1)} %), ` +
    `cpu s: ${cpu(f.cpuSec)}${f.stealPct === null ? '' : `, steal ${f.stealPct} %`}`);
  console.log(`worker    : ${p.seconds.toFixed(2)} s from the first publish (publishing ${((p.published - p.started) / 1000).toFixed(2)} s, ` +
    `first delivery after ${p.firstDeliveryAfterSec.toFixed(2)} s, ${p.steadyPerSec.toFixed(0)}/s from first to last), ` +
    `retries seen ${p.stats.retries}, cpu s: ${cpu(p.cpuSec)}${p.stealPct === null ? '' : `, steal ${p.stealPct} %`}`);
  if (p.cpuSec.worker) console.log(`worker CPU per delivery: ${((p.cpuSec.worker * 1e6) / r.deliveries).toFixed(0)} µs`);
  console.log(`signatures verified on a sample: ${b.stats.verified + f.stats.verified + p.stats.verified}, ` +
    `bad: ${b.stats.badSignatures + f.stats.badSignatures + p.stats.badSignatures}; delivery rows ${JSON.stringify(p.deliveryStates)}`);
  const steal = Math.max(b.stealPct ?? 0, f.stealPct ?? 0, p.stealPct ?? 0);
  if (steal >= 10) console.log(`note: the hypervisor stole up to ${steal} % of the CPU time during a run; figures are noisy`);
  if (r.profile) printProfile(r.profile, 'worker (whole life)');
  console.log('');
}

function figure(r) {
  const [p, b, f] = [r.product, r.bare, r.bareFresh];
  return `${p.perSec.toFixed(0)}/s deliveries vs bare signed POST loop ${b.perSec.toFixed(0)}/s = ${(r.ratio * 100).toFixed(1)} % ` +
    `(targets: >= ${TARGET_RATE}/s and >= ${TARGET_RATIO * 100} %; vs fresh connections ${f.perSec.toFixed(0)}/s = ${(r.ratioFresh * 100).toFixed(1)} %)`;
}

if (process.argv[2] === '--receiver') {
  receiverMain();
} else {
  await runBench({
    name: 'webhook-fanout',
    flags: {
      events: { arg: 'N', default: 2000, parse: integer(1), help: 'outbox events to publish (default 2000)' },
      endpoints: { arg: 'K', default: 4, parse: integer(1), help: `endpoints subscribed to ${EVENT_TYPE} (default 4); deliveries = N × K` },
      concurrency: { arg: 'C', default: 50, parse: integer(1), help: "in-flight requests of the bare loops (default 50, the worker's WEBHOOK_CONCURRENCY default)" },
      timeout: { arg: 'S', default: 120, parse: integer(1), help: 'fail when the worker has not delivered N × K within S seconds (default 120)' },
      pg: { arg: 'URL', default: null, parse: (v) => v.replace(/\/+$/, ''), help: 'PostgreSQL server (postgres://user@host:port): a fresh database is created and dropped' },
      profile: { arg: 'DIR', default: null, parse: (v) => resolve(v), help: 'run the worker with --cpu-prof and write its .cpuprofile to DIR; prints the top costs' },
    },
    footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server; WEBHOOK_CONCURRENCY is passed to the\n' +
      'worker; BENCH_WORKER_NODE_OPTIONS becomes NODE_OPTIONS of the worker child only (profilers, tracing hooks).',
    run: bench,
    summary,
    figure,
    jsonIndent: 2,
  });
}
