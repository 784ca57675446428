import type { EntityManager } from '@mikro-orm/core';
import { newId, type SqlTx } from '#libs/core';
import { OutboxEvent } from './outbox-event.entity.js';

/** Event names of contract §6. */
export const EVENT_TYPES = [
  'render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled',
  'template.published', 'credits.low', 'credits.exhausted', 'subscription.updated', 'payment.captured',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

function eventRow(workspaceId: string, type: EventType, data: Record<string, unknown>, opts: { target?: string | null }) {
  return { id: newId('event'), workspaceId, type, data, target: opts.target ?? null, dispatchedAt: null };
}

/** Writes an event within the caller's transaction (`em` must be the transaction's manager), at its next flush. */
export function recordEvent(em: EntityManager, workspaceId: string, type: EventType, data: Record<string, unknown>, opts: { target?: string | null } = {}): OutboxEvent {
  return em.create(OutboxEvent, eventRow(workspaceId, type, data, opts));
}

/** Writes an event now, by a statement of the caller's transaction (the renders' hot paths). */
export async function insertEvent(tx: SqlTx, workspaceId: string, type: EventType, data: Record<string, unknown>, opts: { target?: string | null } = {}): Promise<string> {
  const row = { ...eventRow(workspaceId, type, data, opts), createdAt: new Date() };
  await tx.insert(OutboxEvent, row);
  return row.id;
}
