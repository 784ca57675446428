import { ApiError, type CursorCodec, cursorPage, ok, paged, pagination, parseListQuery, type KeyMode, type ListSpec } from '#libs/core';
import type { JobQueues } from '#libs/queue';
import { DEFAULT_EVENTS, WEBHOOK_EVENTS, type EndpointInput, type WebhookEndpoints } from '#libs/webhooks';

export const WEBHOOK_LIST: ListSpec = {
  sort: ['createdAt', 'description', 'url', 'lastSuccessAt', 'lastFailureAt'],
  defaultSort: 'createdAt',
  limit: { default: 50, max: 100 },
  sets: { events: WEBHOOK_EVENTS },
  booleans: ['isActive'],
  search: { maxLength: 128 },
};

export const DELIVERY_LIST: ListSpec = { cursor: true, sort: ['id'], defaultSort: 'id', limit: { default: 20, max: 100 } };

/**
 * The webhook operations shared by the key routes (/v1/webhooks) and the session routes
 * (/organization/webhooks): the two controllers differ only in how the caller authenticates.
 * `mode` is the caller's (issue 28): a test caller changes only test endpoints and deliveries.
 */
export class WebhookHandlers {
  constructor(
    private readonly webhooks: WebhookEndpoints,
    private readonly queues: JobQueues,
    private readonly cursors: CursorCodec,
  ) {}

  async list(workspaceId: string, raw: Record<string, unknown>) {
    const q = parseListQuery(WEBHOOK_LIST, raw);
    const { rows, total } = await this.webhooks.list(workspaceId, q);
    return paged(rows.map((r) => this.webhooks.view(r)), pagination(q, total));
  }

  async get(workspaceId: string, id: string) {
    return ok(this.webhooks.view(await this.webhooks.get(workspaceId, id)));
  }

  async create(workspaceId: string, mode: KeyMode, body: EndpointInput, keyRoute: boolean) {
    const { endpoint, secret } = await this.webhooks.create(workspaceId, mode, body, keyRoute ? DEFAULT_EVENTS : undefined);
    return ok({ ...this.webhooks.view(endpoint), secret }, 'Webhook endpoint created. Store the secret now: it is not shown again');
  }

  async update(workspaceId: string, mode: KeyMode, id: string, body: EndpointInput) {
    return ok(this.webhooks.view(await this.webhooks.update(workspaceId, mode, id, body)), 'Webhook endpoint updated');
  }

  async remove(workspaceId: string, mode: KeyMode, id: string) {
    await this.webhooks.remove(workspaceId, mode, id);
    return ok(null, 'Webhook endpoint deleted; deliveries stop');
  }

  async test(workspaceId: string, mode: KeyMode, id: string) {
    const result = await this.webhooks.test(workspaceId, mode, id);
    return ok(
      { ok: result.ok, status: result.status },
      result.ok ? `The endpoint answered ${result.status}` : `The test delivery failed: ${result.error ?? `HTTP ${result.status}`}`,
    );
  }

  async deliveries(workspaceId: string, id: string, raw: Record<string, unknown>) {
    const q = parseListQuery(DELIVERY_LIST, raw);
    const scope = JSON.stringify(['webhook.deliveries', workspaceId, id, q.limit]);
    const beforeId = q.pageToken ? this.cursors.decode<{ id: string }>(scope, q.pageToken).id : undefined;
    const page = await this.webhooks.deliveries(workspaceId, id, { limit: q.limit, beforeId });
    const last = page.rows.at(-1);
    return cursorPage(page.rows, page.more && last ? this.cursors.encode(scope, { id: last.id }) : null);
  }

  async redeliver(workspaceId: string, mode: KeyMode, id: string, deliveryId: string) {
    const delivery = await this.webhooks.redeliver(workspaceId, mode, id, deliveryId);
    if (delivery.state !== 'pending') throw new ApiError('INTERNAL_ERROR', 'The redelivery was not created');
    await this.queues.add('webhooks.deliver', { deliveryId: delivery.id }, { jobId: delivery.id });
    return ok({ id: delivery.id, eventId: delivery.eventId, state: delivery.state }, 'Redelivery queued');
  }
}
