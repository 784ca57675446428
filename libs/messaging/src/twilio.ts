import { twilioHeaders, twilioMessageForm, twilioMessagesPath } from '#libs/auth';
import { parseJson, ProviderCall, stringAt, type ErrorReader } from '#libs/integrations';
import type { TwilioAccount } from './channels.js';
import { ChannelCheckFailed, MessageRejected, type AdapterOptions, type MessageSender, type OutgoingMessage } from './sender.js';

/**
 * sms: Twilio's Messages API, the wire format libs/auth's sign-in codes use (`twilioMessageForm`):
 * `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, Basic auth, `MediaUrl` for a picture,
 * answering `{sid: "SM…"}`. Errors: `{code, message, more_info, status}`; 401/403 (20003) → the
 * grant lapsed; 429 (20429) and 5xx → unavailable; other 4xx (21211 invalid To, 21606 From not
 * yours, 21610 unsubscribed recipient) → MessageRejected in Twilio's words.
 */
export const TWILIO_BASE_URL = 'https://api.twilio.com';

const readError: ErrorReader = (_status, body) => {
  const message = stringAt(body, 'message');
  const code = (body as { code?: unknown } | undefined)?.code;
  return { message: message && code !== undefined ? `${message} (code ${String(code)})` : message };
};

export class TwilioAdapter implements MessageSender {
  constructor(private readonly account: TwilioAccount, private readonly options: AdapterOptions) {}

  private call(signal: AbortSignal, subject: string): ProviderCall {
    return new ProviderCall('sms (Twilio)', this.account.baseUrl ?? TWILIO_BASE_URL, {
      ...this.options, credentials: { apiKey: this.account.authToken }, timeoutMs: this.options.timeoutMs ?? 15_000,
    }, signal, readError, subject);
  }

  /**
   * The connect form's check (issue 29): the account (`GET /Accounts/{sid}.json`, active), and the from
   * number among its incoming numbers (`IncomingPhoneNumbers.json?PhoneNumber=`) when it is an E.164
   * number (an alphanumeric sender id or a short code is not listed there, and is left to the send).
   */
  async check(signal: AbortSignal): Promise<{ friendlyName: string | null }> {
    const { accountSid, authToken, from } = this.account;
    const call = this.call(signal, 'the account');
    const headers = { authorization: twilioHeaders(accountSid, authToken).authorization };
    const base = `/2010-04-01/Accounts/${encodeURIComponent(accountSid)}`;
    const answer = await call.send({ path: `${base}.json`, headers });
    if (answer.status < 200 || answer.status >= 300) {
      const refusal = call.refusal(answer);
      throw refusal.kind === 'rejected' ? new ChannelCheckFailed('accountSid', refusal.message) : refusal;
    }
    const account = parseJson(answer.body);
    const status = stringAt(account, 'status');
    if (status && status !== 'active') throw new ChannelCheckFailed('accountSid', `sms (Twilio) says the account is ${status}`);
    if (from && /^\+\d{8,15}$/.test(from)) {
      const numbers = await call.send({ path: `${base}/IncomingPhoneNumbers.json`, query: new URLSearchParams({ PhoneNumber: from }), headers });
      if (numbers.status < 200 || numbers.status >= 300) throw call.refusal(numbers);
      const list = (parseJson(numbers.body) as { incoming_phone_numbers?: unknown[] } | undefined)?.incoming_phone_numbers;
      if (!Array.isArray(list)) throw call.failure('rejected', `answered HTTP ${numbers.status} with something that is not a number list`, numbers.status);
      if (!list.length) throw new ChannelCheckFailed('from', `sms (Twilio) has no number ${from} on this account`);
    }
    return { friendlyName: stringAt(account, 'friendly_name') ?? null };
  }

  async send(message: OutgoingMessage, signal: AbortSignal): Promise<{ providerMessageId: string }> {
    const { accountSid, authToken, from, messagingServiceSid } = this.account;
    const call = this.call(signal, 'the message');
    const form = twilioMessageForm({
      to: `+${message.to}`, from, messagingServiceSid,
      body: message.type === 'text' ? message.text : message.media?.caption,
      mediaUrl: message.media?.url, statusCallback: message.statusCallback,
    });
    const answer = await call.send({ method: 'POST', path: twilioMessagesPath(accountSid), headers: twilioHeaders(accountSid, authToken), body: Buffer.from(form.toString()) });
    const body = parseJson(answer.body);
    if (answer.status < 200 || answer.status >= 300) {
      const refusal = call.refusal(answer);
      if (refusal.kind === 'rejected') {
        const code = (body as { code?: unknown } | undefined)?.code;
        throw new MessageRejected(refusal.message, code === undefined || code === null ? null : String(code));
      }
      throw refusal;
    }
    const sid = stringAt(body, 'sid');
    if (!sid) throw call.failure('rejected', `answered HTTP ${answer.status} without a message sid`, answer.status);
    return { providerMessageId: sid };
  }
}
