import type { MikroORM } from '@mikro-orm/core';
import { newId } from '#libs/core';
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

/** Twilio's Messages API: POST /2010-04-01/Accounts/{sid}/Messages.json, basic auth, form body. */
export class TwilioSmsSender implements SmsSender {
  constructor(private readonly settings: TwilioSettings) {}

  async send(to: string, body: string): Promise<void> {
    const { accountSid, authToken, from, baseUrl } = this.settings;
    const res = await fetch(`${baseUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ To: to, From: from, Body: body }).toString(),
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
