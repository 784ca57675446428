import { twilioHeaders, twilioMessageForm, twilioMessagesPath } from '#libs/auth';
import { parseJson, ProviderCall, stringAt, type ErrorReader } from '#libs/integrations';
import type { TwilioAccount } from './channels.js';
import { MessageRejected, type AdapterOptions, type MessageSender, type OutgoingMessage } from './sender.js';

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

  async send(message: OutgoingMessage, signal: AbortSignal): Promise<{ providerMessageId: string }> {
    const { accountSid, authToken, from, messagingServiceSid } = this.account;
    const call = new ProviderCall('sms (Twilio)', this.account.baseUrl ?? TWILIO_BASE_URL, {
      ...this.options, credentials: { apiKey: authToken }, timeoutMs: this.options.timeoutMs ?? 15_000,
    }, signal, readError, 'the message');
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
