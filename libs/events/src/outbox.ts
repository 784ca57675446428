import type { EntityManager } from '@mikro-orm/core';
import { newId } from '#libs/core';
import { queries, type Tables } from '#libs/db';
import { OutboxEvent } from './outbox-event.entity.js';

const outbox = queries<Tables<typeof OutboxEvent>>();

/** Event names of contract §6. */
export const EVENT_TYPES = [
  'render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled',
  'template.published', 'asset.ready', 'asset.failed', 'credits.low', 'credits.exhausted', 'subscription.updated', 'payment.captured',
  'workflow.run.started', 'workflow.run.completed',
  // House event (docs/messaging.md "Campaigns"): a broadcast has no recipient left to send.
  'campaign.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
