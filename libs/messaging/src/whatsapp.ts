import { parseJson, ProviderCall, stringAt, type ErrorReader } from '#libs/integrations';
import type { WhatsAppAccount } from './channels.js';
import { ChannelCheckFailed, MessageRejected, type AdapterOptions, type MediaPart, type MessageSender, type OutgoingMessage, type ProviderTemplate } from './sender.js';

/**
 * primary_chat: WhatsApp Business Cloud API (Graph API, bearer token).
 * `POST /{version}/{phone-number-id}/messages` with `messaging_product: whatsapp` (template, text,
 * image/video/document/audio by link, interactive button/list/cta_url), answering
 * `{messages: [{id: "wamid…"}]}`; `GET /{version}/{waba-id}/message_templates` paged by `after` cursors.
 * Errors: `{error: {message, type, code, error_data: {details}}}`; code 190 (token expired or
 * revoked) or HTTP 401/403 → the connection's grant lapsed; 4 / 80007 / 130429 / 131048 (rate limits) →
 * unavailable; other 4xx (131026 undeliverable, 131009/100 invalid parameter, 132001 template missing)
 * → MessageRejected in WhatsApp's words.
 */
export const WHATSAPP_BASE_URL = 'https://graph.facebook.com';
export const GRAPH_VERSION = 'v21.0';
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131048, 131056]);
/** Template pages read at most (100 templates a page). */
const MAX_TEMPLATE_PAGES = 20;

interface GraphError { message?: string; code?: number; error_data?: { details?: string } }

function graphError(body: unknown): GraphError | undefined {
  const error = (body as { error?: unknown } | undefined)?.error;
  return error && typeof error === 'object' ? (error as GraphError) : undefined;
}

const readError: ErrorReader = (status, body) => {
  const error = graphError(body);
  if (!error) return {};
  const message = [error.message, error.error_data?.details].filter(Boolean).join(': ');
  if (error.code === 190) return { message, kind: 'auth' };
  if (error.code !== undefined && RATE_LIMIT_CODES.has(error.code)) return { message, kind: 'unavailable' };
  return { message, ...(status === 401 || status === 403 ? { kind: 'auth' as const } : {}) };
};

interface GraphTemplate {
  id?: string;
  name?: string;
  language?: string;
  status?: string;
  category?: string;
  components?: { type?: string; format?: string; text?: string }[];
}

/** `{{1}}`, `{{2}}`…: the distinct positional placeholders of a body. */
export function bodyVariables(text: string): string[] {
  return [...new Set([...text.matchAll(/\{\{\s*(\d+)\s*\}\}/g)].map((m) => m[1]!))].sort((a, b) => Number(a) - Number(b));
}

export class WhatsAppAdapter implements MessageSender {
  constructor(private readonly account: WhatsAppAccount, private readonly options: AdapterOptions) {}

  private call(signal: AbortSignal, subject = 'the message'): ProviderCall {
    return new ProviderCall('primary_chat (WhatsApp)', this.account.baseUrl ?? WHATSAPP_BASE_URL, {
      ...this.options, credentials: { accessToken: this.account.accessToken }, timeoutMs: this.options.timeoutMs ?? 15_000,
    }, signal, readError, subject);
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.account.accessToken}` };
  }

  async templates(signal: AbortSignal): Promise<ProviderTemplate[]> {
    const call = this.call(signal);
    const out: ProviderTemplate[] = [];
    let after: string | undefined;
    for (let page = 0; page < MAX_TEMPLATE_PAGES; page++) {
      const query = new URLSearchParams({ limit: '100', fields: 'id,name,language,status,category,components' });
      if (after) query.set('after', after);
      const answer = await call.send({ path: `/${GRAPH_VERSION}/${encodeURIComponent(this.account.wabaId)}/message_templates`, query, headers: this.headers() });
      if (answer.status < 200 || answer.status >= 300) throw call.refusal(answer);
      const body = parseJson(answer.body) as { data?: GraphTemplate[]; paging?: { cursors?: { after?: string }; next?: string } } | undefined;
      if (!body || typeof body !== 'object' || !Array.isArray(body.data)) throw call.failure('rejected', `answered HTTP ${answer.status} with something that is not a template list`, answer.status);
      for (const t of body.data) {
        if (!t.name) continue;
        const header = t.components?.find((c) => c.type === 'HEADER');
        const variables = bodyVariables(t.components?.find((c) => c.type === 'BODY')?.text ?? '');
        out.push({
          id: t.id ?? `${t.name}:${t.language ?? ''}`, accountId: this.account.phoneNumberId, name: t.name, category: t.category ?? 'UTILITY',
          language: t.language ?? '', status: t.status ?? 'PENDING', headerFormat: header?.format ?? null,
          bodyVariableCount: variables.length, variables,
        });
      }
      after = body.paging?.next ? body.paging.cursors?.after : undefined;
      if (!after) break;
    }
    return out;
  }

  /**
   * The connect form's check (issue 29): the phone number (`GET /{phone-number-id}`, its display number
   * and verified name) and the business account (`GET /{waba-id}`), each refusal on the field it is about.
   */
  async check(signal: AbortSignal): Promise<{ displayNumber: string | null; verifiedName: string | null }> {
    const call = this.call(signal, 'the request');
    const read = async (id: string, fields: string, field: 'phoneNumberId' | 'wabaId'): Promise<unknown> => {
      const answer = await call.send({ path: `/${GRAPH_VERSION}/${encodeURIComponent(id)}`, query: new URLSearchParams({ fields }), headers: this.headers() });
      if (answer.status >= 200 && answer.status < 300) return parseJson(answer.body);
      const refusal = call.refusal(answer);
      throw refusal.kind === 'rejected' ? new ChannelCheckFailed(field, refusal.message) : refusal;
    };
    const phone = await read(this.account.phoneNumberId, 'display_phone_number,verified_name', 'phoneNumberId');
    await read(this.account.wabaId, 'id,name', 'wabaId');
    return { displayNumber: stringAt(phone, 'display_phone_number') ?? null, verifiedName: stringAt(phone, 'verified_name') ?? null };
  }

  async send(message: OutgoingMessage, signal: AbortSignal): Promise<{ providerMessageId: string }> {
    const call = this.call(signal);
    const answer = await call.send({
      method: 'POST',
      path: `/${GRAPH_VERSION}/${encodeURIComponent(this.account.phoneNumberId)}/messages`,
      headers: { ...this.headers(), 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(whatsAppPayload(message))),
    });
    if (answer.status < 200 || answer.status >= 300) {
      const refusal = call.refusal(answer);
      if (refusal.kind === 'rejected') {
        const code = graphError(parseJson(answer.body))?.code;
        throw new MessageRejected(refusal.message, code === undefined ? null : String(code));
      }
      throw refusal;
    }
    const id = stringAt((parseJson(answer.body) as { messages?: unknown[] } | undefined)?.messages?.[0], 'id');
    if (!id) throw call.failure('rejected', `answered HTTP ${answer.status} without a message id`, answer.status);
    return { providerMessageId: id };
  }
}

function mediaObject(part: MediaPart, withCaption: boolean): Record<string, string> {
  return {
    link: part.url,
    ...(withCaption && part.caption ? { caption: part.caption } : {}),
    ...(part.type === 'document' && part.filename ? { filename: part.filename } : {}),
  };
}

/** Our checked message as the Cloud API's body. */
export function whatsAppPayload(m: OutgoingMessage): Record<string, unknown> {
  const base = { messaging_product: 'whatsapp', recipient_type: 'individual', to: m.to, type: m.type, ...(m.reference ? { biz_opaque_callback_data: m.reference } : {}) };
  if (m.type === 'template' && m.template) {
    const components: Record<string, unknown>[] = [];
    const header = m.template.header;
    if (header) components.push({ type: 'header', parameters: [{ type: header.type, [header.type]: mediaObject(header, false) }] });
    if (m.template.variables.length) components.push({ type: 'body', parameters: m.template.variables.map((text) => ({ type: 'text', text })) });
    return { ...base, template: { name: m.template.name, language: { code: m.template.language }, ...(components.length ? { components } : {}) } };
  }
  if (m.type === 'text') return { ...base, text: { body: m.text ?? '', preview_url: false } };
  if (m.type === 'interactive' && m.interactive) {
    const i = m.interactive;
    const action = i.type === 'button'
      ? { buttons: (i.action.buttons ?? []).map((b) => ({ type: 'reply', reply: { id: b.id, title: b.title } })) }
      : i.type === 'list'
        ? { button: i.action.button, sections: i.action.sections }
        : { name: 'cta_url', parameters: { display_text: i.action.displayText, url: i.action.url } };
    return {
      ...base,
      interactive: { type: i.type, body: i.body, ...(i.header ? { header: i.header } : {}), ...(i.footer ? { footer: i.footer } : {}), action },
    };
  }
  const media = m.media!;
  return { ...base, type: media.type, [media.type]: mediaObject(media, media.type !== 'audio') };
}
