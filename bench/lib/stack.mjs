// The product started from dist/ for a bench: a private Redis, a temp DATA_DIR (SQLite) or a
// PostgreSQL database, an enterprise workspace from the CLI, the API and worker processes. Everything
// is registered with processes.mjs, so cleanup() stops and removes it.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { WORKER_NODE_FLAGS } from '../../dist/apps/worker/src/node-flags.js';
import { freePort, log, onCleanup, runNode, startChild, stopChild, tempDir, waitFor } from './processes.mjs';

/** REDIS_URL when set, else a redis-server on a free loopback port, without persistence, in `dir`. */
export async function startRedis(dir) {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, child: null };
  const port = await freePort();
  const child = startChild('redis-server', 'redis-server', [
    '--bind', '127.0.0.1', '--port', String(port), '--dir', dir,
    '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction',
  ], process.env, { last: true });
  await waitFor('redis', child, () => child.output.includes('Ready to accept connections'), 10_000);
  const url = `redis://127.0.0.1:${port}`;
  log(`redis-server on ${url}`);
  return { url, child };
}

/** A fresh database on the PostgreSQL server at `serverUrl` (postgres://user@host:port), dropped by cleanup. */
export async function createPgDatabase(serverUrl) {
  const { default: pg } = await import('pg');
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql) => {
    const c = new pg.Client({ connectionString: `${serverUrl}/postgres` });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  onCleanup(() => admin(`drop database if exists ${name} with (force)`));
  return `${serverUrl}/${name}`;
}

/** The CLI's one JSON line. */
export async function cli(env, ...args) {
  const out = await runNode(['dist/apps/cli/src/main.js', ...args], env);
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`${args[0]} printed no JSON:\n${out}`);
  return JSON.parse(line);
}

/**
 * A worker process (not waited for). `cpus` (a taskset CPU list such as '0' or '2-3') pins it and
 * everything it starts (Chromium, ffmpeg) to those cores; it runs with the worker's Node options
 * (WORKER_NODE_FLAGS, as npm run start:worker), then `nodeArgs`, before the script.
 */
export function startWorker(label, env, { cpus, nodeArgs = [] } = {}) {
  const worker = [process.execPath, ...WORKER_NODE_FLAGS, ...nodeArgs, 'dist/apps/worker/src/main.js'];
  const [cmd, ...argv] = cpus ? ['taskset', '-c', cpus, ...worker] : worker;
  return startChild(label, cmd, argv, env);
}

/**
 * Redis (see startRedis), a temp DATA_DIR (SQLite, unless `databaseUrl`), an enterprise workspace,
 * the API and `workers` worker processes (worker i pinned to `workerCpus[i]` when given). `extraEnv`
 * is added to the app processes' environment; an undefined value removes that variable. `apiNodeArgs`
 * and `workerNodeArgs` go before the API's and the workers' scripts (a profiler); `apiCpus` (a taskset
 * CPU list) pins the API.
 * Returns the base URL, the workspace (its keys), the env and the API, worker and Redis children.
 */
export async function startStack({ name = 'bench', redisPrefix = name, workers = 0, workerCpus, databaseUrl, extraEnv = {}, apiNodeArgs = [], workerNodeArgs = [], apiCpus } = {}) {
  const work = tempDir(name);
  const redis = await startRedis(work);
  const apiPort = await freePort();
  const env = {
    ...process.env,
    APP_ENV: 'development',
    DATA_DIR: join(work, 'data'),
    REDIS_URL: redis.url,
    REDIS_PREFIX: redisPrefix,
    APP_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MULTIPLIER: '100000',
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ...extraEnv,
  };
  for (const [k, v] of Object.entries(env)) if (v == null) delete env[k];
  const workspace = await cli(env, 'workspace:create', '--name', 'Bench', '--plan', 'enterprise');
  if (!workspace?.liveKey) throw new Error(`workspace:create printed no liveKey: ${JSON.stringify(workspace)}`);
  log(`workspace ${workspace.workspaceId} (enterprise, ${databaseUrl ? 'postgresql' : 'sqlite'})`);
  const base = `http://127.0.0.1:${apiPort}`;
  const apiArgs = [process.execPath, ...apiNodeArgs, 'dist/apps/api/src/main.js'];
  const [apiCmd, ...apiArgv] = apiCpus ? ['taskset', '-c', apiCpus, ...apiArgs] : apiArgs;
  const api = startChild('api', apiCmd, apiArgv, env);
  await waitFor('api', api, async () => (await fetch(`${base}/api/health`)).ok, 60_000);
  log(`api on ${base}`);
  // Workers are ready when they take jobs: callers warm up with real requests before measuring.
  const workerChildren = Array.from({ length: workers }, (_, i) => startWorker(`worker-${i}`, env, { cpus: workerCpus?.[i], nodeArgs: workerNodeArgs }));
  return { base, env, workspace, dataDir: env.DATA_DIR, api, workers: workerChildren, redis: redis.child };
}

/** Stops a stack's processes (workers, API, then its own Redis) before the run ends; its temp dir goes at cleanup. */
export async function stopStack(stack) {
  await Promise.all(stack.workers.map((w) => stopChild(w)));
  await stopChild(stack.api);
  if (stack.redis) await stopChild(stack.redis);
}
