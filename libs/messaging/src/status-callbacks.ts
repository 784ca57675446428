import { createHmac } from 'node:crypto';
import { ApiError, safeEqual, type AppConfig } from '#libs/core';
import type { IntegrationsService } from '#libs/integrations';
import type { CampaignsService } from './campaigns.js';
import type { MessagingChannels } from './channels.js';

/** One status of one message as a provider reports it. */
export interface ProviderStatus {
  providerMessageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  error?: string | null;
  reference?: string | null;
  at?: Date;
}

/**
 * Where a provider posts the statuses of a workspace's messages (the API's
 * `/v1/integrations/messaging-provider/status/<provider>/<workspaceId>` under PUBLIC_URL and the prefix):
 * the `statusCallback` of Twilio sends.
 */
export function statusCallbackUrl(config: Pick<AppConfig, 'publicUrl' | 'prefix'>): (workspaceId: string, provider: 'twilio') => string {
  return (workspaceId, provider) => `${config.publicUrl}${config.prefix ? `/${config.prefix}` : ''}/v1/integrations/messaging-provider/status/${provider}/${workspaceId}`;
}

/** WhatsApp (Meta) webhooks: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`. */
export function whatsAppSignature(appSecret: string, raw: Buffer): string {
  return `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}`;
}

/** Twilio: `X-Twilio-Signature`: base64 HMAC-SHA1 with the auth token of the full URL followed by each POST parameter's name and value, sorted by name. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params).sort().reduce((acc, k) => acc + k + params[k], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

const WHATSAPP_STATUSES: Record<string, ProviderStatus['status']> = { sent: 'sent', delivered: 'delivered', read: 'read', failed: 'failed' };
const TWILIO_STATUSES: Record<string, ProviderStatus['status']> = { sent: 'sent', delivered: 'delivered', read: 'read', failed: 'failed', undelivered: 'failed' };

interface WhatsAppStatus {
  id?: unknown;
  status?: unknown;
  timestamp?: unknown;
  biz_opaque_callback_data?: unknown;
  errors?: { code?: unknown; title?: unknown; message?: unknown; error_data?: { details?: unknown } }[];
}

/** The statuses of a WhatsApp Cloud API webhook (`entry[].changes[].value.statuses[]`); messages and other fields are ignored. */
export function whatsAppStatuses(body: unknown): ProviderStatus[] {
  const out: ProviderStatus[] = [];
  const entries = (body as { entry?: unknown } | null)?.entry;
  if (!Array.isArray(entries)) return out;
  for (const entry of entries as { changes?: unknown }[]) {
    if (!Array.isArray(entry?.changes)) continue;
    for (const change of entry.changes as { value?: { statuses?: unknown } }[]) {
      const statuses = change?.value?.statuses;
      if (!Array.isArray(statuses)) continue;
      for (const s of statuses as WhatsAppStatus[]) {
        const status = typeof s.status === 'string' ? WHATSAPP_STATUSES[s.status] : undefined;
        if (typeof s.id !== 'string' || !status) continue;
        const e = s.errors?.[0];
        const at = typeof s.timestamp === 'string' && /^\d+$/.test(s.timestamp) ? new Date(Number(s.timestamp) * 1000) : undefined;
        out.push({
          providerMessageId: s.id, status, reference: typeof s.biz_opaque_callback_data === 'string' ? s.biz_opaque_callback_data : null,
          error: e ? [e.title ?? e.message, e.error_data?.details].filter((x) => typeof x === 'string' && x).join(': ') + (e.code !== undefined ? ` (code ${String(e.code)})` : '') : null,
          ...(at ? { at } : {}),
        });
      }
    }
  }
  return out;
}

/** A Twilio status callback's form: `MessageSid`, `MessageStatus`, `ErrorCode`. Null for statuses that are not ours to record (queued, sending…). */
export function twilioStatus(form: Record<string, string>): ProviderStatus | null {
  const status = TWILIO_STATUSES[form.MessageStatus ?? ''];
  const sid = form.MessageSid ?? form.SmsSid;
  if (!status || !sid) return null;
  return { providerMessageId: sid, status, error: status === 'failed' ? `Twilio reported ${form.MessageStatus}${form.ErrorCode ? ` (code ${form.ErrorCode})` : ''}` : null };
}

/**
 * The providers' delivery status callbacks (docs/messaging.md "Status callbacks"): each checked
 * against the workspace's connected account (WhatsApp's app secret and verify token, Twilio's auth
 * token) on the bytes received, before anything is read or recorded; then folded into the message
 * and campaign records (CampaignsService.foldStatus).
 */
export class StatusCallbacks {
  constructor(private readonly deps: { integrations: IntegrationsService; campaigns: CampaignsService }) {}

  private async channels(workspaceId: string): Promise<MessagingChannels> {
    const connection = await this.deps.integrations.find(workspaceId, 'messaging-provider').catch(() => null);
    if (!connection) return {};
    return (this.deps.integrations.credentialsOf(connection).channels ?? {}) as MessagingChannels;
  }

  /** Meta's subscription check: answers the challenge when the verify token is the connected account's. */
  async verifyWhatsApp(workspaceId: string, q: { mode?: string; token?: string; challenge?: string }): Promise<string> {
    const account = (await this.channels(workspaceId)).primary_chat;
    if (q.mode !== 'subscribe' || !q.challenge || !account?.verifyToken || !q.token || !safeEqual(q.token, account.verifyToken)) {
      throw new ApiError('INVALID_SIGNATURE', 'hub.verify_token is not this workspace\'s verify token (integration:connect --channel primary_chat --verify-token), or hub.mode is not subscribe');
    }
    return q.challenge;
  }

  async whatsApp(workspaceId: string, raw: Buffer | undefined, signature: string | undefined, body: unknown): Promise<{ received: number; recorded: number }> {
    const account = (await this.channels(workspaceId)).primary_chat;
    if (!account?.appSecret) throw new ApiError('INVALID_SIGNATURE', 'This workspace\'s primary_chat account has no app secret to check X-Hub-Signature-256 with (integration:connect --channel primary_chat --app-secret)');
    if (!raw || !signature || !safeEqual(signature, whatsAppSignature(account.appSecret, raw))) {
      throw new ApiError('INVALID_SIGNATURE', 'X-Hub-Signature-256 does not match the body signed with the app secret; nothing was recorded');
    }
    return this.fold(workspaceId, whatsAppStatuses(body));
  }

  async twilio(workspaceId: string, url: string, signature: string | undefined, form: Record<string, string>): Promise<{ received: number; recorded: number }> {
    const account = (await this.channels(workspaceId)).sms;
    if (!account) throw new ApiError('INVALID_SIGNATURE', 'This workspace has no sms (Twilio) account whose auth token could check X-Twilio-Signature');
    if (!signature || !safeEqual(signature, twilioSignature(account.authToken, url, form))) {
      throw new ApiError('INVALID_SIGNATURE', 'X-Twilio-Signature does not match the URL and parameters signed with the auth token; nothing was recorded');
    }
    const status = twilioStatus(form);
    return this.fold(workspaceId, status ? [status] : []);
  }

  private async fold(workspaceId: string, statuses: ProviderStatus[]): Promise<{ received: number; recorded: number }> {
    let recorded = 0;
    for (const s of statuses) if (await this.deps.campaigns.foldStatus(workspaceId, s)) recorded++;
    return { received: statuses.length, recorded };
  }
}
