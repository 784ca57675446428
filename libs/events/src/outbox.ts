import type { EntityManager } from '@mikro-orm/core';
import { newId } from '#libs/core';
import { OutboxEvent } from './outbox-event.entity.js';

/** Event names of contract §6. */
export const EVENT_TYPES = [
  'render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled',
  'template.published', 'credits.low', 'credits.exhausted', 'subscription.updated', 'payment.captured',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Writes an event within the caller's transaction (`em` must be the transaction's manager). */
export function recordEvent(em: EntityManager, workspaceId: string, type: EventType, data: Record<string, unknown>, opts: { target?: string | null } = {}): OutboxEvent {
  return em.create(OutboxEvent, { id: newId('event'), workspaceId, type, data, target: opts.target ?? null, dispatchedAt: null });
}
