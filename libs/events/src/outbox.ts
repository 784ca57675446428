import type { EntityManager } from '@mikro-orm/core';
import { EVENT_TYPES, newId, type EventType } from '#libs/core';
import { queries, type Tables } from '#libs/db';
import { OutboxEvent } from './outbox-event.entity.js';

const outbox = queries<Tables<typeof OutboxEvent>>();

// The event names live in libs/core (events.ts), free of the ORM, so libs/webhooks shares the one list.
export { EVENT_TYPES, type EventType };

function eventRow(workspaceId: string, type: EventType, data: Record<string, unknown>, opts: { target?: string | null }) {
  return { id: newId('event'), workspaceId, type, data, target: opts.target ?? null, dispatchedAt: null };
}

/**
 * The one way an event enters the outbox: a statement of the caller's transaction (`em` of
 * `em.transactional`), so the event commits or rolls back with the change it announces.
 */
export async function writeEvent(em: EntityManager, workspaceId: string, type: EventType, data: Record<string, unknown>, opts: { target?: string | null } = {}): Promise<string> {
  const row = { ...eventRow(workspaceId, type, data, opts), createdAt: new Date() };
  await outbox.insert(em, OutboxEvent, row);
  return row.id;
}
