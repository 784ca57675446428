import type { INestApplicationContext } from '@nestjs/common';
import { createServicesContext, ORM, PROCESS_ROLES } from '#libs/app';
import { newId } from '#libs/core';
import { allWorkspaces } from '#libs/db';
import { Render, RenderLifecycle } from '#libs/renders';
import { testContext, type TestContext } from './harness.js';

// libs/renders' RenderLifecycle, the one writer of render status (§3 render status; decisions.md
// "Video renders": a run whose worker died goes back to `queued`, the next run takes it).
describe('RenderLifecycle', () => {
  let ctx: TestContext;
  let services: INestApplicationContext;

  beforeAll(async () => {
    ctx = await testContext();
    services = await createServicesContext(ctx.config, PROCESS_ROLES.cli);
  });
  afterAll(async () => {
    await services.close();
    await ctx.cleanup();
  });

  async function queuedVideo(): Promise<string> {
    const id = newId('render');
    const em = allWorkspaces(services.get(ORM)).fork();
    em.create(Render, {
      id, workspaceId: newId('workspace'), status: 'queued', kind: 'video', mode: 'test', format: 'mp4', scale: 1, credits: 0,
      watermarked: false, progress: 0, cancelRequested: false, edit: {}, attempts: 0,
    });
    await em.flush();
    return id;
  }
  const record = (id: string) => allWorkspaces(services.get(ORM)).fork().findOneOrFail(Render, { id });

  it('a requeue for a run that already ended leaves the next run, started meanwhile, as it is', async () => {
    const id = await queuedVideo();
    await services.get(RenderLifecycle).start(id, 1);
    await services.get(RenderLifecycle).progress(id, 0.4);
    // Run 1's worker dies; the worker that notices it starts run 2 before the requeue of run 1 lands.
    await services.get(RenderLifecycle).start(id, 2);
    await services.get(RenderLifecycle).progress(id, 0.1);
    await services.get(RenderLifecycle).requeue(id, 1);
    expect(await record(id)).toMatchObject({ status: 'rendering', attempts: 2, progress: 0.1 });
  });

  it('a requeue for the run the record shows puts it back to queued with no progress', async () => {
    const id = await queuedVideo();
    await services.get(RenderLifecycle).start(id, 1);
    await services.get(RenderLifecycle).progress(id, 0.4);
    await services.get(RenderLifecycle).requeue(id, 1);
    expect(await record(id)).toMatchObject({ status: 'queued', attempts: 1, progress: 0 });
    // …and the next run takes it from there.
    await services.get(RenderLifecycle).start(id, 2);
    expect(await record(id)).toMatchObject({ status: 'fetching', attempts: 2 });
  });
});
