import type { MikroORM } from '@mikro-orm/core';
import { newId, type AppConfig } from '#libs/core';
import { DevMessage } from './entities.js';

/** Sends a text message; adapters speak a provider's real wire format. */
export interface SmsSender {
  send(to: string, body: string): Promise<void>;
}

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com in production; a loopback server in tests. */
  baseUrl: string;
}

/** Twilio's Messages API: the path of POST /2010-04-01/Accounts/{sid}/Messages.json. */
export function twilioMessagesPath(accountSid: string): string {
  return `/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
}

/** Twilio's request headers: basic auth with the account SID and auth token, a form body. */
export function twilioHeaders(accountSid: string, authToken: string): Record<string, string> {
  return {
    authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
    'content-type': 'application/x-www-form-urlencoded',
  };
}

/** One message as Twilio's form: To, From (a number) or MessagingServiceSid, Body, MediaUrl (MMS). */
export function twilioMessageForm(m: { to: string; from?: string | null; messagingServiceSid?: string | null; body?: string; mediaUrl?: string; statusCallback?: string }): URLSearchParams {
  const form = new URLSearchParams({ To: m.to });
  if (m.messagingServiceSid) form.set('MessagingServiceSid', m.messagingServiceSid);
  else if (m.from) form.set('From', m.from);
  if (m.body) form.set('Body', m.body);
  if (m.mediaUrl) form.set('MediaUrl', m.mediaUrl);
  if (m.statusCallback) form.set('StatusCallback', m.statusCallback);
  return form;
}

/** Twilio's Messages API: POST /2010-04-01/Accounts/{sid}/Messages.json, basic auth, form body (the sign-in codes' sender; the sms channel of libs/messaging shares the wire format above). */
export class TwilioSmsSender implements SmsSender {
  constructor(private readonly settings: TwilioSettings) {}

  async send(to: string, body: string): Promise<void> {
    const { accountSid, authToken, from, baseUrl } = this.settings;
    const res = await fetch(`${baseUrl.replace(/\/$/, '')}${twilioMessagesPath(accountSid)}`, {
      method: 'POST',
      headers: twilioHeaders(accountSid, authToken),
      body: twilioMessageForm({ to, from, body }).toString(),
      signal: AbortSignal.timeout(10_000),
      redirect: 'error',
    });
    if (res.status !== 201 && res.status !== 200) {
      const detail = await res.text().catch(() => '');
      throw new Error(`Twilio answered ${res.status}: ${detail.slice(0, 300)}`);
    }
  }
}

/** Development: messages land in the dev_message table, where `otp:last` reads them. */
export class OutboxSmsSender implements SmsSender {
  constructor(private readonly orm: MikroORM) {}

  async send(to: string, body: string): Promise<void> {
    const em = this.orm.em.fork();
    em.create(DevMessage, { id: newId('message'), channel: 'sms', recipient: to, body });
    await em.flush();
  }
}

/** Several senders at once (development with a real provider configured: both). */
export class FanoutSmsSender implements SmsSender {
  constructor(private readonly senders: SmsSender[]) {}

  async send(to: string, body: string): Promise<void> {
    await Promise.all(this.senders.map((s) => s.send(to, body)));
  }
}

/**
 * The SMS adapter of a process (PROCESS_ROLES' `sms`): the configured provider — outside production
 * every message also lands in the development outbox — or only the outbox (`use: 'outbox'`, the
 * default, or SMS_PROVIDER=outbox).
 */
export function smsSenderFor(config: Pick<AppConfig, 'env' | 'sms'>, orm: MikroORM, use: 'provider' | 'outbox' = 'outbox'): SmsSender {
  const outbox = new OutboxSmsSender(orm);
  if (use === 'outbox' || config.sms.provider === 'outbox') return outbox;
  const twilio = new TwilioSmsSender(config.sms);
  return config.env === 'production' ? twilio : new FanoutSmsSender([twilio, outbox]);
}
