import type { EntityManager } from '@mikro-orm/core';
import { EVENT_TYPES, newId, type EventType, type KeyMode } from '#libs/core';
import { queries, type Tables } from '#libs/db';
import { OutboxEvent } from './outbox-event.entity.js';

const outbox = queries<Tables<typeof OutboxEvent>>();

// The event names live in libs/core (events.ts), free of the ORM, so libs/webhooks shares the one list.
export { EVENT_TYPES, type EventType };

/** How an event is written: the mode of the record it is about, and a render's callback URL (settle events). */
export interface EventOptions {
  /** The record's mode (`livemode` of the envelope): a render's, an asset's, a run's; workspace events (credits, templates) are live. */
  mode: KeyMode;
  target?: string | null;
}

function eventRow(workspaceId: string, type: EventType, data: Record<string, unknown>, opts: EventOptions) {
  return { id: newId('event'), workspaceId, type, data, mode: opts.mode, target: opts.target ?? null, dispatchedAt: null };
}

/**
 * The one way an event enters the outbox: a statement of the caller's transaction (`em` of
 * `em.transactional`), so the event commits or rolls back with the change it announces.
 */
export async function writeEvent(em: EntityManager, workspaceId: string, type: EventType, data: Record<string, unknown>, opts: EventOptions): Promise<string> {
  const row = { ...eventRow(workspaceId, type, data, opts), createdAt: new Date() };
  await outbox.insert(em, OutboxEvent, row);
  return row.id;
}
