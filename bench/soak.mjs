#!/usr/bin/env node
// An hour of real life (issue 30): the whole stack as operators run it, from dist/ (npm run -s build
// first): the API and two worker processes against Redis, PostgreSQL and an S3 server, under a steady
// mix for `--minutes` (default 60): stills over HTTP, short videos and a chunked one, uploads, captions
// on the offline engine, webhook deliveries to a loopback receiver, the event stream. Faults on a
// schedule: a worker SIGKILLed every `--kill-every` minutes (respawned), Redis restarted once, the API
// restarted once (their outage windows recorded). Prints a line every minute and a report at the end;
// exits 1 when the line is missed (docs/benchmarks.md "Soak (issue 30)", decisions.md "Fleet (issue 30): soak").
//
// Services: Redis is always the bench's own (it restarts it), with an append-only file as
// scripts/services.sh runs it; PostgreSQL and the S3 server are those of the environment when given
// (TEST_PG_URL or PG_URL; TEST_S3_URL or S3_URL: scripts/test.sh's), else started here with
// scripts/services.sh's functions. Usage:
//   node bench/soak.mjs [--minutes 60] [--kill-every 5] [--grace 120] [--break double-webhook|no-respawn] [--json]
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflateSync } from 'node:zlib';
import { WORKER_NODE_FLAGS } from '../dist/apps/worker/src/node-flags.js';
import {
  ROOT, cli, createPgDatabase, freePort, log, number, onCleanup, oneOf, positive, runBench, sleep, startChild, stopChild, tempDir, waitFor,
} from './lib/harness.mjs';

const run = promisify(execFile);
const SETTLED = ['done', 'failed', 'cancelled'];
/** Debian's libjemalloc (libjemalloc2), as scripts/services.sh jemalloc_path finds it; null when not installed. */
const jemalloc = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib'].map((d) => join(d, 'libjemalloc.so.2')).find((f) => existsSync(f)) ?? null;

// --- services -----------------------------------------------------------------------------------

/** A shell line run with scripts/services.sh sourced; answers its stdout. */
async function services(line) {
  try {
    const { stdout } = await run('bash', ['-c', `set -euo pipefail; source scripts/services.sh; ${line}`], { cwd: ROOT });
    return stdout.trim();
  } catch (err) {
    throw new Error(`${line}: ${err.stderr || err.message}`);
  }
}

async function postgresServer(work) {
  const given = process.env.TEST_PG_URL ?? process.env.PG_URL;
  if (given) return given;
  const dir = join(work, 'services');
  const url = await services(`start_postgres ${dir} >/dev/null; echo "$PG_URL"`);
  onCleanup(() => services(`stop_postgres ${dir}`));
  log(`postgresql on ${url}`);
  return url;
}

async function s3Server(work) {
  const given = process.env.TEST_S3_URL ?? process.env.S3_URL;
  if (given) return given;
  const dir = join(work, 's3');
  mkdirSync(dir, { recursive: true });
  const child = startChild('s3rver', process.execPath, ['--openssl-legacy-provider', 'scripts/s3rver.mjs', dir], process.env, { last: true });
  await waitFor('s3rver', child, () => existsSync(join(dir, 'port')) && readFileSync(join(dir, 'port'), 'utf8').trim() !== '', 20_000);
  const url = `http://127.0.0.1:${readFileSync(join(dir, 'port'), 'utf8').trim()}`;
  log(`s3rver on ${url}`);
  return url;
}

/** The bench's Redis on a fixed port and folder (append-only file), so that a restart keeps the queues. */
function redisServer(dir, port) {
  mkdirSync(dir, { recursive: true });
  const child = startChild('redis', 'redis-server', [
    '--bind', '127.0.0.1', '--port', String(port), '--dir', dir,
    '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--maxmemory-policy', 'noeviction',
  ], process.env, { last: true });
  return waitFor('redis', child, () => child.output.includes('Ready to accept connections'), 20_000).then(() => child);
}

// --- inputs -------------------------------------------------------------------------------------

/** A w×h PNG of one colour (a distinct upload each time). */
function png(w, h, rgb) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])));
    return Buffer.concat([len, Buffer.from(type), data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: w }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const stillEdit = (n) => ({
  timeline: { background: '#203040', tracks: [
    { clips: [{ asset: { type: 'text', text: `Soak ${n}`, font: { family: 'Open Sans', size: 28, color: '#ffffff' } }, start: 0, length: 1 }] },
    { clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 20 + (n % 20) }, fill: { color: '#e76f51' } }, start: 0, length: 1 }] },
  ] },
  output: { format: 'png', size: { width: 320, height: 180 } },
});

/** A short low-resolution mp4 (`seconds` at 12 fps); over 24 frames it is chunked (VIDEO_CHUNK_* below). */
const videoEdit = (n, seconds) => ({
  timeline: { background: '#2a9d8f', tracks: [
    { clips: [{ asset: { type: 'text', text: `Video ${n}`, font: { family: 'Open Sans', size: 22, color: '#ffffff' } }, start: 0, length: seconds }] },
    { clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 25 }, fill: { color: '#e76f51' } }, start: 0, length: seconds, effect: 'zoomIn' }] },
  ] },
  output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 },
});

// --- measures -----------------------------------------------------------------------------------

const quantile = (xs, q) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};

/** RSS (bytes) of a process, of its process group (with its Chromium and ffmpeg), and its open descriptors. */
function processFigures(pid) {
  const rssOf = (p) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  };
  let group = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pid) group += rssOf(p);
    } catch { /* gone */ }
  }
  let fds = 0;
  try {
    fds = readdirSync(`/proc/${pid}/fd`).length;
  } catch { /* gone */ }
  return { rss: rssOf(pid), groupRss: group, fds };
}

/** Regular files (and links) under `dir`, recursively (a temporary folder's leftovers). */
function filesUnder(dir) {
  const out = [];
  const walk = (d) => {
    let names;
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(d, name);
      let st;
      try {
        st = statSync(p, { throwIfNoEntry: false });
      } catch {
        try {
          readlinkSync(p);
          out.push(p);
        } catch { /* gone */ }
        continue;
      }
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(dir);
  return out;
}

/**
 * Growth per hour (% of its first value) of a process's RSS over its judged stretch (judgedStretch):
 * least squares over its samples; null without one.
 */
function growthPerHour(stretch) {
  return stretch ? (slopePerHour(stretch, 'rss') / stretch[0].rss) * 100 : null;
}

/** The samples of the longest stretch one incarnation ran after `warmupMs` from its start; null under 10 minutes. */
function judgedStretch(samples, warmupMs) {
  const bySpawn = new Map();
  for (const s of samples) {
    if (s.t - s.spawnedAt < warmupMs) continue;
    if (!bySpawn.has(s.spawnedAt)) bySpawn.set(s.spawnedAt, []);
    bySpawn.get(s.spawnedAt).push(s);
  }
  const longest = [...bySpawn.values()].sort((a, b) => (b.at(-1).t - b[0].t) - (a.at(-1).t - a[0].t))[0];
  return longest && longest.at(-1).t - longest[0].t >= 10 * 60_000 ? longest : null;
}

/** Least-squares slope of `field` over `stretch` (the samples that have it), per hour. */
function slopePerHour(stretch, field) {
  const xs = stretch.filter((s) => typeof s[field] === 'number');
  if (xs.length < 2) return null;
  const mx = xs.reduce((a, s) => a + s.t, 0) / xs.length;
  const my = xs.reduce((a, s) => a + s[field], 0) / xs.length;
  return (xs.reduce((a, s) => a + (s.t - mx) * (s[field] - my), 0) / xs.reduce((a, s) => a + (s.t - mx) ** 2, 0)) * 3_600_000;
}

/**
 * What a worker's memory is made of, from its own /metrics (prom-client's process metrics): V8's heap
 * in use, memory outside it that JavaScript holds (Buffers, sharp's inputs), and the RSS it reports.
 * Read beside the RSS so that a growth can be told apart: JavaScript objects kept, or native memory.
 */
async function heapFigures(port, token) {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) })).text();
    const value = (name) => {
      const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text);
      return m ? Number(m[1]) : undefined;
    };
    return { heapUsed: value('mr_nodejs_heap_size_used_bytes'), heapTotal: value('mr_nodejs_heap_size_total_bytes'), external: value('mr_nodejs_external_memory_bytes') };
  } catch {
    return {};
  }
}

/** A worker's judged stretch: its RSS, V8 heap and external memory at its start and end (MB) and their slopes (MB/h). */
function memoryOf(stretch) {
  if (!stretch) return null;
  const mb = (v) => (typeof v === 'number' ? Math.round(v / 2 ** 20) : null);
  const first = (f) => stretch.find((s) => typeof s[f] === 'number')?.[f];
  const last = (f) => stretch.findLast((s) => typeof s[f] === 'number')?.[f];
  return Object.fromEntries(['rss', 'heapUsed', 'heapTotal', 'external'].map((f) => {
    const slope = slopePerHour(stretch, f);
    return [f, { fromMb: mb(first(f)), toMb: mb(last(f)), mbPerHour: slope === null ? null : Number((slope / 2 ** 20).toFixed(1)) }];
  }));
}

// --- the run --------------------------------------------------------------------------------------

async function soak(opts) {
  const runMs = opts.minutes * 60_000;
  const work = tempDir('soak');
  // Traversable by other users: PostgreSQL runs as its own user when we are root (services.sh as_pg_user),
  // and so does the video engine's Chromium (a jailed user, libs/video browser.ts) in a worker's TMPDIR.
  chmodSync(work, 0o755);
  const redisPort = await freePort();
  let redis = await redisServer(join(work, 'redis'), redisPort);
  const [pgServer, s3Url] = await Promise.all([postgresServer(work), s3Server(work)]);
  const databaseUrl = await createPgDatabase(pgServer);
  const apiPort = await freePort();
  const base = `http://127.0.0.1:${apiPort}/api`;
  const bucket = `soak-${randomBytes(4).toString('hex')}`;
  const env = {
    ...process.env,
    APP_ENV: 'development',
    LOG_LEVEL: 'warn',
    APP_SECRET: randomBytes(32).toString('hex'),
    DATABASE_URL: databaseUrl,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_PREFIX: 'soak',
    DATA_DIR: join(work, 'api-data'),
    STORAGE_DRIVER: 's3', S3_ENDPOINT: s3Url, S3_BUCKET: bucket, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER', S3_CREATE_BUCKET: 'true',
    RATE_LIMIT_MULTIPLIER: '100000',
    ASSET_STOCK: 'off',
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    // Short videos chunked past 24 frames, 12 frames a chunk (test/video-chunks.e2e-spec.ts's settings).
    VIDEO_ENGINE: 'on', VIDEO_CHUNK_FRAMES: '12', VIDEO_CHUNK_MIN_FRAMES: '24', VIDEO_CONCURRENCY: '1', STILL_CONCURRENCY: '2',
    VIDEO_BUNDLE_DIR: process.env.VIDEO_BUNDLE_DIR ?? join(work, '..', 'mr-test-video-bundle'),
  };
  delete env.TEST_PG_URL;
  const ws = await cli(env, 'workspace:create', '--name', 'Soak', '--plan', 'enterprise');
  const key = ws.liveKey;
  await cli(env, 'integration:connect', '--workspace', ws.workspaceId, '--provider', 'speech-beta', '--engine', 'local');

  // The processes, each slot's current child and its spawn time.
  const procs = { api: null, 'worker-0': null, 'worker-1': null };
  const spawnedAt = {};
  const workerDirs = [0, 1].map((i) => join(work, `worker-${i}`));
  // Each worker's metrics listener (kept across its respawns), read by the sampler for its heap.
  const metricsToken = randomBytes(16).toString('hex');
  const metricsPorts = [await freePort(), await freePort()];
  const startApiProcess = async () => {
    procs.api = startChild('api', process.execPath, ['dist/apps/api/src/main.js'], env);
    spawnedAt.api = Date.now();
    await waitFor('api', procs.api, async () => (await fetch(`${base}/health`)).ok, 90_000);
  };
  const startWorker = (i) => {
    // Each worker its own data folder and temporary folder (kept across its respawns: a new one sweeps
    // what a killed one left there), as workers on separate machines sharing only the services.
    const dir = workerDirs[i];
    mkdirSync(join(dir, 'tmp'), { recursive: true });
    // On jemalloc, as scripts/up.sh and the worker image start it (`--allocator glibc` for the comparison).
    const allocator = opts.allocator === 'jemalloc' && jemalloc ? { LD_PRELOAD: jemalloc } : {};
    procs[`worker-${i}`] = startChild(`worker-${i}`, process.execPath, [...WORKER_NODE_FLAGS, 'dist/apps/worker/src/main.js'], { ...env, ...allocator, DATA_DIR: join(dir, 'data'), TMPDIR: join(dir, 'tmp'), METRICS_TOKEN: metricsToken, WORKER_METRICS_HOST: '127.0.0.1', WORKER_METRICS_PORT: String(metricsPorts[i]) });
    spawnedAt[`worker-${i}`] = Date.now();
  };
  await startApiProcess();
  startWorker(0);
  startWorker(1);

  // The webhook receiver: each delivery's event id counted (a repeat after a 2xx: duplicated).
  const deliveries = new Map(); // event id -> { type, renderId, count }
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c)).on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const seen = deliveries.get(body.id) ?? { type: body.type, renderId: body.data?.id, count: 0 };
        seen.count += opts.break === 'double-webhook' ? 2 : 1;
        deliveries.set(body.id, seen);
      } catch { /* not JSON: counted nowhere */ }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  onCleanup(() => new Promise((r) => receiver.close(r)));
  const hookUrl = `http://127.0.0.1:${receiver.address().port}/hooks`;

  // Counters.
  const t0 = Date.now();
  const outages = []; // { what, from, to }
  const kills = [];
  const requests = { total: 0, byStatus: {}, serverErrors: [], connectionErrors: [] };
  const renders = new Map(); // id -> { kind, acceptedAt, settled, settledAt, status }
  const assets = [];
  const captions = [];
  const stillLatencies = []; // { t, ms, id, timing: the Server-Timing header }
  const samples = { api: [], 'worker-0': [], 'worker-1': [], redis: [] };
  const stream = { events: 0, reconnects: 0, completed: new Set() };
  const inOutage = (t) => outages.some((o) => t >= o.from && t <= (o.to ?? Infinity));

  /** One API request, counted: its status (5xx and refused connections kept with their times). */
  const call = async (method, path, body, headers = {}) => {
    const started = Date.now();
    requests.total++;
    try {
      const isForm = body instanceof FormData;
      const res = await fetch(`${base}${path}`, {
        method, headers: { 'x-api-key': key, ...(body && !isForm ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body ? { body: isForm ? body : JSON.stringify(body) } : {}), signal: AbortSignal.timeout(120_000),
      });
      const text = await res.text();
      requests.byStatus[res.status] = (requests.byStatus[res.status] ?? 0) + 1;
      if (res.status >= 500) requests.serverErrors.push({ t: started, status: res.status, path, body: text.slice(0, 200) });
      let json;
      try {
        json = JSON.parse(text);
      } catch { /* not JSON */ }
      return { status: res.status, json, ms: Date.now() - started, started, timing: res.headers.get('server-timing') };
    } catch (err) {
      requests.connectionErrors.push({ t: started, path, error: err.cause?.code ?? err.name });
      return { status: 0, ms: Date.now() - started, started };
    }
  };

  const hook = await call('POST', '/v1/webhooks', { url: hookUrl, events: ['render.completed', 'render.failed'] });
  if (hook.status !== 201) throw new Error(`webhook endpoint refused: ${hook.status} ${JSON.stringify(hook.json)}`);

  // Warm-up before the clock: stills and a video, so the first window measures work, not starts.
  let first;
  await waitFor('the first still', null, async () => (first = await call('POST', '/v1/render', { edit: stillEdit(0) })).status === 200, 120_000)
    .catch((err) => Promise.reject(new Error(`${err.message}: ${first?.status} ${JSON.stringify(first?.json)}`)));
  for (let i = 1; i <= 6; i++) await call('POST', '/v1/render', { edit: stillEdit(i) });
  // A video once a worker's video engine runs (its beacon: 503 ENGINE_NOT_CONFIGURED before), settled.
  let video;
  await waitFor('the video engine', null, async () => (video = await call('POST', '/v1/render', { edit: videoEdit(0, 1) })).status === 202, 120_000)
    .catch((err) => Promise.reject(new Error(`${err.message}: ${video?.status} ${JSON.stringify(video?.json)}`)));
  await waitFor('the first video', null, async () => SETTLED.includes((await call('GET', `/v1/render/${video.json.data.id}`)).json?.data?.status), 120_000);
  requests.total = 0;
  requests.byStatus = {};
  requests.serverErrors.length = 0;
  requests.connectionErrors.length = 0;
  log('warmed up; the clock starts');
  const start = Date.now();
  const end = start + runMs;

  // The event stream: read while the run lasts, resumed with Last-Event-ID when it drops.
  const streamAbort = new AbortController();
  void (async () => {
    let last;
    while (!streamAbort.signal.aborted) {
      try {
        const res = await fetch(`${base}/v1/renders/events`, { headers: { 'x-api-key': key, ...(last ? { 'last-event-id': last } : {}) }, signal: streamAbort.signal });
        if (res.status === 200) {
          const decoder = new TextDecoder();
          let buf = '';
          for await (const chunk of res.body) {
            buf += decoder.decode(chunk, { stream: true });
            let cut;
            while ((cut = buf.indexOf('\n\n')) >= 0) {
              const frame = buf.slice(0, cut);
              buf = buf.slice(cut + 2);
              const id = /^id: ?(.*)$/m.exec(frame)?.[1];
              const data = /^data: ?(.*)$/m.exec(frame)?.[1];
              if (id) last = id;
              if (data) {
                try {
                  const ev = JSON.parse(data);
                  if (ev.type) stream.events++;
                  if (ev.type === 'render.completed') stream.completed.add(ev.data?.id);
                } catch { /* a comment or keep-alive */ }
              }
            }
          }
        }
      } catch { /* dropped: resumed below */ }
      if (streamAbort.signal.aborted) break;
      stream.reconnects++;
      await sleep(1000);
    }
  })();

  // The mix: each lane a loop until the end.
  const lanes = [];
  const lane = (everyMs, fn) => lanes.push((async () => {
    for (let n = 1; Date.now() < end; n++) {
      const next = Date.now() + everyMs;
      await fn(n).catch((err) => log(`lane error: ${err.message}`));
      await sleep(Math.max(0, next - Date.now()));
    }
  })());
  const accepted = (r, kind) => {
    const id = r.json?.data?.id;
    if (id && (r.status === 200 || r.status === 202)) renders.set(id, { kind, acceptedAt: r.started });
    return id;
  };
  lane(opts['still-every'] * 1000, async (n) => {
    const r = await call('POST', '/v1/render', { edit: stillEdit(n) });
    const id = accepted(r, 'still');
    if (id && r.status === 200) stillLatencies.push({ t: r.started, ms: r.ms, id, timing: r.timing });
  });
  lane(opts['video-every'] * 1000, async (n) => {
    accepted(await call('POST', '/v1/render', { edit: videoEdit(n, n % 3 === 0 ? 4 : 1.5) }), n % 3 === 0 ? 'video-chunked' : 'video');
  });
  lane(15_000, async (n) => {
    const form = new FormData();
    form.append('file', new Blob([png(24, 24, [n % 256, (n * 7) % 256, (n * 13) % 256])], { type: 'image/png' }), `soak-${n}.png`);
    const r = await call('POST', '/v1/assets', form);
    if (r.status === 201) assets.push(r.json.data.id);
  });
  lane(45_000, async (n) => {
    const wav = join(work, `speech-${n}.wav`);
    await run('espeak-ng', ['-s', '140', '-w', wav, `Soak caption number ${n}. The fleet keeps running.`]);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(wav)], { type: 'audio/wav' }), `speech-${n}.wav`);
    const up = await call('POST', '/v1/assets', form);
    if (up.status !== 201) return;
    assets.push(up.json.data.id);
    // Captions once the asset is processed (409/422 while it is not: retried).
    for (let tries = 0; tries < 30 && Date.now() < end; tries++) {
      const r = await call('POST', '/v1/captions', { assetId: up.json.data.id });
      if (r.status === 200 || r.status === 202) {
        captions.push(r.json.data.id);
        return;
      }
      await sleep(2000);
    }
  });

  // The faults.
  const killEvery = Math.min(opts['kill-every'], opts.minutes / 3) * 60_000;
  const faults = [];
  // The windows whose still latencies are compared: the issue's first and last ten minutes, a tenth of a
  // run under 40 minutes. Every fault falls within the first three quarters, before the last window,
  // so the last window runs steady.
  const windowMs = opts.minutes >= 40 ? 10 * 60_000 : runMs / 10;
  for (let t = killEvery / 2, i = 0; t < runMs * 0.75; t += killEvery, i++) faults.push({ at: t, what: `kill worker-${i % 2}` });
  faults.push({ at: runMs * 0.35, what: 'restart redis' }, { at: runMs * 0.6, what: 'restart api' });
  faults.sort((a, b) => a.at - b.at);
  const faultLane = (async () => {
    for (const f of faults) {
      await sleep(Math.max(0, start + f.at - Date.now()));
      if (f.what.startsWith('kill')) {
        const slot = f.what.slice(5);
        const child = procs[slot];
        if (!child) continue;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch { /* gone */ }
        await child.exited;
        kills.push({ t: Date.now(), slot });
        log(`${f.what} (SIGKILL)${opts.break === 'no-respawn' ? ', not respawned' : ', respawned'}`);
        if (opts.break === 'no-respawn') procs[slot] = null;
        else startWorker(Number(slot.at(-1)));
      } else if (f.what === 'restart redis') {
        const o = { what: 'redis restart', from: Date.now() };
        outages.push(o);
        await stopChild(redis);
        redis = await redisServer(join(work, 'redis'), redisPort);
        // The window closes once the API answers a keyed request again, plus the reconnects' margin.
        await waitFor('api after redis', procs.api, async () => (await fetch(`${base}/v1/render?limit=1`, { headers: { 'x-api-key': key } })).status === 200, 60_000);
        await sleep(opts['outage-margin'] * 1000);
        o.to = Date.now();
        log(`redis restarted: outage ${((o.to - o.from) / 1000).toFixed(1)} s`);
      } else {
        const o = { what: 'api restart', from: Date.now() };
        outages.push(o);
        await stopChild(procs.api);
        await startApiProcess();
        await sleep(opts['outage-margin'] * 1000);
        o.to = Date.now();
        log(`api restarted: outage ${((o.to - o.from) / 1000).toFixed(1)} s`);
      }
    }
  })();

  // The sampler and the minute lines.
  const report = (final) => {
    const settled = [...renders.values()].filter((r) => r.settled).length;
    const outside = requests.serverErrors.filter((e) => !inOutage(e.t)).length + requests.connectionErrors.filter((e) => !inOutage(e.t)).length;
    const lat = stillLatencies.map((l) => l.ms);
    const rss = Object.entries(samples).map(([k, s]) => `${k} ${s.length ? (s.at(-1).rss / 2 ** 20).toFixed(0) : '-'}${s.length && s.at(-1).groupRss !== s.at(-1).rss ? `(+${((s.at(-1).groupRss - s.at(-1).rss) / 2 ** 20).toFixed(0)})` : ''} MB/${s.at(-1)?.fds ?? '-'} fd${typeof s.at(-2)?.heapUsed === 'number' && typeof s.at(-2)?.external === 'number' ? ` (heap ${(s.at(-2).heapUsed / 2 ** 20).toFixed(0)}, ext ${(s.at(-2).external / 2 ** 20).toFixed(0)})` : ''}`).join(', ');
    return `${final ? 'end' : `min ${Math.round((Date.now() - start) / 60_000)}`}: requests ${requests.total}, renders ${renders.size} (${settled} settled), 5xx+refused outside outages ${outside}, webhooks ${deliveries.size}, stream events ${stream.events}, still p50/p99 ${quantile(lat, 0.5) ?? '-'}/${quantile(lat, 0.99) ?? '-'} ms, rss ${rss}`;
  };
  const sample = () => {
    const t = Date.now();
    for (const slot of Object.keys(samples)) {
      const child = slot === 'redis' ? redis : procs[slot];
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const figures = { t, spawnedAt: slot === 'redis' ? 0 : spawnedAt[slot], ...processFigures(child.pid) };
      samples[slot].push(figures);
      // Filled in when the worker answers (a few milliseconds; a sample whose answer never came has none).
      if (slot.startsWith('worker-')) void heapFigures(metricsPorts[Number(slot.slice(-1))], metricsToken).then((h) => Object.assign(figures, h));
    }
  };
  const sampler = setInterval(sample, 10_000);
  const minutes = setInterval(() => log(report(false)), 60_000);
  /** Reads one render's status; a settled one is marked with when it was seen settled. */
  const poll = async (id, r) => {
    const g = await call('GET', `/v1/render/${id}`);
    if (SETTLED.includes(g.json?.data?.status)) Object.assign(r, { settled: true, settledAt: Date.now(), status: g.json.data.status });
  };
  // Which renders settled (polled, so the minute lines say so as it happens).
  const poller = (async () => {
    while (Date.now() < end) {
      for (const [id, r] of renders) {
        if (r.settled || Date.now() >= end) continue;
        await poll(id, r);
      }
      await sleep(3000);
    }
  })();

  await Promise.all([...lanes, faultLane, poller]);
  log(`load stopped after ${((Date.now() - start) / 60_000).toFixed(1)} min; settling (grace ${opts.grace} s)`);
  // Grace: every accepted render settled, asset processed and transcription done; then the stragglers.
  const graceEnd = Date.now() + opts.grace * 1000;
  for (;;) {
    for (const [id, r] of renders) {
      if (!r.settled) await poll(id, r);
    }
    const completedDelivered = [...renders.entries()].filter(([, r]) => r.settled && r.status !== 'cancelled')
      .every(([id]) => [...deliveries.values()].some((d) => d.renderId === id));
    if (([...renders.values()].every((r) => r.settled) && completedDelivered) || Date.now() > graceEnd) break;
    await sleep(2000);
  }
  sample();
  clearInterval(sampler);
  clearInterval(minutes);
  streamAbort.abort();

  // The database's word: renders not settled (any the client never heard of too), and the ledger.
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  let unsettledRows, ledgerRows, assetRows, transcriptionRows;
  try {
    unsettledRows = (await db.query(`select id, status from render where status not in ('done', 'failed', 'cancelled')`)).rows;
    ledgerRows = (await db.query(`select render_id, reason, count(*)::int as n from credit_ledger where render_id is not null group by render_id, reason`)).rows;
    assetRows = (await db.query(`select status, count(*)::int as n from asset group by status`)).rows;
    transcriptionRows = (await db.query(`select status, count(*)::int as n from transcription group by status`)).rows;
  } finally {
    await db.end();
  }
  const lostIds = new Set([...unsettledRows.map((r) => r.id), ...[...renders].filter(([, r]) => !r.settled).map(([id]) => id)]);
  const perRender = new Map();
  for (const row of ledgerRows) perRender.set(row.render_id, { ...perRender.get(row.render_id), [row.reason]: row.n });
  const doubleCharged = [...perRender].filter(([, c]) => (c.hold ?? 0) > 1 || (c.capture ?? 0) > 1 || ((c.capture ?? 0) > 0 && (c.release ?? 0) > 0)).map(([id]) => id);

  // Webhooks: each settled render's event (completed or failed) delivered exactly once.
  const byRender = new Map();
  for (const d of deliveries.values()) if (d.renderId) byRender.set(d.renderId, [...(byRender.get(d.renderId) ?? []), d]);
  const expected = [...renders].filter(([, r]) => r.settled && (r.status === 'done' || r.status === 'failed'));
  const webhooksLost = expected.filter(([id]) => !byRender.has(id)).map(([id]) => id);
  const webhooksDuplicated = [...deliveries].filter(([, d]) => d.count > 1).map(([id]) => id);
  const streamMissed = expected.filter(([id, r]) => r.status === 'done' && !stream.completed.has(id)).length;

  // What the workers said about their engines and errors (the last lines of each: a failed run's first clue).
  const workerNotes = Object.fromEntries(['worker-0', 'worker-1'].map((slot) => [slot, (procs[slot]?.output ?? '').split('\n')
    .filter((l) => /video engine|error|warn/i.test(l)).slice(-8)]));
  // Stop everything gracefully, then look for what the workers left in their temporary folders.
  for (const slot of ['worker-0', 'worker-1', 'api']) if (procs[slot]) await stopChild(procs[slot], { timeoutMs: 20_000 });
  // Not counted: the video engine's two launchers (<work dir>/browser/chromium-wrapper.sh and the one
  // that refuses Remotion a browser of its own, no-second-browser.sh), files per machine rewritten in
  // place at each start (libs/video browser.ts), not a job's.
  const leftovers = workerDirs.flatMap((dir) => [...filesUnder(join(dir, 'tmp')), ...filesUnder(join(dir, 'data'))])
    .filter((p) => !/\/browser\/(chromium-wrapper|no-second-browser)\.sh$/.test(p));

  // The first and last ten minutes of the run (by a request's start; a tenth of a run under 40 minutes),
  // judged on p99 when each holds at least 100 stills; a shorter run's window holds a dozen, whose p99 is
  // its slowest one, noise on a shared machine: there the median is judged instead (decisions.md "Fleet
  // (issue 30): soak"). Each window names its slowest stills: when, the server's timing of each step, and
  // the videos in flight then (accepted, not yet seen settled), the worker's other work.
  const videosInFlight = (t) => [...renders.values()].filter((r) => r.kind !== 'still' && r.acceptedAt <= t && (r.settledAt ?? Infinity) >= t).length;
  const windowOf = (from, to) => {
    const within = stillLatencies.filter((l) => l.t - start >= from && l.t - start < to);
    const ms = within.map((l) => l.ms);
    const slowest = [...within].sort((a, b) => b.ms - a.ms).slice(0, 5).map((l) => ({
      id: l.id, atMin: Number(((l.t - start) / 60_000).toFixed(2)), ms: l.ms, videosInFlight: videosInFlight(l.t), serverTiming: l.timing,
    }));
    return { minutes: Number((windowMs / 60_000).toFixed(2)), n: ms.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), slowest };
  };
  const firstWindow = windowOf(0, windowMs);
  const lastWindow = windowOf(runMs - windowMs, runMs);
  const judged = Math.min(firstWindow.n, lastWindow.n) >= 100 ? 'p99' : 'p50';
  const warmupMs = Math.max(5, opts.minutes / 6) * 60_000;
  const rss = Object.fromEntries(Object.entries(samples).map(([slot, s]) => {
    const stretch = judgedStretch(s, warmupMs);
    return [slot, {
      lastMb: s.length ? Math.round(s.at(-1).rss / 2 ** 20) : null,
      groupMb: s.length ? Math.round(s.at(-1).groupRss / 2 ** 20) : null,
      maxMb: s.length ? Math.round(Math.max(...s.map((x) => x.rss)) / 2 ** 20) : null,
      fds: s.at(-1)?.fds ?? null,
      growthPctPerHour: growthPerHour(stretch),
      ...(slot.startsWith('worker-') ? { judged: memoryOf(stretch) } : {}),
    }];
  }));
  const outside = [
    ...requests.serverErrors.filter((e) => !inOutage(e.t)),
    ...requests.connectionErrors.filter((e) => !inOutage(e.t)),
  ].map((e) => ({ ...e, atMin: Number(((e.t - start) / 60_000).toFixed(2)) }));
  const lat = stillLatencies.map((l) => l.ms);
  const byKind = {};
  for (const r of renders.values()) {
    const k = (byKind[r.kind] ??= { accepted: 0, done: 0, failed: 0, cancelled: 0 });
    k.accepted++;
    if (r.status) k[r.status]++;
  }
  const result = {
    minutes: opts.minutes,
    elapsedMin: Number(((Date.now() - start) / 60_000).toFixed(2)),
    requests: { total: requests.total, byStatus: requests.byStatus, serverErrorsInOutages: requests.serverErrors.length - requests.serverErrors.filter((e) => !inOutage(e.t)).length },
    renders: { accepted: renders.size, settled: [...renders.values()].filter((r) => r.settled).length, byKind },
    assets: Object.fromEntries(assetRows.map((r) => [r.status, r.n])),
    transcriptions: Object.fromEntries(transcriptionRows.map((r) => [r.status, r.n])),
    faults: {
      kills: kills.map((k) => ({ slot: k.slot, atMin: Number(((k.t - start) / 60_000).toFixed(2)) })),
      outages: outages.map((o) => ({ what: o.what, atMin: Number(((o.from - start) / 60_000).toFixed(2)), seconds: Number((((o.to ?? Date.now()) - o.from) / 1000).toFixed(1)) })),
    },
    lost: [...lostIds],
    doubleCharged,
    webhooks: { delivered: deliveries.size, lost: webhooksLost, duplicated: webhooksDuplicated },
    stream: { events: stream.events, reconnects: stream.reconnects, completedMissed: streamMissed },
    errorsOutsideOutages: outside,
    still: { count: lat.length, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), firstWindow, lastWindow, judged },
    rss,
    tempFilesLeft: leftovers.map((p) => p.slice(work.length + 1)),
    workerNotes,
  };
  // The line (decisions.md "Fleet (issue 30): soak").
  const misses = [];
  if (result.lost.length) misses.push(`${result.lost.length} renders lost`);
  if (doubleCharged.length) misses.push(`${doubleCharged.length} renders charged twice`);
  if (webhooksLost.length) misses.push(`${webhooksLost.length} webhooks lost`);
  if (webhooksDuplicated.length) misses.push(`${webhooksDuplicated.length} webhooks duplicated`);
  if (outside.length) misses.push(`${outside.length} 5xx/refused outside outages`);
  if (!firstWindow.n || !lastWindow.n) misses.push('no stills in the first or last window');
  else if (lastWindow[judged] > Math.max(1.5 * firstWindow[judged], firstWindow[judged] + opts[`${judged}-floor`])) {
    misses.push(`still ${judged} of the last window ${lastWindow[judged]} ms over 1.5x the first's ${firstWindow[judged]} ms`);
  }
  if (opts.minutes >= 20) {
    // Our processes. Not Redis: it keeps bounded history by design (each queue's last 1,000 completed
    // jobs, BullMQ's event streams at 10,000 entries), so within the first hours its memory grows as
    // those fill; its figure is printed, not judged (decisions.md "Fleet (issue 30): soak").
    for (const [slot, r] of Object.entries(rss)) if (slot !== 'redis' && r.growthPctPerHour !== null && r.growthPctPerHour >= 10) misses.push(`${slot} RSS grows ${r.growthPctPerHour.toFixed(1)} %/hour`);
  }
  if (leftovers.length) misses.push(`${leftovers.length} temporary files left`);
  result.misses = misses;
  result.ok = misses.length === 0;
  result.exitCode = result.ok ? 0 : 1;
  result.finalLine = report(true);
  return result;
}

function summary(r) {
  console.log(r.finalLine);
  console.log(`renders: ${JSON.stringify(r.renders.byKind)}; assets ${JSON.stringify(r.assets)}; transcriptions ${JSON.stringify(r.transcriptions)}`);
  console.log(`faults: ${r.faults.kills.map((k) => `${k.slot} killed at ${k.atMin} min`).join(', ')}; ${r.faults.outages.map((o) => `${o.what} at ${o.atMin} min (${o.seconds} s)`).join(', ')}`);
  console.log(`requests ${r.requests.total} ${JSON.stringify(r.requests.byStatus)}, 5xx inside outages ${r.requests.serverErrorsInOutages}, outside: ${r.errorsOutsideOutages.length}${r.errorsOutsideOutages.length ? ` ${JSON.stringify(r.errorsOutsideOutages.slice(0, 5))}` : ''}`);
  console.log(`lost ${r.lost.length}${r.lost.length ? ` (${r.lost.slice(0, 5).join(', ')})` : ''}, charged twice ${r.doubleCharged.length}, webhooks ${r.webhooks.delivered} delivered, lost ${r.webhooks.lost.length}, duplicated ${r.webhooks.duplicated.length}; stream ${r.stream.events} events, ${r.stream.reconnects} reconnects, ${r.stream.completedMissed} completions missed`);
  console.log(`still over HTTP: ${r.still.count}, p50 ${r.still.p50} ms, p99 ${r.still.p99} ms; first ${r.still.firstWindow.minutes} min p50/p99 ${r.still.firstWindow.p50}/${r.still.firstWindow.p99} ms (${r.still.firstWindow.n}), last ${r.still.lastWindow.minutes} min ${r.still.lastWindow.p50}/${r.still.lastWindow.p99} ms (${r.still.lastWindow.n}), ${r.still.judged} judged`);
  for (const [name, w] of [['first', r.still.firstWindow], ['last', r.still.lastWindow]]) {
    for (const l of w.slowest) console.log(`  slowest of the ${name} window: ${l.ms} ms at min ${l.atMin} (${l.id}; ${l.videosInFlight} videos in flight; ${l.serverTiming ?? 'no server timing'})`);
  }
  for (const [slot, x] of Object.entries(r.rss)) {
    console.log(`  ${slot}: rss ${x.lastMb} MB (max ${x.maxMb}, with children ${x.groupMb}), ${x.fds} fds, growth ${x.growthPctPerHour === null ? 'not judged (no 10-minute stretch after warm-up)' : `${x.growthPctPerHour.toFixed(1)} %/hour`}`);
    if (x.judged) console.log(`    judged stretch: ${Object.entries(x.judged).map(([f, v]) => `${f} ${v.fromMb}→${v.toMb} MB (${v.mbPerHour} MB/h)`).join(', ')}`);
  }
  console.log(`temporary files left: ${r.tempFilesLeft.length}${r.tempFilesLeft.length ? ` (${r.tempFilesLeft.slice(0, 5).join(', ')})` : ''}`);
  console.log(r.ok ? 'line: met' : `line: MISSED: ${r.misses.join('; ')}`);
}

await runBench({
  name: 'soak',
  flags: {
    minutes: { arg: 'N', default: 60, parse: positive, help: 'how long the mix runs (default 60)' },
    'kill-every': { arg: 'MIN', default: 5, parse: positive, help: 'a worker SIGKILLed every MIN minutes, at most a third of the run (default 5)' },
    grace: { arg: 'S', default: 120, parse: number(0), help: 'seconds for the accepted renders to settle after the mix (default 120)' },
    'still-every': { arg: 'S', default: 1.5, parse: positive, help: 'a still over HTTP every S seconds (default 1.5)' },
    'video-every': { arg: 'S', default: 20, parse: positive, help: 'a short video every S seconds, every third one chunked (default 20)' },
    'outage-margin': { arg: 'S', default: 10, parse: number(0), help: 'seconds an outage window stays open after the API answers again (default 10)' },
    allocator: { arg: 'A', default: 'jemalloc', parse: oneOf('jemalloc', 'glibc'), help: 'the workers\' allocator: jemalloc (as scripts/up.sh and the worker image; glibc when not installed) or glibc' },
    'p99-floor': { arg: 'MS', default: 100, parse: number(0), help: 'the last window\'s p99 may exceed 1.5x the first\'s by up to this (default 100)' },
    'p50-floor': { arg: 'MS', default: 50, parse: number(0), help: 'judged instead when a window holds under 100 stills: its median may exceed 1.5x the first\'s by up to this (default 50)' },
    break: { arg: 'WHAT', default: undefined, parse: oneOf('double-webhook', 'no-respawn'), help: 'break something on purpose (the bench must then fail): double-webhook | no-respawn' },
  },
  run: soak,
  summary,
  figure: (r) => (r.ok ? 'line met' : `line missed (${r.misses.length})`),
  jsonIndent: 0,
});
