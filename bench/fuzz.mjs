#!/usr/bin/env node
/**
 * Fuzz run (issue 21): N generated bad requests (bodies, query strings, path ids, headers; some with
 * headers over the server's size) on every route of openapi.json (generated from the controllers'
 * metadata), over real HTTP, against the API from dist/. Every answer must be below 500 and, when an
 * error, the §7 envelope with a known code of the status answered; the service must answer its
 * health check and a keyed read afterwards. The last line: `fuzz: N requests, 0 5xx (…)`.
 * See docs/benchmarks.md. The generator is test/fuzz-requests.ts (test/fuzz.e2e-spec.ts runs it
 * in the suite, bounded); Node runs that TypeScript file as it is.
 *
 *   node bench/fuzz.mjs [--requests 10000] [--connections 8] [--seed N] [--pg postgres://user@host:port] [--json]
 *
 * Self-contained: its own redis-server (unless REDIS_URL is set), a temp DATA_DIR (SQLite) or a fresh
 * database on --pg, an enterprise workspace, an owner's session, the API; cleanup on exit. Answers
 * that break the rules are counted on the last line and the first ten printed above it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ERROR_STATUS } from '../dist/libs/core/src/index.js';
import { envelopeProblem, fuzzRequest, routesOfOpenApi } from '../test/fuzz-requests.ts';
import { ROOT, cli, createPgDatabase, floored, log, machine, runBench, startStack } from './lib/harness.mjs';

/** Every OVERSIZED-th request carries a header over Node's 16 KiB (the server's own 431, through the client-error hook). */
const OVERSIZED = 100;

async function signIn(base, env, org) {
  const phone = '+4915100002121';
  await cli(env, 'user:create', '--phone', phone, '--workspace', org, '--role', 'owner');
  const post = (path, body) => fetch(`${base}/api${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!(await post('/auth/send-otp', { phone })).ok) throw new Error('send-otp failed');
  const { code } = await cli(env, 'otp:last', '--phone', phone);
  const res = await post('/auth/verify-otp', { phone, otp: code });
  if (!res.ok) throw new Error(`verify-otp answered ${res.status}`);
  return (await res.json()).data.token;
}

async function send(base, req) {
  const init = { method: req.method, headers: req.headers, redirect: 'manual' };
  if (req.payload !== undefined) init.body = req.payload;
  const res = await fetch(`${base}${req.url}`, init);
  const text = req.method === 'HEAD' ? '' : await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? undefined, text };
}

async function bench(opts) {
  const databaseUrl = opts.pg ? await createPgDatabase(opts.pg) : undefined;
  const { base, env, workspace, api } = await startStack({ name: 'fuzz', databaseUrl });
  const token = await signIn(base, env, workspace.workspaceId);
  const doc = JSON.parse(readFileSync(join(ROOT, 'openapi.json'), 'utf8'));
  const routes = routesOfOpenApi(doc);
  const seed = opts.seed ?? Date.now() % 2 ** 31;
  const requests = fc.sample(fuzzRequest(routes, { key: workspace.liveKey, session: { token, org: workspace.workspaceId } }, doc.components?.schemas ?? {}), { numRuns: opts.requests, seed });
  requests.forEach((req, i) => {
    if (i % OVERSIZED === OVERSIZED - 1) req.headers['x-padding'] = 'p'.repeat(20_000);
  });
  log(`${routes.length} routes, ${requests.length} requests generated (seed ${seed}), ${opts.connections} connections`);

  const statuses = {};
  const problems = [];
  let fivexx = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++];
      let problem;
      try {
        const res = await send(base, req);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status >= 500) fivexx++;
        problem = envelopeProblem(res.status, res.type, res.text, req.method, ERROR_STATUS);
      } catch (err) {
        statuses.failed = (statuses.failed ?? 0) + 1;
        problem = `no answer: ${err.cause?.message ?? err.message}`;
      }
      if (problem) problems.push(`${req.method} ${req.url.slice(0, 160)}: ${problem}`);
    }
  };
  await Promise.all(Array.from({ length: opts.connections }, worker));
  const seconds = (performance.now() - started) / 1000;

  const health = (await fetch(`${base}/api/health`)).status;
  const keyed = (await fetch(`${base}/api/v1/keys/current`, { headers: { 'x-api-key': workspace.liveKey } })).status;
  const session = (await fetch(`${base}/api/credits`, { headers: { authorization: `Bearer ${token}`, 'x-service-org': workspace.workspaceId } })).status;
  const healthy = health === 200 && keyed === 200 && session === 200 && api.exitCode === null && api.signalCode === null;
  if (!healthy) problems.push(`unhealthy afterwards: health ${health}, keyed read ${keyed}, session read ${session}`);
  return {
    ...machine(), database: opts.pg ? 'postgresql' : 'sqlite', seed, routes: routes.length, requests: requests.length, connections: opts.connections,
    seconds: Number(seconds.toFixed(1)), reqPerSec: Number((requests.length / seconds).toFixed(0)), fivexx, statuses, problems: problems.length, firstProblems: problems.slice(0, 10), healthy,
  };
}

function summary(r) {
  console.log(`\n${r.cpus} CPUs, Node ${r.node}, ${r.database}, ${r.routes} routes, ${r.connections} connections, seed ${r.seed}`);
  console.log(`statuses: ${Object.entries(r.statuses).map(([s, n]) => `${s} ×${n}`).join(', ')}`);
  console.log(`${r.seconds} s (${r.reqPerSec} req/s); healthy afterwards: ${r.healthy ? 'yes' : 'NO'}`);
  for (const p of r.firstProblems) console.log(`  ${p}`);
  console.log('');
}

function figure(r) {
  return `${r.requests} requests, ${r.fivexx} 5xx${r.problems ? `, ${r.problems} outside the rules` : ''} (${r.seconds} s, ${r.database})`;
}

await runBench({
  name: 'fuzz',
  flags: {
    requests: { arg: 'N', default: 10_000, parse: floored(1), help: 'generated requests (default 10000)' },
    connections: { arg: 'N', default: 8, parse: floored(1), help: 'requests in flight (default 8)' },
    seed: { arg: 'N', default: null, parse: floored(0), help: 'fast-check seed (default: from the clock; printed)' },
    pg: { arg: 'URL', default: null, help: 'a PostgreSQL server (postgres://user@host:port): a fresh database on it instead of SQLite' },
  },
  footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
  run: bench,
  summary,
  figure,
  jsonIndent: 2,
});
