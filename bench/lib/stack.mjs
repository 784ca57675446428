// Shared plumbing of the HTTP benchmarks: child processes (kept output, cleanup on exit and
// signals), a private Redis, a temp DATA_DIR, a workspace from the CLI, the API and workers from dist/.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const children = new Set();
const tempDirs = [];
let cleaned = false;

export function log(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

export function freePort() {
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
export function startChild(name, cmd, args, env) {
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

export async function stopChild(child, timeoutMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await child.exited;
  clearTimeout(timer);
}

/** Stops the app processes first, Redis last, then removes the temp dirs. */
export async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  const all = [...children];
  const redis = all.filter((c) => c.label === 'redis-server');
  await Promise.all(all.filter((c) => c.label !== 'redis-server').map((c) => stopChild(c)));
  await Promise.all(redis.map((c) => stopChild(c)));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  // Ready for another stack in the same run (bench/video-chunks starts two, one after the other).
  tempDirs.length = 0;
  cleaned = false;
}

/** Stops everything on exit, error or a signal. */
export function installCleanupHandlers() {
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

export async function waitFor(what, child, probe, timeoutMs = 30_000) {
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

export function runNode(args, env) {
  return new Promise((res, rej) => {
    const child = startChild(args[0], process.execPath, args, env);
    child.exited.then(({ code }) => (code === 0 ? res(child.output) : rej(new Error(`${args.join(' ')} exited ${code}:\n${child.output}`))));
  });
}

/** The CLI's one JSON line. */
export async function cli(env, ...args) {
  const out = await runNode(['dist/apps/cli/src/main.js', ...args], env);
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`${args[0]} printed no JSON:\n${out}`);
  return JSON.parse(line);
}

/**
 * Redis (private, unless REDIS_URL is set), a temp DATA_DIR (SQLite, or `pg`), an enterprise
 * workspace, the API and `workers` worker processes (optionally pinned to cores: `workerCpus`).
 * Returns the base URL, the keys and the env.
 */
export async function startStack({ name = 'bench', workers = 0, workerCpus, pg, extraEnv = {} } = {}) {
  const work = mkdtempSync(join(tmpdir(), `${name}-`));
  tempDirs.push(work);
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    const port = await freePort();
    const redis = startChild('redis-server', 'redis-server', [
      '--bind', '127.0.0.1', '--port', String(port), '--dir', work,
      '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction',
    ], process.env);
    await waitFor('redis', redis, () => redis.output.includes('Ready to accept connections'), 10_000);
    redisUrl = `redis://127.0.0.1:${port}`;
  }
  const apiPort = await freePort();
  const env = {
    ...process.env,
    APP_ENV: 'development',
    DATA_DIR: join(work, 'data'),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: name,
    APP_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MULTIPLIER: '100000',
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  if (pg) env.DATABASE_URL = pg;
  const workspace = await cli(env, 'workspace:create', '--name', 'Bench', '--plan', 'enterprise');
  const base = `http://127.0.0.1:${apiPort}`;
  const api = startChild('api', process.execPath, ['dist/apps/api/src/main.js'], env);
  await waitFor('api', api, async () => (await fetch(`${base}/api/health`)).ok, 60_000);
  // Workers are ready when they take jobs: callers warm up with real requests before measuring.
  // `workerCpus[i]` (a taskset CPU list such as '0' or '2-3') pins worker i and everything it starts
  // (Chromium, ffmpeg) to those cores: workers with cores of their own, as on separate machines.
  const worker = [process.execPath, 'dist/apps/worker/src/main.js'];
  for (let i = 0; i < workers; i++) {
    const cpus = workerCpus?.[i];
    const [cmd, ...argv] = cpus ? ['taskset', '-c', cpus, ...worker] : worker;
    startChild(`worker-${i}`, cmd, argv, env);
  }
  return { base, env, workspace, dataDir: env.DATA_DIR };
}

/** The kept output of every child still running (for failure reports). */
export function childOutputs() {
  return [...children].map((c) => `--- ${c.label} ---\n${c.output}`).join('\n');
}

export function quantile(values, q) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
