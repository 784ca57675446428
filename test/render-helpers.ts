import { LedgerEntry } from '#libs/credits';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';

/** Polls `fn` every 100 ms until it gives a value; throws naming `what` after `ms`. */
export async function until<T>(fn: () => Promise<T | undefined | false>, what: string, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
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
