import { spawn, type ChildProcess } from 'node:child_process';
import { Asset, seedStock, STOCK_ITEMS, stockAssetId } from '#libs/assets';
import { LedgerEntry } from '#libs/credits';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import type { JobQueues } from '#libs/queue';
import type { StorageDriver } from '#libs/storage';
import type { TestApi } from './harness.js';

/**
 * Polls `fn` every `every` ms until it gives a value (that value); throws naming `what` after `ms`
 * (a function: its words are read then, e.g. a worker's output).
 */
export async function until<T>(fn: () => T | undefined | false | Promise<T | undefined | false>, what: string | (() => string), ms = 120_000, every = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The reasons of a render's ledger entries, in order (hold, capture | release). */
export async function ledgerOf(orm: Orm, renderId: string): Promise<string[]> {
  return (await allWorkspaces(orm).find(LedgerEntry, { renderId }, { orderBy: { id: 'asc' } })).map((e) => e.reason);
}

/** The types of a render's events in the outbox, in order. */
export async function eventsOf(orm: Orm, workspaceId: string, renderId: string): Promise<string[]> {
  return (await forWorkspace(orm, workspaceId).find(OutboxEvent, {}, { orderBy: { id: 'asc' } })).filter((e) => e.data.id === renderId).map((e) => e.type);
}

/**
 * The stock items of `slugs`, seeded as the API seeds the catalog at start (the tests turn
 * ASSET_STOCK off) and processed by a running worker: answers once every one is ready. Seeding a
 * part of the catalog removes the other stock items, so a test file seeds once, all it needs.
 */
export async function seedStockItems(orm: Orm, storage: StorageDriver, queues: JobQueues, slugs: readonly string[]): Promise<void> {
  const items = slugs.map((slug) => {
    const item = STOCK_ITEMS.find((i) => i.slug === slug);
    if (!item) throw new Error(`${slug} is not in the stock catalog`);
    return item;
  });
  await seedStock(orm, storage, async (assetId, run) => {
    await queues.add('asset.process', { assetId }, { jobId: run });
  }, items);
  const ids = items.map((i) => stockAssetId(i.slug));
  await until(async () => {
    const rows = await allWorkspaces(orm).fork().find(Asset, { id: { $in: ids } });
    const failed = rows.find((r) => r.status === 'failed');
    if (failed) throw new Error(`Stock item ${failed.id} failed processing: ${failed.error?.message}`);
    return rows.length === ids.length && rows.every((r) => r.status === 'ready');
  }, `stock items ${ids.join(', ')} to be ready`, 90_000);
}

/**
 * Worker processes of the built worker (dist/), each in its own process group with the API's
 * configuration: `spawn` one, `kill` one with SIGKILL (it and its Chromium) and wait for it to exit,
 * `killAll` whatever is still running (a file's afterAll).
 */
export function workerProcesses(env: () => Record<string, string | undefined>) {
  const children = new Set<ChildProcess>();
  return {
    spawn(): ChildProcess {
      const child = spawn(process.execPath, ['dist/apps/worker/src/main.js'], { env: { ...process.env, ...env() }, detached: true, stdio: 'ignore' });
      children.add(child);
      child.on('exit', () => children.delete(child));
      return child;
    },
    async kill(child: ChildProcess): Promise<void> {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
    },
    killAll(): void {
      for (const child of children) process.kill(-child.pid!, 'SIGKILL');
    },
  };
}

/**
 * A published image template of `liveKey`'s workspace: "Card", 160×90 png, one required text field NAME
 * ("Hi {{ NAME }}"); the workflows' and the test-mode files' sheet rows fill it.
 */
export async function publishedCardTemplate(api: TestApi, liveKey: string): Promise<string> {
  const edit = {
    timeline: { background: '#203040', tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi {{ NAME }}' }, start: 0, length: 1 }] }] },
    output: { format: 'png', size: { width: 160, height: 90 } },
  };
  const fields = [{ key: 'NAME', label: 'Name', type: 'text', required: true, config: { maxLength: 40 } }];
  const res = await api.app.inject({ method: 'POST', url: '/api/v1/templates/import', headers: { 'x-api-key': liveKey }, payload: { name: 'Card', categoryId: 'social-media', edit, fields } });
  expect(res.statusCode).toBe(201);
  const id = res.json().data.id as string;
  expect((await api.cli('template:publish', '--id', id)).code).toBe(0);
  return id;
}
