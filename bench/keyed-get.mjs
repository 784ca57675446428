#!/usr/bin/env node
/**
 * Keyed GET benchmark: requests/s of GET /api/v1/keys/current (API-key auth + metering + one row
 * read by id) against a bare Fastify hello-world, both started by this script, loaded in turn
 * by autocannon from this process. See docs/benchmarks.md.
 *
 *   npm run bench:keyed-get -- [--connections 16] [--duration 10] [--warmup 2] [--rounds 1]
 *                              [--target keyed|health|all] [--pg postgres://…] [--json]
 *
 * Self-contained: starts its own redis-server (unless REDIS_URL is set) and uses a temporary
 * DATA_DIR (SQLite); everything it started is stopped and removed on exit, error or Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TARGET_RATIO = 0.3;

/** A static body shaped and sized like the keyed response (~470 bytes of JSON). */
const BARE_BODY = {
  success: true,
  message: 'OK',
  data: {
    id: 'key_01HX0000000000000000000000',
    mode: 'live',
    name: 'default live key',
    hint: 'pk_live_…abcd',
    scopes: [
      'renders:read', 'renders:write', 'templates:read', 'templates:write', 'assets:read',
      'assets:write', 'webhooks:read', 'webhooks:write', 'integrations:read', 'integrations:write',
    ],
    ipAllowlist: [],
    expiresAt: null,
    createdAt: '2026-11-22T00:00:00.000Z',
    workspace: { id: 'org_01HX0000000000000000000000', plan: 'enterprise' },
  },
};

// ---------------------------------------------------------------------------------------------

function usage() {
  return `Usage: node bench/keyed-get.mjs [options]
  --connections N   concurrent connections (default 16)
  --duration S      seconds per measured run (default 10)
  --warmup S        seconds of warm-up before each measured run (default 2; 0 skips)
  --rounds N        alternate bare/keyed N times and report the median (default 1)
  --target T        keyed (default) | health (GET /api/health, a @Public() Nest route) | all
  --pg URL          use PostgreSQL at URL (DATABASE_URL) instead of SQLite in a temp DATA_DIR
  --json            print one JSON object instead of the table
Environment: REDIS_URL uses that Redis instead of starting a redis-server.`;
}

function parseFlags(argv) {
  const opts = { connections: 16, duration: 10, warmup: 2, rounds: 1, target: 'keyed', pg: null, json: false };
  const num = (name, v, min) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min} (got "${v}")`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => {
      if (inline !== undefined) return inline;
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--connections': opts.connections = Math.floor(num('connections', value(), 1)); break;
      case '--duration': opts.duration = num('duration', value(), 1); break;
      case '--warmup': opts.warmup = num('warmup', value(), 0); break;
      case '--rounds': opts.rounds = Math.floor(num('rounds', value(), 1)); break;
      case '--target': {
        opts.target = value();
        if (!['keyed', 'health', 'all'].includes(opts.target)) throw new Error('--target must be keyed, health or all');
        break;
      }
      case '--pg': opts.pg = value(); break;
      case '--json': opts.json = true; break;
      case '-h': case '--help': console.log(usage()); process.exit(0); break;
      default: throw new Error(`Unknown option ${argv[i]}\n${usage()}`);
    }
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Resources and cleanup
// ---------------------------------------------------------------------------------------------

const children = new Set();
const tempDirs = [];
let cleaned = false;

function log(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Spawns a child whose output is kept (last 16 KB) for error messages. */
function startChild(name, cmd, args, env) {
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.label = name;
  child.output = '';
  const keep = (chunk) => {
    child.output = (child.output + chunk.toString()).slice(-16_384);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  child.on('error', (err) => keep(`\n${err.message}\n`));
  children.add(child);
  child.exited.then(() => children.delete(child));
  return child;
}

async function stopChild(child, timeoutMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await child.exited;
  clearTimeout(timer);
}

/** Stops the app processes first, Redis last, then removes the temp dirs. */
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  const all = [...children];
  const redis = all.filter((c) => c.label === 'redis-server');
  await Promise.all(all.filter((c) => c.label !== 'redis-server').map((c) => stopChild(c)));
  await Promise.all(redis.map((c) => stopChild(c)));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

/** Stops everything on exit, error or a signal (only in the bench process, not the bare server). */
function installCleanupHandlers() {
  // Last resort when the process exits some other way: kill what is left, remove the temp dirs.
  process.on('exit', () => {
    for (const c of children) {
      try { c.kill('SIGKILL'); } catch { /* already gone */ }
    }
    if (!cleaned) for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      log(`${sig}: stopping`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitFor(what, child, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`${what}: ${child.label} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${child.output}`);
    }
    try {
      if (await probe()) return;
    } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs / 1000} s\n${child?.output ?? ''}`);
    await sleep(100);
  }
}

function runNode(args, env) {
  return new Promise((res, rej) => {
    const child = startChild(args[0], process.execPath, args, env);
    child.exited.then(({ code }) => (code === 0 ? res(child.output) : rej(new Error(`${args.join(' ')} exited ${code}:\n${child.output}`))));
  });
}

// ---------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------

async function cannon(opts) {
  const { default: autocannon } = await import('autocannon');
  return new Promise((res, rej) => {
    autocannon({ pipelining: 1, ...opts }, (err, result) => (err ? rej(err) : res(result)));
  });
}

function summarize(r) {
  return {
    reqPerSec: r.requests.mean,
    p50: r.latency.p50,
    p99: r.latency.p99,
    latencyMean: r.latency.average,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

/** Aggregate CPU counters from /proc/stat (Linux), or null elsewhere. */
function cpuTimes() {
  try {
    return readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
}

/** Share of the machine's CPU time stolen by the hypervisor between two cpuTimes() readings. */
function stealPct(before, after) {
  if (!before || !after || after.length < 8) return null;
  const d = after.map((v, i) => v - (before[i] ?? 0));
  const total = d.reduce((a, b) => a + b, 0);
  return total > 0 ? Math.round((1000 * d[7]) / total) / 10 : null;
}

/** Share of the machine's CPU time not idle (steal included) between two cpuTimes() readings. */
function busyPct(before, after) {
  if (!before || !after || after.length < 5) return null;
  const d = after.map((v, i) => v - (before[i] ?? 0));
  const total = d.reduce((a, b) => a + b, 0);
  return total > 0 ? Math.round((1000 * (total - d[3] - d[4])) / total) / 10 : null;
}

async function measure(target, opts) {
  const load = { url: target.url, headers: target.headers, connections: opts.connections };
  if (opts.warmup > 0) await cannon({ ...load, duration: opts.warmup });
  const before = cpuTimes();
  const r = summarize(await cannon({ ...load, duration: opts.duration }));
  r.stealPct = stealPct(before, cpuTimes());
  if (r.non2xx || r.errors || r.timeouts) {
    throw new Error(
      `${target.name}: ${r.non2xx} non-2xx responses, ${r.errors} errors, ${r.timeouts} timeouts out of ${r.total} requests ` +
        '(a refused or failing request would make the figure meaningless)',
    );
  }
  const steal = r.stealPct === null ? '' : `  (cpu steal ${r.stealPct} %)`;
  log(`${target.name.padEnd(6)} ${r.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${steal}`);
  return r;
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function combine(runs) {
  return {
    reqPerSec: median(runs.map((r) => r.reqPerSec)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    total: runs.reduce((n, r) => n + r.total, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    rounds: runs.map((r) => Math.round(r.reqPerSec)),
    stealPct: runs.some((r) => r.stealPct === null) ? null : Math.max(...runs.map((r) => r.stealPct)),
  };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  let opts;
  try {
    opts = parseFlags(process.argv.slice(2));
  } catch (err) {
    console.error(err.message);
    process.exit(64);
  }
  installCleanupHandlers();
  if (Number(process.versions.node.split('.')[0]) < 24) {
    log(`warning: running on Node ${process.version}; the project needs Node 24 (export PATH=${ROOT}/node_modules/.bin:$PATH)`);
  }
  try {
    const result = await bench(opts);
    await cleanup();
    print(result, opts);
  } catch (err) {
    console.error(`[bench] FAILED: ${err.message}`);
    await cleanup();
    process.exit(1);
  }
}

async function bench(opts) {
  const work = mkdtempSync(join(tmpdir(), 'keyed-get-'));
  tempDirs.push(work);

  // 1. Redis and DATA_DIR.
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    const port = await freePort();
    const redis = startChild('redis-server', 'redis-server', [
      '--bind', '127.0.0.1', '--port', String(port), '--dir', work,
      '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction',
    ], process.env);
    await waitFor('redis', redis, () => redis.output.includes('Ready to accept connections'), 10_000);
    redisUrl = `redis://127.0.0.1:${port}`;
    log(`redis-server on ${redisUrl}`);
  }
  const dataDir = join(work, 'data');

  // 2. Environment of the app processes.
  const apiPort = await freePort();
  const env = {
    ...process.env,
    APP_ENV: 'development',
    DATA_DIR: dataDir,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: 'bench',
    APP_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MULTIPLIER: '100000',
    PORT: String(apiPort),
    HOST: '127.0.0.1',
  };
  delete env.DATABASE_URL;
  if (opts.pg) env.DATABASE_URL = opts.pg;

  // 3. A workspace and its keys.
  const out = await runNode(['dist/apps/cli/src/main.js', 'workspace:create', '--name', 'Bench', '--plan', 'enterprise'], env);
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  const created = line ? JSON.parse(line) : null;
  if (!created?.liveKey) throw new Error(`workspace:create printed no liveKey:\n${out}`);
  log(`workspace ${created.workspaceId} (enterprise)`);

  // 4. The API.
  const base = `http://127.0.0.1:${apiPort}`;
  const api = startChild('api', process.execPath, ['dist/apps/api/src/main.js'], env);
  await waitFor('api', api, async () => (await fetch(`${base}/api/health`)).status === 200);
  log(`api on ${base} (${opts.pg ? 'postgresql' : 'sqlite'})`);

  // 5. The bare Fastify hello-world.
  const barePort = await freePort();
  const bare = startChild('bare-fastify', process.execPath, [fileURLToPath(import.meta.url), '--bare-server', String(barePort)], process.env);
  const bareUrl = `http://127.0.0.1:${barePort}/`;
  await waitFor('bare fastify', bare, async () => (await fetch(bareUrl)).status === 200);

  // 6. Check the keyed route once, then load the servers in turn.
  const keyedUrl = `${base}/api/v1/keys/current`;
  const headers = { 'x-api-key': created.liveKey };
  const res = await fetch(keyedUrl, { headers });
  const body = await res.text();
  let json = null;
  try { json = JSON.parse(body); } catch { /* reported below */ }
  if (res.status !== 200 || typeof json?.data?.id !== 'string' || !json.data.id.startsWith('key_')) {
    throw new Error(`GET /api/v1/keys/current answered ${res.status}: ${body.slice(0, 500)}`);
  }
  const sizes = { bare: Buffer.byteLength(JSON.stringify(BARE_BODY)), keyed: Buffer.byteLength(body) };

  const targets = [{ name: 'bare', url: bareUrl }];
  if (opts.target !== 'keyed') targets.push({ name: 'health', url: `${base}/api/health` });
  if (opts.target !== 'health') targets.push({ name: 'keyed', url: keyedUrl, headers });

  // Other work on the machine skews the figures: sample it for a second while our servers idle.
  const idle0 = cpuTimes();
  await sleep(1000);
  const busyBefore = busyPct(idle0, cpuTimes());
  if (busyBefore !== null && busyBefore >= 15) {
    log(`warning: ${busyBefore} % of the CPU was busy before the load started (other processes); figures will be noisy`);
  }

  const est = opts.rounds * targets.length * (opts.duration + opts.warmup);
  log(`${targets.map((t) => t.name).join(', ')} × ${opts.rounds} round(s), ${opts.connections} connections, ` +
    `${opts.warmup} s warm-up + ${opts.duration} s each (~${Math.ceil(est)} s)`);
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    if (opts.rounds > 1) log(`round ${round}/${opts.rounds}`);
    for (const t of targets) runs[t.name].push(await measure(t, opts));
  }

  const results = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, combine(v)]));
  const ratio = (name) => (results[name] ? results[name].reqPerSec / results.bare.reqPerSec : null);
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? null,
    database: opts.pg ? 'postgresql' : 'sqlite',
    connections: opts.connections,
    pipelining: 1,
    durationSec: opts.duration,
    warmupSec: opts.warmup,
    rounds: opts.rounds,
    busyBeforePct: busyBefore,
    bodyBytes: sizes,
    results,
    ratio: { keyed: ratio('keyed'), health: ratio('health') },
    target: TARGET_RATIO,
    meetsTarget: results.keyed ? ratio('keyed') >= TARGET_RATIO : null,
  };
}

function print(r, opts) {
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    return;
  }
  const labels = { bare: 'bare fastify GET /', health: 'GET /api/health', keyed: 'GET /api/v1/keys/current' };
  const rows = Object.entries(r.results).map(([name, s]) => [
    labels[name], s.reqPerSec.toFixed(0), `${s.p50}`, `${s.p99}`, name === 'bare' ? '100.0 %' : `${((s.reqPerSec / r.results.bare.reqPerSec) * 100).toFixed(1)} %`,
    s.stealPct === null ? '-' : `${s.stealPct} %`,
  ]);
  const head = ['target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'vs bare', 'cpu steal'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const fmt = (row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(`\n${r.cpus} CPUs, Node ${r.node}, ${r.database}, ${r.connections} connections, ${r.durationSec} s runs` +
    `${r.rounds > 1 ? `, median of ${r.rounds} rounds` : ''}`);
  console.log(fmt(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(fmt(row));
  console.log('');
  const steal = Math.max(...Object.values(r.results).map((x) => x.stealPct ?? 0));
  if (steal >= 10) {
    const advice = r.rounds > 1 ? 'rerun when the machine is idle' : 'rerun when the machine is idle or use --rounds 3';
    console.log(`note: the hypervisor stole up to ${steal} % of the CPU time during a run; figures are noisy, ${advice}`);
  }
  const bare = r.results.bare.reqPerSec.toFixed(0);
  if (r.results.health) {
    console.log(`health: ${r.results.health.reqPerSec.toFixed(0)} req/s vs bare fastify ${bare} req/s = ${(r.ratio.health * 100).toFixed(1)} % (diagnostic: Nest route, no auth)`);
  }
  if (r.results.keyed) {
    console.log(`keyed-get: ${r.results.keyed.reqPerSec.toFixed(0)} req/s vs bare fastify ${bare} req/s = ${(r.ratio.keyed * 100).toFixed(1)} % (target >= ${TARGET_RATIO * 100} %)`);
  }
}

// ---------------------------------------------------------------------------------------------
// Child mode: the bare Fastify hello-world (`node bench/keyed-get.mjs --bare-server PORT`).
// ---------------------------------------------------------------------------------------------
if (process.argv[2] === '--bare-server') {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.get('/', async () => BARE_BODY);
  await app.listen({ port: Number(process.argv[3]), host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
  process.stdout.write('ready\n');
} else {
  await main();
}
