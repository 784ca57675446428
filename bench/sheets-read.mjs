#!/usr/bin/env node
/**
 * Sheets read benchmark (issue 16): requests/s of reading a 10,000-row tab as records through our API
 * (GET /api/v1/integrations/workspace-suite/sheets/spreadsheets/{id}/values?range=Sheet1&as=records)
 * against the loopback Google fake answering its values.get directly, in the same run. Target: ours
 * at least 0.5 of direct. See docs/benchmarks.md.
 *
 *   node bench/sheets-read.mjs [--rows 10000] [--columns 8] [--connections 4] [--duration 10]
 *                              [--warmup 2] [--rounds 1] [--profile DIR] [--json]
 *
 * Self-contained: its own redis-server (unless REDIS_URL is set), a temp DATA_DIR (SQLite), the API
 * from dist/, the GoogleFake of test/fakes/suite.ts (Node strips its types) in a child process, cleanup on exit.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  busyBeforeLoad, cannon, cli, combineRuns, cpuProfileArgs, cpuTimes, floored, log, machine, number, printProfile, profileSummary, runBench, startChild, startStack, stealPct,
  stopChild, waitFor,
} from './lib/harness.mjs';

const TARGET_RATIO = 0.5;

/** The tab: a header row and `rows` rows of `columns` cells (text, numbers, a boolean, a date), ~60 bytes a row. */
function tab(rows, columns) {
  const names = ['Name', 'Email', 'City', 'Age', 'Score', 'Active', 'Joined', 'Plan', 'Team', 'Notes'];
  const header = Array.from({ length: columns }, (_, c) => names[c] ?? `Col${c + 1}`);
  const cell = (r, c) => [`Person ${r}`, `p${r}@example.com`, ['Lisbon', 'Oslo', 'Kyoto'][r % 3], 20 + (r % 50), (r * 37) % 1000 / 10, r % 2 === 0, `2025-0${1 + (r % 9)}-1${r % 10}`, ['free', 'pro'][r % 2]][c] ?? `c${c}r${r}`;
  return [header, ...Array.from({ length: rows }, (_, r) => header.map((_h, c) => cell(r + 1, c)))];
}

async function measure(target, opts) {
  const load = { url: target.url, headers: target.headers, connections: opts.connections, timeout: 60 };
  if (opts.warmup > 0) await cannon({ ...load, duration: opts.warmup });
  const before = cpuTimes();
  const r = await cannon({ ...load, duration: opts.duration });
  const s = {
    reqPerSec: r.requests.total / opts.duration, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total,
    non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, stealPct: stealPct(before, cpuTimes()),
  };
  if (s.non2xx || s.errors || s.timeouts || !s.total) {
    throw new Error(`${target.name}: ${s.non2xx} non-2xx, ${s.errors} errors, ${s.timeouts} timeouts out of ${s.total} requests`);
  }
  log(`${target.name.padEnd(6)} ${s.reqPerSec.toFixed(2).padStart(8)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms${s.stealPct === null ? '' : `  (cpu steal ${s.stealPct} %)`}`);
  return s;
}

async function bench(opts) {
  // 1. The Google fake (its own process, so neither it nor the API shares a thread with autocannon).
  const fake = startChild('google-fake', process.execPath, [fileURLToPath(import.meta.url), '--fake-server', String(opts.rows), String(opts.columns)], process.env);
  let google = null;
  await waitFor('google fake', fake, () => {
    const line = fake.output.split('\n').find((l) => l.startsWith('{'));
    google = line ? JSON.parse(line) : null;
    return google !== null;
  }, 60_000);
  log(`google fake on ${google.baseUrl}: a ${opts.rows.toLocaleString('en')}-row × ${opts.columns}-column tab`);

  // 2. Redis, a temp DATA_DIR (SQLite), an enterprise workspace connected to the fake, the API.
  if (opts.profile) await mkdir(opts.profile, { recursive: true });
  const profileSince = Date.now();
  const { base, env, workspace, api } = await startStack({
    name: 'sheets-read', redisPrefix: 'bench', apiNodeArgs: opts.profile ? cpuProfileArgs(opts.profile) : [], extraEnv: { GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, GOOGLE_TIMEOUT_MS: '60000' },
  });
  await cli(env, 'integration:connect', '--workspace', workspace.workspaceId, '--provider', 'workspace-suite', '--access-token', google.accessToken,
    '--refresh-token', google.refreshToken, '--expires-at', new Date(Date.now() + 3600_000).toISOString(), '--base-url', google.baseUrl);

  // 3. Both answers once: the same rows, ours as records.
  const ours = { name: 'ours', url: `${base}/api/v1/integrations/workspace-suite/sheets/spreadsheets/${google.id}/values?range=Sheet1&as=records`, headers: { 'x-api-key': workspace.liveKey } };
  // Diagnostic: the same read as Google's grid (as=values), an answer the size of direct's.
  const grid = { name: 'grid', url: ours.url.replace('as=records', 'as=values'), headers: ours.headers };
  const direct = {
    name: 'direct',
    url: `${google.baseUrl}/v4/spreadsheets/${google.id}/values/Sheet1?majorDimension=ROWS&valueRenderOption=FORMATTED_VALUE&dateTimeRenderOption=FORMATTED_STRING`,
    headers: { authorization: `Bearer ${google.accessToken}` },
  };
  const sizes = {};
  for (const t of [ours, grid, direct]) {
    const res = await fetch(t.url, { headers: t.headers });
    const body = await res.text();
    const json = res.status === 200 ? JSON.parse(body) : null;
    const rows = t === ours ? json?.data?.records?.length : ((t === grid ? json?.data?.values : json?.values)?.length ?? 0) - 1;
    if (rows !== opts.rows) throw new Error(`${t.name} answered ${res.status} with ${rows} rows (expected ${opts.rows}): ${body.slice(0, 300)}`);
    sizes[t.name] = Buffer.byteLength(body);
  }
  log(`answers: ours ${(sizes.ours / 1e6).toFixed(2)} MB (records), grid ${(sizes.grid / 1e6).toFixed(2)} MB (ours, as=values), direct ${(sizes.direct / 1e6).toFixed(2)} MB`);

  const busyBefore = await busyBeforeLoad();
  const targets = opts.grid ? [direct, ours, grid] : [direct, ours];
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    if (opts.rounds > 1) log(`round ${round}/${opts.rounds}`);
    for (const t of targets) runs[t.name].push(await measure(t, opts));
  }
  const results = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, combineRuns(v, 2)]));
  const ratio = results.ours.reqPerSec / results.direct.reqPerSec;
  if (opts.profile) await stopChild(api, { timeoutMs: 15_000, signal: 'SIGUSR2' });
  return {
    ...(opts.profile ? { profile: profileSummary(opts.profile, profileSince) } : {}),
    ...machine(), database: 'sqlite', rows: opts.rows, columns: opts.columns, connections: opts.connections, durationSec: opts.duration,
    warmupSec: opts.warmup, rounds: opts.rounds, busyBeforePct: busyBefore, bodyBytes: sizes, results, ratio, target: TARGET_RATIO, meetsTarget: ratio >= TARGET_RATIO,
  };
}

function summary(r) {
  console.log(`\n${r.cpus} CPUs, Node ${r.node}, ${r.rows.toLocaleString('en')} rows × ${r.columns} columns, ${r.connections} connections, ${r.durationSec} s runs` +
    `${r.rounds > 1 ? `, median of ${r.rounds} rounds` : ''}`);
  for (const [name, label] of [['direct', 'fake values.get, direct'], ['ours', 'our API, as=records'], ['grid', 'our API, as=values']]) {
    const s = r.results[name];
    if (!s) continue;
    console.log(`${label.padEnd(24)} ${s.reqPerSec.toFixed(2).padStart(8)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms  ${(r.bodyBytes[name] / 1e6).toFixed(2)} MB`);
  }
  console.log('');
  if (r.profile) printProfile(r.profile, 'API');
}

function figure(r) {
  return `ours ${r.results.ours.reqPerSec.toFixed(2)} req/s vs direct ${r.results.direct.reqPerSec.toFixed(2)} req/s = ratio ${r.ratio.toFixed(2)} (target >= ${TARGET_RATIO})`;
}

// ---------------------------------------------------------------------------------------------
// Child mode: the Google fake holding the tab (`node bench/sheets-read.mjs --fake-server ROWS COLUMNS`).
// ---------------------------------------------------------------------------------------------
if (process.argv[2] === '--fake-server') {
  const { startGoogleFake } = await import('#testing/suite');
  const fake = await startGoogleFake();
  const id = fake.seed('Bench', [{ title: 'Sheet1', rows: tab(Number(process.argv[3]), Number(process.argv[4])) }]);
  // The fake records every request for tests; a bench keeps none of them.
  fake.requests.push = () => 0;
  process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
  const { baseUrl, clientId, clientSecret, accessToken, refreshToken } = fake;
  process.stdout.write(`${JSON.stringify({ baseUrl, clientId, clientSecret, accessToken, refreshToken, id })}\n`);
} else {
  await runBench({
    name: 'sheets-read',
    flags: {
      rows: { arg: 'N', default: 10_000, parse: floored(1), help: 'data rows in the tab (default 10000)' },
      columns: { arg: 'N', default: 8, parse: floored(1), help: 'columns (default 8)' },
      connections: { arg: 'N', default: 4, parse: floored(1), help: 'concurrent connections (default 4)' },
      duration: { arg: 'S', default: 10, parse: number(1), help: 'seconds per measured run (default 10)' },
      warmup: { arg: 'S', default: 2, parse: number(0), help: 'seconds of warm-up before each measured run (default 2; 0 skips)' },
      rounds: { arg: 'N', default: 1, parse: floored(1), help: 'alternate direct/ours N times and report the median (default 1)' },
      grid: { help: 'also measure our API with as=values (an answer the size of direct\'s; diagnostic)' },
      profile: { arg: 'DIR', default: null, parse: (v) => resolve(v), help: "run the API with --cpu-prof, its .cpuprofile written to DIR; prints the top costs (the API's whole life)" },
    },
    footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
    run: bench,
    summary,
    figure,
    jsonIndent: 2,
  });
}
