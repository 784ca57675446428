import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode } from '#libs/core';
import { workspaceFilter } from '#libs/db';

/**
 * The events outbox: each module writes its events here in the same transaction as the change
 * that caused them; the webhook dispatcher delivers them and stamps `dispatchedAt`.
 */
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_event',
  filters: workspaceFilter(),
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32).index(),
    type: p.string().length(40),
    data: p.json<Record<string, unknown>>(),
    /** The mode of the record the event is about (a render's, an asset's); workspace events are live (decisions.md "Test mode (issue 28): events"). */
    mode: p.string().length(4).$type<KeyMode>().default('live'),
    /** A render's callback URL for its settle event (decisions.md "Webhooks"); null for the rest. */
    target: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    dispatchedAt: p.datetime().nullable().index(),
  },
});
export type OutboxEvent = InferEntity<typeof OutboxEvent>;
