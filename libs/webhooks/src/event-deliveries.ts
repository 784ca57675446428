import type { EntityManager } from '@mikro-orm/core';
import { WebhookDelivery, type DeliveryState } from './entities.js';

/** One webhook delivery of an event (its summary; the endpoint's delivery log has the attempts). */
export interface EventDelivery {
  id: string;
  endpointId: string;
  /** A redelivery asked for by the workspace (sequence > 0). */
  redelivery: boolean;
  state: DeliveryState;
  attempts: number;
  /** The HTTP status of the last attempt (null: none answered yet, or no response). */
  lastStatus: number | null;
  createdAt: string;
  completedAt: string | null;
}

/** The deliveries of these events (not the endpoint tests'), oldest first, by event id; `em` is the workspace's. */
export async function eventDeliveries(em: EntityManager, eventIds: readonly string[]): Promise<Map<string, EventDelivery[]>> {
  const byEvent = new Map<string, EventDelivery[]>(eventIds.map((id) => [id, []]));
  if (!eventIds.length) return byEvent;
  const rows = await em.find(WebhookDelivery, { eventId: { $in: [...eventIds] }, test: false }, {
    orderBy: { id: 'asc' }, fields: ['id', 'eventId', 'endpointId', 'sequence', 'state', 'attempts', 'lastStatus', 'createdAt', 'completedAt'],
  });
  for (const d of rows) {
    byEvent.get(d.eventId)?.push({
      id: d.id, endpointId: d.endpointId, redelivery: d.sequence > 0, state: d.state, attempts: d.attempts, lastStatus: d.lastStatus ?? null,
      createdAt: d.createdAt.toISOString(), completedAt: d.completedAt?.toISOString() ?? null,
    });
  }
  return byEvent;
}
