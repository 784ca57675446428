import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

// A worker stopped by its supervisor (SIGTERM: docker stop, systemd, Kubernetes) exits in bounded
// time, also when Redis went away first (BullMQ's close waits for Redis forever): docker/compose.yaml
// gives it stop_grace_period 45 s; an idle worker must not need it. The built worker, as operators run it.

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('worker shutdown (SIGTERM)', () => {
  let dir: string;
  let redisPort: number;
  const children = new Set<ChildProcess>();

  const pingRedis = () => spawnSync('redis-cli', ['-p', String(redisPort), 'ping']).stdout?.toString().trim() === 'PONG';
  const settle = async (up: boolean) => {
    for (let i = 0; i < 100 && pingRedis() !== up; i++) await new Promise((r) => setTimeout(r, 50));
    expect(pingRedis()).toBe(up);
  };
  /** A Redis of this test on a port of its own. */
  const startRedis = async () => {
    redisPort = await freePort();
    const r = spawnSync('redis-server', ['--bind', '127.0.0.1', '--port', String(redisPort), '--dir', dir, '--daemonize', 'yes', '--pidfile', join(dir, 'redis.pid'), '--save', '', '--appendonly', 'no']);
    if (r.status !== 0) throw new Error(`redis-server: ${r.stderr.toString()}`);
    await settle(true);
  };
  const stopRedis = async () => {
    try {
      process.kill(Number(readFileSync(join(dir, 'redis.pid'), 'utf8')), 'SIGTERM');
    } catch {
      return; // not running
    }
    await settle(false);
  };

  /** The built worker; resolves once it says it consumes its queues. */
  async function startWorker(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['dist/apps/worker/src/main.js'], {
      env: { PATH: process.env.PATH, APP_ENV: 'development', LOG_LEVEL: 'warn', DATA_DIR: join(dir, 'data'), REDIS_URL: `redis://127.0.0.1:${redisPort}`, VIDEO_ENGINE: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker did not start: ${out}`)), 30_000);
      const seen = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Worker consuming queues')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${out}`)));
    });
    return child;
  }

  /** Milliseconds from SIGTERM to exit. */
  async function stop(child: ChildProcess): Promise<number> {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const started = Date.now();
    child.kill('SIGTERM');
    await exited;
    return Date.now() - started;
  }

  beforeAll(() => {
    dir = mkdtempSync('/tmp/worker-shutdown-');
  });
  afterEach(async () => {
    for (const c of children) c.kill('SIGKILL');
    await stopRedis();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an idle worker exits within 5 s of SIGTERM', async () => {
    await startRedis();
    const worker = await startWorker();
    expect(await stop(worker)).toBeLessThan(5_000);
  });

  it('a worker whose Redis is gone still exits within the compose grace period (45 s)', async () => {
    await startRedis();
    const worker = await startWorker();
    await stopRedis();
    expect(await stop(worker)).toBeLessThan(45_000);
  }, 90_000);
});
