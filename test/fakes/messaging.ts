import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { LoopbackServer } from '#testing/integrations';

/**
 * Loopback fakes of the messaging channels' providers, speaking their wire formats (tests only):
 * WhatsApp Business Cloud API (Graph errors included), Twilio's Messages API, and an SMTP server that
 * keeps what it received.
 */

/** `server-error`: 500; `rate-limit`: 429 (Graph code 130429 / Twilio 20429); `malformed`: 200 with a body that is not JSON; `hang`: never answered. */
export type MessagingFakeFailure = 'server-error' | 'rate-limit' | 'malformed' | 'hang';

/** One request received; `at` is when it arrived (ms since the epoch). */
export interface FakeCall { method: string; path: string; query: Record<string, string>; headers: IncomingMessage['headers']; body: string; at: number }

abstract class FakeHttp {
  readonly calls: FakeCall[] = [];
  baseUrl = '';
  failure: MessagingFakeFailure | null = null;
  /** How many requests the failure lasts (then the fake answers normally); Infinity: until cleared. */
  failTimes = Infinity;
  /** Only requests to paths like this fail (null: every request). */
  failPath: RegExp | null = null;
  protected revoked = false;
  /** While true, requests are received (and counted) but answered only on `release()`. */
  private holding = false;
  private readonly held: (() => void)[] = [];
  private readonly hung: ServerResponse[] = [];
  private readonly server = new LoopbackServer((req, res) => void this.receive(req, res));

  /** Requests received and not yet answered (`hold`). */
  get heldCount(): number {
    return this.held.length;
  }

  /** From now on, answers wait until `release()`. */
  hold(): void {
    this.holding = true;
  }

  /** Answers every held request, and the next ones at once. */
  release(): void {
    this.holding = false;
    for (const answer of this.held.splice(0)) answer();
  }

  revoke(): void {
    this.revoked = true;
  }

  async start(): Promise<this> {
    this.baseUrl = await this.server.start();
    return this;
  }

  close(): Promise<void> {
    for (const res of this.hung.splice(0)) res.destroy();
    return this.server.close();
  }

  fail(failure: MessagingFakeFailure | null, times = Infinity, path: RegExp | null = null): void {
    this.failure = failure;
    this.failTimes = times;
    this.failPath = path;
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // When the request arrived (before its body is read): the provider's clock for rate checks.
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const call: FakeCall = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at };
    this.calls.push(call);
    if (this.holding) return void this.held.push(() => this.answer(call, res));
    this.answer(call, res);
  }

  private answer(call: FakeCall, res: ServerResponse): void {
    const json = (status: number, value: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (this.failure && this.failTimes > 0 && (!this.failPath || this.failPath.test(call.path))) {
      this.failTimes--;
      if (this.failure === 'malformed') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"messages": [{"id": ');
      if (this.failure === 'hang') return void this.hung.push(res);
      return this.failWith(this.failure, json);
    }
    this.handle(call, json);
  }

  protected abstract failWith(failure: 'server-error' | 'rate-limit' | 'hang', json: (status: number, value: unknown) => void): void;
  protected abstract handle(call: FakeCall, json: (status: number, value: unknown) => void): void;
}

export interface FakeTemplate { id: string; name: string; language: string; status: string; category: string; components: { type: string; format?: string; text?: string }[] }

export const FAKE_TEMPLATES: FakeTemplate[] = [
  { id: '1001', name: 'spring_sale', language: 'en_US', status: 'APPROVED', category: 'MARKETING', components: [{ type: 'HEADER', format: 'IMAGE' }, { type: 'BODY', text: 'Hi {{1}}, use code {{2}} for 20% off.' }, { type: 'FOOTER', text: 'Reply STOP to opt out' }] },
  { id: '1002', name: 'spring_sale', language: 'es', status: 'APPROVED', category: 'MARKETING', components: [{ type: 'HEADER', format: 'IMAGE' }, { type: 'BODY', text: 'Hola {{1}}, usa el código {{2}}.' }] },
  { id: '1003', name: 'invoice_ready', language: 'en_US', status: 'APPROVED', category: 'UTILITY', components: [{ type: 'HEADER', format: 'DOCUMENT' }, { type: 'BODY', text: 'Your invoice {{1}} is attached.' }] },
  { id: '1004', name: 'product_video', language: 'en_US', status: 'APPROVED', category: 'MARKETING', components: [{ type: 'HEADER', format: 'VIDEO' }, { type: 'BODY', text: 'See it in action.' }] },
  { id: '1005', name: 'thanks_note', language: 'en_US', status: 'APPROVED', category: 'UTILITY', components: [{ type: 'BODY', text: 'Thanks {{1}}!' }] },
  { id: '1006', name: 'summer_preview', language: 'en_US', status: 'PENDING', category: 'MARKETING', components: [{ type: 'BODY', text: 'Coming soon.' }] },
  { id: '1007', name: 'login_code', language: 'hi', status: 'APPROVED', category: 'AUTHENTICATION', components: [{ type: 'BODY', text: '{{1}} is your code.' }] },
];

/** A number WhatsApp cannot deliver to (error 131026). */
export const UNDELIVERABLE_NUMBER = '15550000026';

/**
 * WhatsApp Business Cloud API: `Authorization: Bearer`, `POST /v21.0/{phone-number-id}/messages`
 * (`messaging_product: whatsapp` required), `GET /v21.0/{waba-id}/message_templates` two a page with
 * `after` cursors; Graph errors `{error: {message, type, code, error_data, fbtrace_id}}`.
 */
export class WhatsAppFake extends FakeHttp {
  readonly accessToken = `EAAG${randomBytes(20).toString('hex')}`;
  readonly phoneNumberId = '106540352242922';
  readonly wabaId = '102290129340398';
  readonly displayNumber = '+1 555-0100';
  templates: FakeTemplate[] = [...FAKE_TEMPLATES];
  readonly pageSize = 2;

  /** The message bodies received. */
  get sent(): Record<string, unknown>[] {
    return this.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/messages')).map((c) => JSON.parse(c.body) as Record<string, unknown>);
  }

  /**
   * Where the app's webhook is subscribed (as in Meta's dashboard): after each accepted message the
   * fake posts its `statuses` there, signed with the app secret (X-Hub-Signature-256), like Meta does.
   */
  statusWebhook: { url: string; appSecret: string; statuses: ('sent' | 'delivered' | 'read')[] } | null = null;
  /** The webhook posts made: their HTTP status (0: not answered). */
  readonly webhookAnswers: number[] = [];
  /** The messages accepted (answered 200), with the id given and the reference they carried. */
  readonly accepted: { id: string; to: string; reference: string | null }[] = [];

  /** A status webhook body of the Cloud API for one message. */
  statusBody(id: string, to: string, status: string, reference?: string, error?: { code: number; title: string; details: string }): Record<string, unknown> {
    return {
      object: 'whatsapp_business_account',
      entry: [{
        id: this.wabaId,
        changes: [{
          field: 'messages',
          value: {
            messaging_product: 'whatsapp', metadata: { display_phone_number: '15550100', phone_number_id: this.phoneNumberId },
            statuses: [{
              id, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: to,
              ...(reference ? { biz_opaque_callback_data: reference } : {}),
              ...(status === 'sent' ? { conversation: { id: 'c1', origin: { type: 'marketing' } }, pricing: { billable: true, pricing_model: 'CBP', category: 'marketing' } } : {}),
              ...(error ? { errors: [{ code: error.code, title: error.title, message: error.title, error_data: { details: error.details } }] } : {}),
            }],
          },
        }],
      }],
    };
  }

  private emitStatuses(id: string, body: Record<string, unknown>): void {
    const hook = this.statusWebhook;
    if (!hook) return;
    void (async () => {
      for (const status of hook.statuses) {
        const raw = Buffer.from(JSON.stringify(this.statusBody(id, String(body.to), status, typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : undefined)));
        const signature = `sha256=${createHmac('sha256', hook.appSecret).update(raw).digest('hex')}`;
        const res = await fetch(hook.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: raw }).catch(() => null);
        this.webhookAnswers.push(res?.status ?? 0);
        await res?.arrayBuffer().catch(() => undefined);
      }
    })();
  }

  protected failWith(failure: 'server-error' | 'rate-limit' | 'hang', json: (status: number, value: unknown) => void): void {
    if (failure === 'rate-limit') return json(429, { error: { message: '(#130429) Rate limit hit', type: 'OAuthException', code: 130429, error_data: { details: 'Cloud API message throughput has been reached.' }, fbtrace_id: 'Az8or2yhqkZfEZ-_4Qn_Bam' } });
    json(500, { error: { message: 'An unknown error has occurred.', type: 'OAuthException', code: 1, fbtrace_id: 'A1b2' } });
  }

  protected handle(call: FakeCall, json: (status: number, value: unknown) => void): void {
    const graph = (status: number, code: number, message: string, details?: string) =>
      json(status, { error: { message, type: 'OAuthException', code, ...(details ? { error_data: { messaging_product: 'whatsapp', details } } : {}), fbtrace_id: 'AbCdEf' } });
    if (this.revoked || call.headers.authorization !== `Bearer ${this.accessToken}`) {
      return graph(401, 190, 'Error validating access token: Session has expired on Friday, 27-Nov-26 05:00:00 PST.');
    }
    if (call.method === 'GET' && call.path === `/v21.0/${this.wabaId}/message_templates`) {
      const start = call.query.after ? Number(Buffer.from(call.query.after, 'base64').toString()) : 0;
      const page = this.templates.slice(start, start + this.pageSize);
      const next = start + this.pageSize < this.templates.length ? Buffer.from(String(start + this.pageSize)).toString('base64') : null;
      return json(200, {
        data: page,
        paging: { cursors: { before: Buffer.from(String(start)).toString('base64'), after: next ?? 'END' }, ...(next ? { next: `${this.baseUrl}/v21.0/${this.wabaId}/message_templates?after=${next}` } : {}) },
      });
    }
    if (call.method === 'POST' && call.path === `/v21.0/${this.phoneNumberId}/messages`) {
      let body: Record<string, unknown>;
      try { body = JSON.parse(call.body) as Record<string, unknown>; } catch { return graph(400, 100, 'Invalid parameter', 'The request body is not JSON'); }
      if (body.messaging_product !== 'whatsapp') return graph(400, 100, '(#100) The parameter messaging_product is required.');
      if (typeof body.to !== 'string' || !/^\d+$/.test(body.to)) return graph(400, 131009, '(#131009) Parameter value is not valid', 'Recipient phone number is not valid');
      if (body.to === UNDELIVERABLE_NUMBER) return graph(400, 131026, 'Message Undeliverable.', 'Unable to deliver message. The recipient may not have WhatsApp or has not accepted the newest terms of service.');
      if (body.type === 'template') {
        const t = body.template as { name?: string; language?: { code?: string } };
        if (!this.templates.some((x) => x.name === t.name && x.language === t.language?.code && x.status === 'APPROVED')) {
          return graph(404, 132001, '(#132001) Template name does not exist in the translation', `template name (${t.name}) does not exist in ${t.language?.code}`);
        }
      }
      const id = `wamid.${randomBytes(12).toString('hex')}`;
      this.accepted.push({ id, to: String(body.to), reference: typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : null });
      json(200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id }] });
      return this.emitStatuses(id, body);
    }
    // Graph node reads (the connect form's check): the phone number, the business account.
    if (call.method === 'GET' && call.path === `/v21.0/${this.phoneNumberId}`) {
      return json(200, { display_phone_number: this.displayNumber, verified_name: 'Acme Shop', id: this.phoneNumberId });
    }
    if (call.method === 'GET' && call.path === `/v21.0/${this.wabaId}`) return json(200, { id: this.wabaId, name: 'Acme Shop' });
    const id = /^\/v21\.0\/([^/]+)$/.exec(call.path)?.[1];
    if (call.method === 'GET' && id) {
      return json(400, { error: { message: `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`, type: 'GraphMethodException', code: 100, error_subcode: 33, fbtrace_id: 'AbCdEf' } });
    }
    graph(400, 100, `Unsupported ${call.method} request. Object with ID does not exist`);
  }
}

/** A number Twilio refuses as invalid (error 21211). */
export const INVALID_SMS_NUMBER = '15005550001';

/**
 * Twilio's Messages API: Basic auth, `POST /2010-04-01/Accounts/{sid}/Messages.json` form-encoded,
 * 201 with the message resource; errors `{code, message, more_info, status}`.
 */
export class TwilioFake extends FakeHttp {
  readonly accountSid = `AC${randomBytes(16).toString('hex')}`;
  readonly authToken = randomBytes(16).toString('hex');
  readonly from = '+15017122661';
  /** What the account resource says (`suspended`, `closed`: the connect check refuses it). */
  accountStatus = 'active';

  /** The forms received. */
  get sent(): Record<string, string>[] {
    return this.calls.filter((c) => c.method === 'POST').map((c) => Object.fromEntries(new URLSearchParams(c.body)));
  }

  protected failWith(failure: 'server-error' | 'rate-limit' | 'hang', json: (status: number, value: unknown) => void): void {
    if (failure === 'rate-limit') return json(429, { code: 20429, message: 'Too Many Requests', more_info: 'https://www.twilio.com/docs/errors/20429', status: 429 });
    json(500, { code: 20500, message: 'Internal Server Error', more_info: 'https://www.twilio.com/docs/errors/20500', status: 500 });
  }

  protected handle(call: FakeCall, json: (status: number, value: unknown) => void): void {
    const error = (status: number, code: number, message: string) => json(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
    const basic = `Basic ${Buffer.from(`${this.accountSid}:${this.authToken}`).toString('base64')}`;
    if (this.revoked || call.headers.authorization !== basic) return error(401, 20003, 'Authenticate');
    const account = `/2010-04-01/Accounts/${this.accountSid}`;
    // Reads (the connect form's check): the account, and the incoming numbers filtered by PhoneNumber.
    if (call.method === 'GET' && call.path === `${account}.json`) {
      return json(200, { sid: this.accountSid, friendly_name: 'Acme Shop', status: this.accountStatus, type: 'Full', date_created: 'Thu, 05 Nov 2026 10:00:00 +0000', uri: `${account}.json` });
    }
    if (call.method === 'GET' && call.path === `${account}/IncomingPhoneNumbers.json`) {
      const numbers = call.query.PhoneNumber === undefined || call.query.PhoneNumber === this.from
        ? [{ sid: 'PN2a0747eba6abf96b7e3c3ff0b4530f6e', account_sid: this.accountSid, phone_number: this.from, friendly_name: '(501) 712-2661', capabilities: { sms: true, mms: true, voice: true } }]
        : [];
      return json(200, { incoming_phone_numbers: numbers, page: 0, page_size: 50, start: 0, end: numbers.length ? 0 : -1, first_page_uri: `${account}/IncomingPhoneNumbers.json?PageSize=50&Page=0`, next_page_uri: null, uri: `${account}/IncomingPhoneNumbers.json` });
    }
    if (call.method !== 'POST' || call.path !== `${account}/Messages.json`) return error(404, 20404, 'The requested resource was not found');
    if (!String(call.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return error(400, 21601, 'Body must be form-encoded');
    const form = new URLSearchParams(call.body);
    const to = form.get('To') ?? '';
    if (!/^\+\d{8,15}$/.test(to) || to === `+${INVALID_SMS_NUMBER}`) return error(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    if (!form.get('From') && !form.get('MessagingServiceSid')) return error(400, 21603, "A 'From' or 'MessagingServiceSid' parameter is required to send a message.");
    if (!form.get('Body') && !form.get('MediaUrl')) return error(400, 21602, 'Message body is required.');
    json(201, {
      sid: `SM${randomBytes(16).toString('hex')}`, account_sid: this.accountSid, to, from: form.get('From'), body: form.get('Body') ?? '',
      status: 'queued', num_media: form.get('MediaUrl') ? '1' : '0', direction: 'outbound-api', api_version: '2010-04-01',
    });
  }
}

export interface ReceivedMail { from: string; to: string[]; raw: string }

/** An SMTP server on 127.0.0.1 (AUTH PLAIN/LOGIN without TLS, as a local relay allows) keeping every message; `reject` refuses recipients with 550. */
export class SmtpFake {
  readonly user = 'mailer';
  readonly password = randomBytes(12).toString('hex');
  readonly received: ReceivedMail[] = [];
  port = 0;
  /** Recipients answered `550 5.1.1 mailbox unavailable`. */
  readonly reject = new Set<string>();
  /** Connections opened to the fake (a test mode send must open none). */
  connections = 0;
  private readonly server = new SMTPServer({
    secure: false, hideSTARTTLS: true, allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'], logger: false,
    onConnect: (_session, done) => { this.connections++; done(); },
    onAuth: (auth, _session, done) => (auth.username === this.user && auth.password === this.password ? done(null, { user: auth.username }) : done(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }))),
    onRcptTo: (address, _session, done) => (this.reject.has(address.address) ? done(Object.assign(new Error(`5.1.1 <${address.address}>: mailbox unavailable`), { responseCode: 550 })) : done()),
    onData: (stream, session, done) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        this.received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        done();
      });
    },
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A received message's decoded text (quoted-printable soft breaks and escapes undone). */
export function decodeMail(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
