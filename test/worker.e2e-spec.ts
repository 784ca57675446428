import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { CreditsService, LedgerEntry } from '#libs/credits';
import { newId } from '#libs/core';
import { openAppDatabase } from '#libs/app';
import { forWorkspace } from '#libs/db';
import { JobQueues } from '#libs/queue';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { checkHandlers } from '../apps/worker/src/processors/queue-processor.js';
import { queueEvents, testContext, type TestContext } from './harness.js';

describe('worker: a job runs end to end through Redis', () => {
  let ctx: TestContext;
  let worker: INestApplicationContext;
  let queues: JobQueues;
  beforeAll(async () => {
    ctx = await testContext();
    worker = await createWorkerApp(ctx.config);
    queues = worker.get(JobQueues);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.cleanup();
  });

  it('answers a ping job enqueued by a producer', async () => {
    const events = await queueEvents(queues, 'system');
    const nonce = randomUUID();
    const job = await queues.add('system.ping', { nonce, sentAt: Date.now() });
    const result = await job.waitUntilFinished(events, 10_000);
    await events.close();
    expect(result).toMatchObject({ nonce, worker: expect.stringContaining(String(process.pid)) });
  });

  it('schedules the credit sweeper once and releases the holds of lost renders (issue: Credits, sweeper)', async () => {
    const schedulers = await queues.queue('system').getJobSchedulers();
    expect(schedulers.map((j) => j.key)).toContain('credits.sweep');
    const orm = await openAppDatabase(ctx.config.database, { migrate: false });
    const credits = new CreditsService(orm);
    const workspaceId = newId('workspace');
    await credits.hold({ workspaceId, plan: 'pro', kind: 'video', amount: 3, renderId: 'rnd_lost_w', mode: 'live' });
    await forWorkspace(orm, workspaceId).nativeUpdate(LedgerEntry, { renderId: 'rnd_lost_w' }, { createdAt: new Date(Date.now() - 7 * 3600_000) });
    const events = await queueEvents(queues, 'system');
    const job = await queues.add('credits.sweep', { maxAgeSec: 3600 });
    const result = await job.waitUntilFinished(events, 10_000);
    await events.close();
    expect(result.released).toContain('rnd_lost_w');
    expect((await credits.balance(workspaceId, 'pro')).credits.video).toMatchObject({ held: 0, available: 500 });
    await orm.close(true);
  });

  it('refuses malformed payloads when enqueued', async () => {
    await expect(queues.add('system.ping', { nonce: '', sentAt: 1 })).rejects.toThrow(/nonce/);
  });

  it('refuses to start when a job has no processor, two, or one on the wrong queue', () => {
    expect(() => checkHandlers([])).toThrow(/No processor handles system.ping, credits.sweep, renders.purge, assets.sweep, transcriptions.sweep, webhooks.dispatch, webhooks.deliver-event, webhooks.deliver, still.render, video.render, video.chunk, video.combine, asset.process, transcription.run, workflow.row, workflow.run, campaign.send$/);
    const ping = { queue: 'system' as const, handles: () => ['system.ping' as const] };
    expect(() => checkHandlers([ping, ping])).toThrow(/Two processors handle system.ping/);
    expect(() => checkHandlers([{ queue: 'stills', handles: () => ['system.ping'] }])).toThrow(/stills processor handles system.ping, a job of the system queue/);
  });
});
