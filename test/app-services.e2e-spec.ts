import type { Redis } from 'ioredis';
import { AppServices, PROCESS_ROLES } from '#libs/app';
import { newId } from '#libs/core';
import { createRedis } from '#libs/redis';
import { testContext, type TestContext } from './harness.js';

// libs/app's AppServices: the one factory of the API, the worker and the CLI (docs/architecture.md).
describe('AppServices', () => {
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

  it('builds a service once and shares it; the role names and tunes the Redis connection; close() releases both', async () => {
    const services = await AppServices.open(ctx.config, PROCESS_ROLES.cli);
    expect(services.credits).toBe(services.credits);
    expect(services.lifecycle).toBe(services.lifecycle);
    const workspaceId = newId('workspace');
    await services.credits.open(workspaceId, 'free');
    expect((await services.credits.balance(workspaceId, 'free')).credits.image.available).toBe(50);

    const id = (await services.redis.client('ID')) as number;
    expect(await client(id)).toContain(' name=media-render:cli ');
    expect(services.redis.options.maxRetriesPerRequest).toBe(1);

    await services.close();
    expect(await services.orm.isConnected()).toBe(false);
    for (let i = 0; i < 50 && (await client(id)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await client(id)).toBeUndefined();
  });
});
