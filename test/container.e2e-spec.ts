import { execFile } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { createServicesContext, ORM, PROCESS_ROLES, REDIS } from '#libs/app';
import { newId } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { MessagingService } from '#libs/messaging';
import { createRedis } from '#libs/redis';
import { RenderLifecycle, RendersService } from '#libs/renders';
import { spawnCli, testContext, type TestContext } from './harness.js';

/** A loopback TCP relay in front of the test's Redis that counts the connections made through it and keeps what clients sent. */
async function redisRelay(target: URL): Promise<{ url: string; connections: () => number; sent: () => string; close: () => Promise<void> }> {
  let connections = 0;
  let sent = '';
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    connections++;
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      sent += chunk.toString('latin1');
    });
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    connections: () => connections,
    sent: () => sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// libs/app's ServicesModule: the one Nest container of the API, the worker and the CLI (docs/architecture.md "composition root").
describe('One container (issue 31): the CLI through a Nest application context', () => {
  let ctx: TestContext;
  let probe: Redis;

  beforeAll(async () => {
    ctx = await testContext();
    probe = createRedis(ctx.config, 'test');
  });
  afterAll(async () => {
    probe.disconnect();
    await ctx.cleanup();
  });

  /** The server's view of one client connection (CLIENT LIST line), or undefined once it is gone. */
  const client = async (id: number) => ((await probe.client('LIST')) as string).split('\n').find((line) => line.startsWith(`id=${id} `));

  it('builds each service once for the whole context; the role names and tunes the Redis connection; close() releases Redis and the database', async () => {
    const app = await createServicesContext(ctx.config, PROCESS_ROLES.cli);
    expect(app.get(CreditsService)).toBe(app.get(CreditsService));
    expect(app.get(RenderLifecycle)).toBe(app.get(RenderLifecycle));
    const workspaceId = newId('workspace');
    await app.get(CreditsService).open(workspaceId, 'free');
    expect((await app.get(CreditsService).balance(workspaceId, 'free')).credits.image.available).toBe(50);

    const redis = app.get(REDIS);
    const id = (await redis.client('ID')) as number;
    expect(await client(id)).toContain(' name=media-render:cli ');
    expect(redis.options.maxRetriesPerRequest).toBe(1);

    await app.close();
    expect(await app.get(ORM).isConnected()).toBe(false);
    for (let i = 0; i < 50 && (await client(id)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await client(id)).toBeUndefined();
  });

  it('the CLI has no queues (PROCESS_ROLES.cli): its messaging library is there, renders built on the queues are not', async () => {
    const app = await createServicesContext(ctx.config, PROCESS_ROLES.cli);
    try {
      expect(app.get(MessagingService)).toBeInstanceOf(MessagingService);
      expect(() => app.get(RendersService)).toThrow();
    } finally {
      await app.close();
    }
  });

  it('a CLI command on the database alone opens no Redis connection; one that needs Redis opens exactly one, named media-render:cli (no queue connection)', async () => {
    const relay = await redisRelay(new URL(ctx.config.redisUrl));
    try {
      const env = { ...ctx.env, REDIS_URL: relay.url };
      const created = await spawnCli(env, 'workspace:create', '--name', 'Container Co');
      expect(created.code).toBe(0);
      expect(created.json.workspaceId).toMatch(/^org_/);
      expect(relay.connections()).toBe(0);

      const suspended = await spawnCli(env, 'workspace:suspend', '--workspace', created.json.workspaceId as string);
      expect(suspended).toEqual({ code: 0, json: { workspaceId: created.json.workspaceId, suspended: true } });
      expect(relay.connections()).toBe(1);
      expect(relay.sent()).toContain('media-render:cli');
    } finally {
      await relay.close();
    }
  });

  it('the CLI prints exactly one JSON object on stdout even when it logs (LOG_LEVEL=info): Nest and the libraries log on stderr only', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['dist/apps/cli/src/main.js', 'workspace:create', '--name', 'Loud Co'], {
      env: { ...process.env, ...ctx.env, LOG_LEVEL: 'info' },
    });
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]) as Record<string, unknown>).toMatchObject({ workspaceId: expect.stringMatching(/^org_/) as unknown });
  });
});
