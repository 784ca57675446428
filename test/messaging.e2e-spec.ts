import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openAppDatabase } from '#libs/app';
import { newId } from '#libs/core';
import { allWorkspaces, type Orm } from '#libs/db';
import { IntegrationConnection } from '#libs/integrations';
import { CampaignRecipient, MessagingCampaign, MessagingContact, MessagingMessage } from '#libs/messaging';
import { Render } from '#libs/renders';
import { monthStart } from '#libs/workspaces';
import {
  decodeMail, FAKE_TEMPLATES, INVALID_SMS_NUMBER, SmtpFake, TwilioFake, UNDELIVERABLE_NUMBER, WhatsAppFake,
} from '#testing/messaging';
import { startApi, type TestApi } from './harness.js';

// Contract §4.5 (the messaging-provider rows, "Send one message", the list parameters), §2 (Messaging
// channel, template, contact, allowance), §5 (integrations:read / integrations:write), §7 (402/404/409/422),
// §8 (reply buttons up to 3, list rows up to 10, messaging lists up to 100); docs/messaging.md.

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string };
const BASE = '/v1/integrations/messaging-provider';
/** A public address as an IP literal: checked, never connected to (the fakes only receive the link). */
const IMG = 'https://93.184.216.34/banners/spring.jpg';

describe('messaging-provider (§4.5)', () => {
  let api: TestApi;
  let orm: Orm;
  let wa: WhatsAppFake;
  let twilio: TwilioFake;
  let smtp: SmtpFake;
  let ws: Ws;
  let other: Ws;

  beforeAll(async () => {
    [wa, twilio, smtp] = await Promise.all([new WhatsAppFake().start(), new TwilioFake().start(), new SmtpFake().start()]);
    api = await startApi();
    orm = await openAppDatabase(api.config.database, { migrate: false });
    [ws, other] = [await create(), await create()];
    await connectAll(ws);
  }, 120_000);
  afterAll(async () => {
    await orm.close(true);
    await api.close();
    await Promise.all([wa.close(), twilio.close(), smtp.close()]);
  });

  const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Messaging', '--plan', plan)).json as Ws;
  const connect = (w: Ws, ...flags: string[]) => api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'messaging-provider', ...flags);
  const connectWhatsApp = (w: Ws) => connect(w, '--channel', 'primary_chat', '--access-token', wa.accessToken, '--phone-number-id', wa.phoneNumberId, '--waba-id', wa.wabaId, '--display-number', '+1 555 0100', '--base-url', wa.baseUrl);
  async function connectAll(w: Ws) {
    expect((await connectWhatsApp(w)).json).toMatchObject({ status: 'connected' });
    expect((await connect(w, '--channel', 'sms', '--account-sid', twilio.accountSid, '--auth-token', twilio.authToken, '--from', twilio.from, '--base-url', twilio.baseUrl)).json).toMatchObject({ status: 'connected' });
    const email = await connect(w, '--channel', 'email', '--smtp-host', '127.0.0.1', '--smtp-port', String(smtp.port), '--smtp-secure', 'false', '--smtp-user', smtp.user, '--smtp-password', smtp.password, '--from', 'News <news@shop.test>');
    expect(email.json).toMatchObject({ status: 'connected' });
    return email.json;
  }
  const inject = (method: 'GET' | 'POST', url: string, key: string, payload?: Json, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key, ...headers }, ...(payload ? { payload } : {}) });
  const send = (body: Json, key = ws.liveKey, headers: Record<string, string> = {}) => inject('POST', `${BASE}/messages`, key, body, headers);
  const errorsOf = (res: { json(): unknown }) => (res.json() as { errors?: Record<string, string[]> }).errors ?? {};
  const messageCount = (w: Ws) => allWorkspaces(orm).fork().count(MessagingMessage, { workspaceId: w.workspaceId });
  /** A finished render of a workspace, as the render worker leaves it. */
  const doneRender = async (w: Ws, kind: 'image' | 'video', format: string) => {
    const id = newId('render');
    const at = new Date();
    const em = orm.em.fork();
    em.create(Render, {
      id, workspaceId: w.workspaceId, status: 'done', kind, mode: 'live', templateId: null, templateVersion: null, format,
      width: 1080, height: 1080, duration: kind === 'video' ? 5 : null, fps: kind === 'video' ? 30 : null, scale: 1, fileSizeBytes: 1000, renderTime: 10, credits: 1, watermarked: false,
      outputKey: `renders/${w.workspaceId}/${id}.${format}`, posterKey: null, thumbnailKey: null, expiresAt: null, purgedAt: null, error: null, progress: 1, cancelRequested: false,
      metadata: null, callback: null, edit: {}, idempotencyKey: null, requestHash: null, attempts: 1, createdAt: at, updatedAt: at, startedAt: at, completedAt: at,
    });
    await em.flush();
    const url = (await inject('GET', `/v1/render/${id}`, w.liveKey)).json().data.url as string;
    expect(url).toMatch(/^https?:\/\//);
    return { id, url };
  };

  it('integration:connect --channel adds channels to one sealed connection and prints no secret; bad flags are named', async () => {
    const w = await create();
    const first = await connectWhatsApp(w);
    expect(first.json).toMatchObject({ provider: 'messaging-provider', status: 'connected', channels: ['primary_chat'] });
    const out = await connectAll(w);
    expect(out).toMatchObject({ provider: 'messaging-provider', channels: ['email', 'primary_chat', 'sms'] });
    const printed = JSON.stringify([first.json, out]);
    for (const secret of [wa.accessToken, twilio.authToken, smtp.password]) expect(printed).not.toContain(secret);
    const rows = await allWorkspaces(orm).fork().find(IntegrationConnection, { workspaceId: w.workspaceId });
    expect(rows).toHaveLength(1);
    for (const secret of [wa.accessToken, twilio.authToken, smtp.password]) expect(rows[0]!.credentialsSealed).not.toContain(secret);
    const bad = await connect(w, '--channel', 'sms', '--account-sid', 'AC1');
    expect(bad.code).toBe(1);
    expect(JSON.stringify(bad.json)).toMatch(/auth-token/);
  });

  it('§7 not connected → 409 INTEGRATION_NOT_CONNECTED; a plan without integrations → 402; §5 scopes', async () => {
    for (const [method, path] of [['GET', 'channels'], ['GET', 'templates'], ['GET', 'contacts'], ['GET', 'usage'], ['POST', 'messages']] as const) {
      const res = await inject(method, `${BASE}/${path}`, other.liveKey, method === 'POST' ? { to: '+447700900123', type: 'text', text: 'hi' } : undefined);
      expect([path, res.statusCode, res.json().code]).toEqual([path, 409, 'INTEGRATION_NOT_CONNECTED']);
    }
    const free = await create('free');
    expect((await connectWhatsApp(free)).code).toBe(0);
    const res = await inject('GET', `${BASE}/channels`, free.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_INTEGRATION_NOT_ALLOWED']);
    const readKey = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'integrations:read')).json.key as string;
    expect((await inject('GET', `${BASE}/channels`, readKey)).statusCode).toBe(200);
    const denied = await send({ to: '+447700900123', type: 'text', text: 'hi' }, readKey);
    expect([denied.statusCode, denied.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });

  it('§2 channels: connected ones with what each adapter can send; other names only when asked, as disconnected', async () => {
    const list = (await inject('GET', `${BASE}/channels`, ws.liveKey)).json().data as Json[];
    expect(list.map((c) => c.channel)).toEqual(['primary_chat', 'sms', 'email']);
    expect(list[0]).toEqual({
      id: `primary_chat:${wa.phoneNumberId}`, channel: 'primary_chat', provider: 'whatsapp-cloud', label: 'WhatsApp Business', identifier: '+1 555 0100', isDefault: true, status: 'connected',
      capabilities: { template: true, text: true, media: ['image', 'video', 'document', 'audio'], interactive: ['button', 'list', 'cta_url'] },
    });
    expect(list[1]).toMatchObject({ channel: 'sms', identifier: twilio.from, capabilities: { template: false, text: true, media: ['image'], interactive: [] } });
    expect(list[2]).toMatchObject({ channel: 'email', identifier: 'News <news@shop.test>', capabilities: { template: false, text: true } });
    const one = (await inject('GET', `${BASE}/channels?channel=sms`, ws.liveKey)).json().data as Json[];
    expect(one.map((c) => c.channel)).toEqual(['sms']);
    const off = (await inject('GET', `${BASE}/channels?status=disconnected`, ws.liveKey)).json().data as Json[];
    expect(off.map((c) => c.channel)).toEqual(['rcs', 'chat_b', 'chat_c', 'chat_d', 'chat_e', 'chat_f', 'webchat']);
    expect(off.every((c) => c.status === 'disconnected')).toBe(true);
    const bad = await inject('GET', `${BASE}/channels?channel=pigeon`, ws.liveKey);
    expect([bad.statusCode, bad.json().code, Object.keys(errorsOf(bad))]).toEqual([422, 'VALIDATION_FAILED', ['query.channel']]);
  });

  it('§2 templates: every page of the account read (after cursors), APPROVED by default, filtered, {{n}} counted', async () => {
    const before = wa.calls.length;
    const approved = (await inject('GET', `${BASE}/templates?limit=100`, ws.liveKey)).json().data as Json[];
    const pages = wa.calls.slice(before).filter((c) => c.path.endsWith('/message_templates'));
    expect(pages).toHaveLength(Math.ceil(FAKE_TEMPLATES.length / wa.pageSize));
    expect(pages[1]!.query.after).toBeTruthy();
    expect(approved.map((t) => `${t.name}/${t.language}`)).toEqual(FAKE_TEMPLATES.filter((t) => t.status === 'APPROVED').map((t) => `${t.name}/${t.language}`));
    expect(approved[0]).toEqual({
      id: '1001', accountId: wa.phoneNumberId, name: 'spring_sale', category: 'MARKETING', language: 'en_US', status: 'APPROVED',
      headerFormat: 'IMAGE', bodyVariableCount: 2, variables: ['1', '2'], usageCount: expect.any(Number),
    });
    const names = async (q: string) => ((await inject('GET', `${BASE}/templates?${q}`, ws.liveKey)).json().data as Json[]).map((t) => `${t.name}/${t.language}`);
    expect(await names('status=PENDING')).toEqual(['summer_preview/en_US']);
    expect(await names('category=UTILITY')).toEqual(['invoice_ready/en_US', 'thanks_note/en_US']);
    expect(await names('language=hi')).toEqual(['login_code/hi']);
    expect(await names('search=SALE')).toEqual(['spring_sale/en_US', 'spring_sale/es']);
    expect(await names('limit=2')).toHaveLength(2);
    expect(await names('accountId=999')).toEqual([]);
    const bad = await inject('GET', `${BASE}/templates?limit=101&status=LIVE`, ws.liveKey);
    expect([bad.statusCode, Object.keys(errorsOf(bad)).sort()]).toEqual([422, ['query.limit', 'query.status']]);
  });

  it('a template with a finished render as its image header: WhatsApp\'s wire format, the message stored, the recipient a contact, usage counted', async () => {
    const render = await doneRender(ws, 'image', 'png');
    const usage0 = (await inject('GET', `${BASE}/usage`, ws.liveKey)).json().data;
    const res = await send({ to: '+44 7700 900123', templateName: 'spring_sale', languageCode: 'en_US', renderId: render.id, variables: { 1: 'Ada', 2: 'SPRING20' } });
    expect(res.statusCode).toBe(201);
    const data = res.json().data as Json;
    expect(data).toMatchObject({ channel: 'primary_chat', accountId: wa.phoneNumberId, to: '447700900123', type: 'template', templateName: 'spring_sale', languageCode: 'en_US', renderId: render.id, mediaUrl: render.url, status: 'sent' });
    expect(String(data.providerMessageId)).toMatch(/^wamid\./);
    expect(wa.sent.at(-1)).toEqual({
      messaging_product: 'whatsapp', recipient_type: 'individual', to: '447700900123', type: 'template',
      template: {
        name: 'spring_sale', language: { code: 'en_US' },
        components: [{ type: 'header', parameters: [{ type: 'image', image: { link: render.url } }] }, { type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'SPRING20' }] }],
      },
    });
    const stored = await allWorkspaces(orm).fork().findOneOrFail(MessagingMessage, { id: data.id as string });
    expect([stored.workspaceId, stored.providerMessageId]).toEqual([ws.workspaceId, data.providerMessageId]);
    const usage = (await inject('GET', `${BASE}/usage`, ws.liveKey)).json().data;
    expect(usage).toEqual({
      plan: 'pro', subscriptionStatus: 'active', active: true, rateLimitPerMinute: 300,
      messages: { key: 'messages', label: 'Messages this month', used: usage0.messages.used + 1, limit: 10_000, unlimited: false, remaining: 10_000 - usage0.messages.used - 1, percentUsed: expect.any(Number) },
    });
    const contacts = (await inject('GET', `${BASE}/contacts?search=7700900`, ws.liveKey)).json().data;
    expect(contacts).toMatchObject({ total: 1, page: 1, pages: 1, contacts: [{ waId: '447700900123', optedIn: true, blocked: false, tags: [] }] });
    const t = ((await inject('GET', `${BASE}/templates?search=spring&language=en_US`, ws.liveKey)).json().data as Json[])[0]!;
    expect(t.usageCount).toBe(1);
  });

  it('a document header takes mediaUrl over renderId, with headerFilename or the URL\'s; a video header; a template without variables', async () => {
    const render = await doneRender(ws, 'image', 'png');
    const pdf = 'https://93.184.216.34/files/INV-2041.pdf';
    expect((await send({ to: '0044 7700 900124', templateName: 'invoice_ready', mediaUrl: pdf, renderId: render.id, variables: { 1: 'INV-2041' } })).statusCode).toBe(201);
    expect((wa.sent.at(-1)!.template as Json).components).toEqual([
      { type: 'header', parameters: [{ type: 'document', document: { link: pdf, filename: 'INV-2041.pdf' } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'INV-2041' }] },
    ]);
    expect((await send({ to: '447700900124', templateName: 'invoice_ready', mediaUrl: pdf, headerFilename: 'Invoice March.pdf', variables: { 1: 'INV-2041' } })).statusCode).toBe(201);
    expect(JSON.stringify(wa.sent.at(-1))).toContain('"filename":"Invoice March.pdf"');
    const video = await doneRender(ws, 'video', 'mp4');
    expect((await send({ to: '447700900124', templateName: 'product_video', renderId: video.id })).statusCode).toBe(201);
    expect((wa.sent.at(-1)!.template as Json).components).toEqual([{ type: 'header', parameters: [{ type: 'video', video: { link: video.url } }] }]);
  });

  it('text, media and interactive messages in WhatsApp\'s shapes', async () => {
    const to = '447700900125';
    expect((await send({ to, type: 'text', text: 'Your order shipped.' })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ type: 'text', text: { body: 'Your order shipped.', preview_url: false } });
    expect((await send({ to, type: 'image', mediaUrl: IMG, caption: 'New in' })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ type: 'image', image: { link: IMG, caption: 'New in' } });
    expect((await send({ to, type: 'document', mediaUrl: 'https://93.184.216.34/a/terms.pdf', caption: 'Terms' })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ type: 'document', document: { link: 'https://93.184.216.34/a/terms.pdf', caption: 'Terms', filename: 'terms.pdf' } });
    expect((await send({ to, type: 'audio', mediaUrl: 'https://93.184.216.34/a/jingle.mp3' })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ type: 'audio', audio: { link: 'https://93.184.216.34/a/jingle.mp3' } });
    const buttons = { type: 'button', body: { text: 'Keep your order?' }, action: { buttons: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] } };
    expect((await send({ to, type: 'interactive', interactive: buttons })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ type: 'interactive', interactive: { type: 'button', body: { text: 'Keep your order?' }, action: { buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Yes' } }, { type: 'reply', reply: { id: 'no', title: 'No' } }] } } });
    const list = { type: 'list', body: { text: 'Pick a size' }, footer: { text: 'Sizes run small' }, action: { button: 'Sizes', sections: [{ title: 'All', rows: [{ id: 's', title: 'Small' }, { id: 'm', title: 'Medium' }] }] } };
    expect((await send({ to, type: 'interactive', interactive: list })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ interactive: { type: 'list', footer: { text: 'Sizes run small' }, action: { button: 'Sizes', sections: list.action.sections } } });
    const cta = { type: 'cta_url', body: { text: 'Track it' }, action: { displayText: 'Track', url: 'https://shop.test/t/1' } };
    expect((await send({ to, type: 'interactive', interactive: cta })).statusCode).toBe(201);
    expect(wa.sent.at(-1)).toMatchObject({ interactive: { type: 'cta_url', action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://shop.test/t/1' } } } });
  });

  it('the send table\'s rules: 422 naming the field, nothing sent, nothing stored', async () => {
    const image = await doneRender(ws, 'image', 'png');
    const count = await messageCount(ws);
    const calls = wa.sent.length + twilio.sent.length + smtp.received.length;
    const rows = Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` }));
    const cases: [Json, string][] = [
      [{ to: '7700 900', type: 'text', text: 'hi' }, 'to'],
      [{ to: 'not-a-number', type: 'text', text: 'hi' }, 'to'],
      [{ to: '447700900123', type: 'text' }, 'text'],
      [{ to: '447700900123' }, 'templateName'],
      [{ to: '447700900123', templateName: 'no_such_template' }, 'templateName'],
      [{ to: '447700900123', templateName: 'summer_preview' }, 'templateName'],
      [{ to: '447700900123', templateName: 'spring_sale', mediaUrl: IMG, variables: { 1: 'a', 2: 'b' } }, 'languageCode'],
      [{ to: '447700900123', templateName: 'spring_sale', languageCode: 'fr', mediaUrl: IMG, variables: { 1: 'a', 2: 'b' } }, 'languageCode'],
      [{ to: '447700900123', templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, variables: { 1: 'a' } }, 'variables'],
      [{ to: '447700900123', templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, variables: { 1: 'a', 2: 'b', 3: 'c' } }, 'variables'],
      [{ to: '447700900123', templateName: 'spring_sale', languageCode: 'en_US', variables: { 1: 'a', 2: 'b' } }, 'mediaUrl'],
      [{ to: '447700900123', templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: 'https://93.184.216.34/a/clip.mp4', variables: { 1: 'a', 2: 'b' } }, 'mediaUrl'],
      [{ to: '447700900123', templateName: 'product_video', renderId: image.id }, 'renderId'],
      [{ to: '447700900123', templateName: 'thanks_note', mediaUrl: IMG, variables: { 1: 'a' } }, 'mediaUrl'],
      [{ to: '447700900123', type: 'image', mediaUrl: 'https://93.184.216.34/a/picture' }, 'mediaUrl'],
      [{ to: '447700900123', type: 'image', mediaUrl: 'ftp://93.184.216.34/a.jpg' }, 'mediaUrl'],
      [{ to: '447700900123', type: 'image', mediaUrl: 'https://user:pw@93.184.216.34/a.jpg' }, 'mediaUrl'],
      [{ to: '447700900123', type: 'audio', mediaUrl: 'https://93.184.216.34/a.mp3', caption: 'no' }, 'caption'],
      [{ to: '447700900123', type: 'interactive', interactive: { type: 'button', body: { text: 'x' }, action: { buttons: [1, 2, 3, 4].map((i) => ({ id: `b${i}`, title: `B${i}` })) } } }, 'interactive.action.buttons'],
      [{ to: '447700900123', type: 'interactive', interactive: { type: 'list', body: { text: 'x' }, action: { button: 'Pick', sections: [{ rows: rows.slice(0, 6) }, { rows: rows.slice(6) }] } } }, 'interactive.action.sections'],
      [{ to: '447700900123', type: 'interactive' }, 'interactive'],
      [{ to: '447700900123', channel: 'sms', type: 'template', templateName: 'thanks_note' }, 'type'],
      [{ to: '447700900123', channel: 'sms', type: 'video', mediaUrl: 'https://93.184.216.34/a.mp4' }, 'type'],
      [{ to: '447700900123', channel: 'email', type: 'text', text: 'hi', subject: 'Hi' }, 'to'],
      [{ to: 'ada@shop.test', channel: 'email', type: 'text', text: 'hi' }, 'subject'],
      [{ to: '447700900123', type: 'text', text: 'hi', accountId: '123' }, 'accountId'],
      [{ to: '447700900123', type: 'bogus' }, 'type'],
    ];
    for (const [body, field] of cases) {
      const res = await send(body);
      expect([JSON.stringify(body), res.statusCode, res.json().code, Object.keys(errorsOf(res))]).toEqual([JSON.stringify(body), 422, 'VALIDATION_FAILED', [field]]);
    }
    expect(await messageCount(ws)).toBe(count);
    expect(wa.sent.length + twilio.sent.length + smtp.received.length).toBe(calls);
    const bad = await send({ to: '447700900123', type: 'text', text: 'hi' }, ws.liveKey, { 'idempotency-key': 'has space' });
    expect(Object.keys(errorsOf(bad))).toEqual(['headers.idempotency-key']);
    // rcp_… is a campaign recipient's key: a client's could pass for one.
    const reserved = await send({ to: '447700900123', type: 'text', text: 'hi' }, ws.liveKey, { 'idempotency-key': 'rcp_01ABC' });
    expect([reserved.statusCode, Object.keys(errorsOf(reserved))]).toEqual([422, ['headers.idempotency-key']]);
    expect(await messageCount(ws)).toBe(count);
  });

  it('renderId: another workspace\'s → 404 RENDER_NOT_FOUND; unconnected channels → 409', async () => {
    const theirs = await doneRender(other, 'image', 'png');
    const res = await send({ to: '447700900123', type: 'image', renderId: theirs.id });
    expect([res.statusCode, res.json().code]).toEqual([404, 'RENDER_NOT_FOUND']);
    const w = await create();
    expect((await connectWhatsApp(w)).code).toBe(0);
    const sms = await send({ to: '447700900123', channel: 'sms', type: 'text', text: 'hi' }, w.liveKey);
    expect([sms.statusCode, sms.json().code]).toEqual([409, 'MESSAGING_CHANNEL_NOT_CONNECTED']);
    const rcs = await send({ to: '447700900123', channel: 'rcs', type: 'text', text: 'hi' }, w.liveKey);
    expect([rcs.statusCode, rcs.json().code]).toEqual([409, 'MESSAGING_CHANNEL_NOT_CONNECTED']);
  });

  it('sms through Twilio\'s Messages API: form body, Basic auth, MediaUrl; its refusal in its words', async () => {
    const res = await send({ to: '+1 (415) 555-0142', channel: 'sms', type: 'text', text: 'Your code ships today' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ channel: 'sms', to: '14155550142', accountId: twilio.from });
    expect(String(res.json().data.providerMessageId)).toMatch(/^SM[0-9a-f]{32}$/);
    // Each sms asks Twilio to post its status back (docs/messaging.md "Status callbacks").
    const statusCallback = `${api.config.publicUrl}/api/v1/integrations/messaging-provider/status/twilio/${ws.workspaceId}`;
    expect(twilio.sent.at(-1)).toEqual({ To: '+14155550142', From: twilio.from, Body: 'Your code ships today', StatusCallback: statusCallback });
    expect((await send({ to: '14155550142', channel: 'sms', type: 'image', mediaUrl: IMG, caption: 'New in' })).statusCode).toBe(201);
    expect(twilio.sent.at(-1)).toEqual({ To: '+14155550142', From: twilio.from, Body: 'New in', MediaUrl: IMG, StatusCallback: statusCallback });
    const refused = await send({ to: INVALID_SMS_NUMBER, channel: 'sms', type: 'text', text: 'x' });
    expect([refused.statusCode, refused.json().code, refused.json().data]).toEqual([422, 'MESSAGE_REJECTED', { providerCode: '21211' }]);
    expect(refused.json().message).toMatch(/is not a valid phone number/);
  });

  it('email over SMTP: subject, html and text bodies, media as a link; a refused mailbox in the server\'s words', async () => {
    const res = await send({ to: 'Ada@Shop.test', channel: 'email', type: 'text', subject: 'Spring sale', text: 'Half price <today>.\n\nSee you' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ channel: 'email', to: 'ada@shop.test', accountId: 'News <news@shop.test>' });
    const mail = smtp.received.at(-1)!;
    expect(mail.to).toEqual(['ada@shop.test']);
    expect(mail.from).toBe('news@shop.test');
    const text = decodeMail(mail.raw);
    expect(text).toMatch(/^Subject: Spring sale\r?$/m);
    expect(text).toContain('<p>Half price &#60;today&#62;.</p>');
    expect(text).toContain('Half price <today>.');
    expect((await send({ to: 'ada@shop.test', channel: 'email', type: 'document', subject: 'Your invoice', mediaUrl: 'https://93.184.216.34/files/INV-7.pdf', caption: 'Attached' })).statusCode).toBe(201);
    const doc = decodeMail(smtp.received.at(-1)!.raw);
    expect(doc).toContain('<a href="https://93.184.216.34/files/INV-7.pdf">INV-7.pdf</a>');
    smtp.reject.add('gone@shop.test');
    const refused = await send({ to: 'gone@shop.test', channel: 'email', type: 'text', subject: 'x', text: 'x' });
    expect([refused.statusCode, refused.json().code]).toEqual([422, 'MESSAGE_REJECTED']);
    expect(refused.json().message).toMatch(/mailbox unavailable/);
    const contacts = (await inject('GET', `${BASE}/contacts?search=ada@shop`, ws.liveKey)).json().data;
    expect(contacts.contacts).toMatchObject([{ email: 'ada@shop.test', waId: null }]);
  });

  it('provider failures: WhatsApp\'s 131026 → 422 MESSAGE_REJECTED; 5xx/429 retried then 503; malformed JSON → 502; nothing stored', async () => {
    const count = await messageCount(ws);
    const undeliverable = await send({ to: UNDELIVERABLE_NUMBER, type: 'text', text: 'hi' });
    expect([undeliverable.statusCode, undeliverable.json().code, undeliverable.json().data]).toEqual([422, 'MESSAGE_REJECTED', { providerCode: '131026' }]);
    expect(undeliverable.json().message).toMatch(/Message Undeliverable.*may not have WhatsApp/);
    wa.fail('server-error', 1);
    const recovered = await send({ to: '447700900126', type: 'text', text: 'retried' });
    expect(recovered.statusCode).toBe(201);
    expect(wa.sent.filter((m) => (m.text as Json | undefined)?.body === 'retried')).toHaveLength(2);
    for (const failure of ['server-error', 'rate-limit'] as const) {
      wa.fail(failure);
      const before = wa.calls.length;
      const res = await send({ to: '447700900126', type: 'text', text: 'hi' });
      expect([failure, res.statusCode, res.json().code, res.headers['retry-after']]).toEqual([failure, 503, 'PROVIDER_UNAVAILABLE', '30']);
      expect(wa.calls.length - before).toBe(3);
    }
    twilio.fail('server-error');
    const sms = await send({ to: '14155550142', channel: 'sms', type: 'text', text: 'x' });
    expect([sms.statusCode, sms.json().code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);
    twilio.fail(null);
    wa.fail('malformed');
    const malformed = await send({ to: '447700900126', type: 'text', text: 'hi' });
    expect([malformed.statusCode, malformed.json().code]).toEqual([502, 'PROVIDER_ERROR']);
    const templates = await inject('GET', `${BASE}/templates`, ws.liveKey);
    expect([templates.statusCode, templates.json().code]).toEqual([502, 'PROVIDER_ERROR']);
    wa.fail(null);
    expect(await messageCount(ws)).toBe(count + 1);
  }, 60_000);

  it('Idempotency-Key: the second POST answers the stored message and sends nothing', async () => {
    const key = `order-${newId('request')}`;
    const first = await send({ to: '447700900127', type: 'text', text: 'once' }, ws.liveKey, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    const sent = wa.sent.length;
    const again = await send({ to: '447700900127', type: 'text', text: 'once' }, ws.liveKey, { 'idempotency-key': key });
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual(first.json().data);
    expect(wa.sent.length).toBe(sent);
    // Another workspace's same key is its own.
    const w = await create();
    expect((await connectWhatsApp(w)).code).toBe(0);
    expect((await send({ to: '447700900127', type: 'text', text: 'once' }, w.liveKey, { 'idempotency-key': key })).statusCode).toBe(201);
  });

  it('contacts: the workspace\'s own, paged, by tag and search; imported by the CLI', async () => {
    const w = await create();
    expect((await connectWhatsApp(w)).code).toBe(0);
    const file = join(api.config.dataDir, 'contacts.json');
    await writeFile(file, JSON.stringify([
      { to: '+44 7700 900201', name: 'Ada Lovelace', tags: ['VIP', 'london'] },
      { to: '447700900202', name: 'Charles Babbage', tags: ['london'] },
      { email: 'grace@navy.test', name: 'Grace Hopper', tags: ['vip'] },
      { to: '12' },
    ]));
    const imported = await api.cli('messaging:contacts:import', '--workspace', w.workspaceId, '--file', file);
    expect(imported.json).toMatchObject({ imported: 3, refused: [{ index: 3 }] });
    const page = async (q: string) => (await inject('GET', `${BASE}/contacts?${q}`, w.liveKey)).json().data as { contacts: Json[]; total: number; page: number; pages: number };
    const all = await page('limit=2');
    expect([all.total, all.pages, all.contacts.length]).toEqual([3, 2, 2]);
    expect((await page('limit=2&page=2')).contacts).toHaveLength(1);
    expect((await page('tag=vip')).contacts.map((c) => c.name).sort()).toEqual(['Ada Lovelace', 'Grace Hopper']);
    expect((await page('search=babb')).contacts).toMatchObject([{ name: 'Charles Babbage', firstName: 'Charles', lastName: 'Babbage', waId: '447700900202', tags: ['london'] }]);
    // None of the other workspace's recipients.
    expect((await page('search=447700900123')).total).toBe(0);
    expect(await allWorkspaces(orm).fork().count(MessagingContact, { workspaceId: ws.workspaceId })).toBeGreaterThan(0);
    const bad = await inject('GET', `${BASE}/contacts?limit=101&page=0`, w.liveKey);
    expect([bad.statusCode, Object.keys(errorsOf(bad)).sort()]).toEqual([422, ['query.limit', 'query.page']]);
  });

  it('the monthly allowance: used up → 402 LIMIT_MESSAGES before any send', async () => {
    const w = await create('starter');
    expect((await connectWhatsApp(w)).code).toBe(0);
    const em = orm.em.fork();
    for (let i = 0; i < 1000; i++) {
      em.create(MessagingMessage, {
        id: newId('message'), workspaceId: w.workspaceId, channel: 'primary_chat', accountId: wa.phoneNumberId, recipient: '447700900123', type: 'text',
        templateName: null, languageCode: null, renderId: null, mediaUrl: null, status: 'sent', providerMessageId: `wamid.${i}`, idempotencyKey: null, createdAt: new Date(), allowanceAt: new Date(), sentAt: new Date(),
      });
    }
    await em.flush();
    const usage = (await inject('GET', `${BASE}/usage`, w.liveKey)).json().data;
    expect(usage.messages).toEqual({ key: 'messages', label: 'Messages this month', used: 1000, limit: 1000, unlimited: false, remaining: 0, percentUsed: 100 });
    const sent = wa.sent.length;
    const res = await send({ to: '447700900123', type: 'text', text: 'hi' }, w.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_MESSAGES']);
    expect(wa.sent.length).toBe(sent);
  });

  it('issue 28: a campaign\'s units are dated by its acceptance: one accepted last month and still sending reserves nothing this month, and its message sent now counts in its month', async () => {
    const w = await create('starter');
    expect((await connectWhatsApp(w)).code).toBe(0);
    const lastMonth = new Date(monthStart().getTime() - 24 * 3600_000);
    const now = new Date();
    const campaignId = newId('campaign');
    const em = allWorkspaces(orm).fork();
    em.create(MessagingCampaign, {
      id: campaignId, workspaceId: w.workspaceId, name: 'Month end', channel: 'primary_chat', templateName: 'thanks_note', languageCode: null, renderId: null, mediaUrl: null,
      commonVariables: {}, rateLimitPerSecond: 10, total: 1000, status: 'sending', idempotencyKey: null, createdAt: lastMonth, completedAt: null, mode: 'live',
    });
    const recipients = Array.from({ length: 1000 }, (_, position) => ({
      id: newId('recipient'), workspaceId: w.workspaceId, campaignId, position, recipient: `4477009${String(position).padStart(5, '0')}`, name: null, variables: null,
      status: position === 0 ? ('sent' as const) : ('queued' as const), errorCode: null, reason: null, providerMessageId: null, messageId: null, claimedBy: null, attempts: 0, updatedAt: now, sentAt: null,
    }));
    await em.flush();
    for (let i = 0; i < recipients.length; i += 200) await em.insertMany(CampaignRecipient, recipients.slice(i, i + 200));
    // Its first recipient was sent today: the message's unit is the one reserved last month.
    em.create(MessagingMessage, {
      id: newId('message'), workspaceId: w.workspaceId, channel: 'primary_chat', accountId: wa.phoneNumberId, recipient: recipients[0]!.recipient, type: 'template',
      templateName: 'thanks_note', languageCode: null, renderId: null, mediaUrl: null, status: 'sent', providerMessageId: 'wamid.month', idempotencyKey: recipients[0]!.id,
      createdAt: now, allowanceAt: lastMonth, sentAt: now,
    });
    await em.flush();
    const used = async () => (await inject('GET', `${BASE}/usage`, w.liveKey)).json().data.messages.used as number;
    expect(await used()).toBe(0);
    expect((await send({ to: '447700900123', type: 'text', text: 'new month' }, w.liveKey)).statusCode).toBe(201);
    expect(await used()).toBe(1);
    // The same campaign accepted this month: its 999 queued recipients and its sent one are this month's.
    await em.nativeUpdate(MessagingCampaign, { id: campaignId }, { createdAt: now });
    await em.nativeUpdate(MessagingMessage, { idempotencyKey: recipients[0]!.id }, { allowanceAt: now });
    expect(await used()).toBe(1001);
    const res = await send({ to: '447700900123', type: 'text', text: 'over' }, w.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_MESSAGES']);
  });

  it('a revoked token → 409 INTEGRATION_REAUTH_REQUIRED, the connection marked; reconnecting the channel keeps the others', async () => {
    const w = await create();
    await connectAll(w);
    wa.revoke();
    try {
      const res = await send({ to: '447700900123', type: 'text', text: 'hi' }, w.liveKey);
      expect([res.statusCode, res.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
      expect(res.json().message).toMatch(/Session has expired/);
      expect(res.json().message).not.toContain(wa.accessToken);
      const row = await allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: w.workspaceId });
      expect(row.status).toBe('reauth_required');
      const next = await inject('GET', `${BASE}/channels`, w.liveKey);
      expect([next.statusCode, next.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
    } finally {
      (wa as unknown as { revoked: boolean }).revoked = false;
    }
    expect((await connectWhatsApp(w)).json).toMatchObject({ status: 'connected', channels: ['email', 'primary_chat', 'sms'] });
    expect((await send({ to: '447700900123', channel: 'sms', type: 'text', text: 'back' }, w.liveKey)).statusCode).toBe(201);
  });
});
