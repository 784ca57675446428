import { encodeForm, encodeMultipart } from './body.js';
import { isReservedHeader } from './headers.js';
import { deliverySignatures } from './sign.js';
import { renderHeaderValue, renderPayload, renderUrl, TemplateRefused, type TemplateVars } from './template.js';
import type { DeliveryContext, EndpointConfig, EventEnvelope, HttpMethod } from './types.js';

export const USER_AGENT = 'service-webhooks/1.0';

/** One attempt's request, byte for byte; `headers` is what goes on the wire except Host and Content-Length. */
export interface DeliveryRequest {
  url: string;
  method: HttpMethod;
  /** Names as written: configured headers as the user spelled them, then the managed ones (`X-Service-Event`, …). */
  headers: Record<string, string>;
  body: Buffer | null;
  /** Also in `headers` as `Content-Type`; null when there is no body. */
  contentType: string | null;
}

/** The envelope as sent: one stored before events carried their mode has no `livemode`, and every such event was live. */
function withLivemode(event: EventEnvelope): EventEnvelope {
  return typeof event.livemode === 'boolean' ? event : { ...event, livemode: true };
}

export function deliveryVars(event: EventEnvelope, ctx: DeliveryContext): TemplateVars {
  return { event: withLivemode(event), timestamp: ctx.timestamp, orgId: ctx.orgId, endpointId: ctx.endpointId };
}

/** The default payload: the event envelope (§6 "Default payload"; `livemode` of issue 28). */
function defaultPayload(event: EventEnvelope): Record<string, unknown> {
  return { id: event.id, type: event.type, created: event.created, livemode: event.livemode, data: event.data };
}

function encodeBody(endpoint: EndpointConfig, payload: Record<string, unknown>, seed: string): { body: Buffer | null; contentType: string | null } {
  if (endpoint.method === 'GET') return { body: null, contentType: null };
  switch (endpoint.bodyFormat) {
    case 'json':
      return { body: Buffer.from(JSON.stringify(payload), 'utf8'), contentType: 'application/json' };
    case 'form':
      return { body: encodeForm(payload), contentType: 'application/x-www-form-urlencoded' };
    case 'multipart': {
      const { body, boundary } = encodeMultipart(payload, seed);
      return { body, contentType: `multipart/form-data; boundary=${boundary}` };
    }
    case 'none':
      return { body: null, contentType: null };
  }
}

/**
 * Builds one attempt of a delivery (§6): URL and header values templated, the payload (envelope or
 * rendered template) encoded per `bodyFormat`, and the managed headers (`X-Service-Event`,
 * `X-Service-Livemode`, …) added after the configured ones, which can never replace them; signed by
 * `X-Service-Signature` (§6; a GET's covers its path and query) and `X-Service-Signature-V2` (method,
 * path and query, body). Throws `TemplateRefused` when a stored template cannot be sent
 * (a header value resolving to a line break, a template that is not a JSON object): retrying would
 * build the same request, so the caller ends the delivery as failed.
 */
export function buildDelivery(endpoint: EndpointConfig, stored: EventEnvelope, ctx: DeliveryContext): DeliveryRequest {
  const vars = deliveryVars(stored, ctx);
  const event = vars.event;
  const hasBody = endpoint.method !== 'GET' && endpoint.bodyFormat !== 'none';
  let payload: Record<string, unknown> = {};
  if (hasBody && endpoint.payloadMode === 'custom') {
    if (!endpoint.payloadTemplate) throw new TemplateRefused('Custom payload mode without a payload template');
    payload = renderPayload(endpoint.payloadTemplate, vars);
  } else if (hasBody) payload = defaultPayload(event);
  const { body, contentType } = encodeBody(endpoint, payload, `${event.id}:${ctx.attempt}`);

  const headers: Record<string, string> = {};
  const taken = new Set<string>();
  for (const { key, value } of endpoint.headers) {
    const lower = key.toLowerCase();
    if (isReservedHeader(key) || taken.has(lower)) continue;
    taken.add(lower);
    headers[key] = renderHeaderValue(value, vars);
  }
  if (contentType) headers['Content-Type'] = contentType;
  headers['User-Agent'] = USER_AGENT;
  headers['X-Service-Event'] = event.type;
  headers['X-Service-Livemode'] = String(event.livemode);
  headers['X-Service-Timestamp'] = String(ctx.timestamp);
  headers['X-Service-Attempt'] = String(ctx.attempt);
  const url = renderUrl(endpoint.url, vars);
  const signed = deliverySignatures(endpoint.secret, ctx.timestamp, endpoint.method, url, body);
  headers['X-Service-Signature'] = signed.v1;
  headers['X-Service-Signature-V2'] = signed.v2;
  if (ctx.test) headers['X-Service-Test'] = 'true';

  return { url, method: endpoint.method, headers, body, contentType };
}
