/** Event names of contract §6, in the order the contract lists them (the outbox's and the webhooks' one list). */
export const EVENT_TYPES = [
  'render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled',
  'template.published', 'asset.ready', 'asset.failed', 'credits.low', 'credits.exhausted', 'subscription.updated', 'payment.captured',
  'workflow.run.started', 'workflow.run.completed',
  // House event (docs/messaging.md "Campaigns"): a broadcast has no recipient left to send.
  'campaign.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
