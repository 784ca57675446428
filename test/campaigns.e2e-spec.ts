import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { CampaignRecipient, MessagingCampaign, MessagingMessage } from '#libs/messaging';
import { TwilioFake, UNDELIVERABLE_NUMBER, WhatsAppFake } from '#testing/messaging';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { secondApi, startApi, type TestApi } from './harness.js';
import { until as poll } from './render-helpers.js';

// Contract §4.5 ("Broadcast (body)": templateName, recipients up to 5,000 each with to / name / variables
// over commonVariables, name with a default holding the date, languageCode, renderId, mediaUrl,
// rateLimitPerSecond default 3), §8 (up to 5,000 recipients per broadcast), §7 (the 422 by path, 404,
// 409, 402), §5 (integrations:write / integrations:read); docs/messaging.md "Campaigns" and "Status
// callbacks"; docs/decisions.md "Messaging campaigns". Campaigns are sent by real worker processes
// (`node dist/apps/worker/src/main.js`) to loopback fakes of the WhatsApp Cloud API and Twilio.

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string };
const BASE = '/v1/integrations/messaging-provider';
/** A public address as an IP literal: checked, never connected to (the fake only receives the link). */
const IMG = 'https://93.184.216.34/banners/spring.jpg';
/** The provider's failures hit message sends only (the template list stays readable). */
const MESSAGES = /\/messages$/;
/** The per-attempt limit and the retry waits the API and the workers run with here. */
// A provider attempt's limit: the SIGKILL test holds four answers while a worker is killed and reaped,
// which takes over a second on a loaded machine; held past the limit they would be retried (sent twice).
const ENV = { MESSAGING_TIMEOUT_MS: '2500', MESSAGING_RETRY_DELAYS_MS: '100,200', CAMPAIGN_CONCURRENCY: '2' };

interface WorkerChild { proc: ChildProcess; output: string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }

/** The largest number of `times` (ms) inside any one-second window [t, t + 1000). */
function busiestSecond(times: number[]): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= 1000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

const phone = (n: number) => `+44 7700 ${String(900000 + n).padStart(6, '0')}`;
const digits = (n: number) => `447700${String(900000 + n).padStart(6, '0')}`;

describe('messaging campaigns and status callbacks (§4.5 Broadcast)', () => {
  let api: TestApi;
  let orm: Orm;
  let wa: WhatsAppFake;
  let twilio: TwilioFake;
  let ws: Ws;
  let apiUrl: string;
  const appSecret = randomBytes(16).toString('hex');
  const verifyToken = `verify-${randomBytes(6).toString('hex')}`;
  const workers: WorkerChild[] = [];
  let shared: WorkerChild;

  function startWorker(): WorkerChild {
    const proc = spawn(process.execPath, ['dist/apps/worker/src/main.js'], { cwd: process.cwd(), env: { ...process.env, ...api.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const w: WorkerChild = { proc, output: '', exited: new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal }))) };
    const keep = (c: Buffer) => { w.output = (w.output + c.toString()).slice(-8000); };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    workers.push(w);
    return w;
  }

  const until = <T>(what: string, probe: () => T | false | undefined | Promise<T | false | undefined>, ms: number, every = 100) =>
    poll(probe, () => `${what}; workers said: ${workers.map((w) => w.output.slice(-1500)).join(' | ')}`, ms, every);

  const started = (w: WorkerChild) => until('a worker to start', () => w.output.includes('Worker consuming queues') || w.proc.exitCode !== null, 30_000);

  async function stop(w: WorkerChild) {
    if (w.proc.exitCode !== null || w.proc.signalCode !== null) return;
    w.proc.kill('SIGTERM');
    const t = setTimeout(() => w.proc.kill('SIGKILL'), 10_000);
    await w.exited;
    clearTimeout(t);
  }

  const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Campaigns', '--plan', plan)).json as Ws;
  const connect = (w: Ws, ...flags: string[]) => api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'messaging-provider', ...flags);
  const connectWhatsApp = (w: Ws) => connect(w, '--channel', 'primary_chat', '--access-token', wa.accessToken, '--phone-number-id', wa.phoneNumberId, '--waba-id', wa.wabaId,
    '--base-url', wa.baseUrl, '--app-secret', appSecret, '--verify-token', verifyToken);
  const inject = (method: 'GET' | 'POST', url: string, key: string | null, payload?: Json | string, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers }, ...(payload !== undefined ? { payload } : {}) });
  const broadcast = (body: Json, key = ws.liveKey, headers: Record<string, string> = {}) => inject('POST', `${BASE}/campaigns`, key, body, headers);
  const errorsOf = (res: { json(): unknown }) => (res.json() as { errors?: Record<string, string[]> }).errors ?? {};
  const campaignsOf = (w: Ws) => allWorkspaces(orm).fork().count(MessagingCampaign, { workspaceId: w.workspaceId });
  /** WhatsApp message bodies the fake received for these numbers. */
  const sentTo = (numbers: string[]) => wa.sent.filter((m) => numbers.includes(String(m.to)));
  const callsTo = (numbers: string[]) => wa.calls.filter((c) => c.method === 'POST' && numbers.some((n) => c.body.includes(`"to":"${n}"`)));
  const settled = (id: string, key = ws.liveKey, ms = 30_000) => until(`campaign ${id} to complete`, async () => {
    const data = (await inject('GET', `${BASE}/campaigns/${id}`, key)).json().data as Json;
    return data.status === 'completed' ? data : false;
  }, ms, 200);
  const recipients = async (id: string, query = '') => (await inject('GET', `${BASE}/campaigns/${id}/recipients?limit=100${query}`, ws.liveKey)).json().data as Json[];
  const whatsAppHook = (w: Ws) => `${apiUrl}/api${BASE}/status/whatsapp/${w.workspaceId}`;

  beforeAll(async () => {
    [wa, twilio] = await Promise.all([new WhatsAppFake().start(), new TwilioFake().start()]);
    api = await startApi(ENV);
    await api.app.listen(0, '127.0.0.1');
    apiUrl = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}`;
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = await create();
    expect((await connectWhatsApp(ws)).json).toMatchObject({ status: 'connected' });
    expect((await connect(ws, '--channel', 'sms', '--account-sid', twilio.accountSid, '--auth-token', twilio.authToken, '--from', twilio.from, '--base-url', twilio.baseUrl)).json).toMatchObject({ status: 'connected' });
    shared = startWorker();
    await started(shared);
    expect(shared.proc.exitCode).toBeNull();
  }, 120_000);

  // A test that failed half-way leaves the fake as it was: each starts from a provider that answers.
  beforeEach(() => wa?.fail(null));

  afterAll(async () => {
    for (const w of workers) await stop(w);
    await orm?.close(true);
    await api?.close();
    await Promise.all([wa?.close(), twilio?.close()]);
  }, 60_000);

  it('Redis lost before the runners are queued: 503 DEPENDENCY_UNAVAILABLE and no campaign left behind (none stuck sending, the key free to retry)', async () => {
    const other = await secondApi(api);
    try {
      await other.get<Queue>(getQueueToken('campaigns')).disconnect();
      const before = await campaignsOf(ws);
      const recipientsBefore = await allWorkspaces(orm).fork().count(CampaignRecipient, { workspaceId: ws.workspaceId });
      const res = await other.inject({
        method: 'POST', url: `/api${BASE}/campaigns`, headers: { 'x-api-key': ws.liveKey, 'idempotency-key': 'outage-1' },
        payload: { templateName: 'thanks_note', recipients: [{ to: phone(4242), variables: { 1: 'x' } }] },
      });
      expect([res.statusCode, res.json().code]).toEqual([503, 'DEPENDENCY_UNAVAILABLE']);
      expect(await campaignsOf(ws)).toBe(before);
      expect(await allWorkspaces(orm).fork().count(CampaignRecipient, { workspaceId: ws.workspaceId })).toBe(recipientsBefore);
    } finally {
      await other.close();
    }
  });

  it('§4.5/§8: 5,001 or 6,000 recipients → 422 on recipients; bad recipients reported by path (recipients[1].to…); nothing stored or sent', async () => {
    const before = wa.sent.length;
    for (const n of [5_001, 6_000]) {
      const res = await broadcast({ templateName: 'thanks_note', recipients: Array.from({ length: n }, (_, i) => ({ to: phone(i), variables: { 1: 'x' } })) });
      expect([n, res.statusCode, res.json().code]).toEqual([n, 422, 'VALIDATION_FAILED']);
      expect(errorsOf(res).recipients?.join(' ')).toMatch(/5000/);
    }
    const bad = await broadcast({
      templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, commonVariables: { 1: 'Ada', 2: 'SPRING20' },
      recipients: [{ to: phone(1) }, { to: '12 34' }, { to: phone(3), variables: { 3: 'extra' } }, { to: phone(4), name: 'Bo', colour: 'red' }, { to: 'not a number' }],
    });
    expect([bad.statusCode, bad.json().code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(Object.keys(errorsOf(bad)).sort()).toEqual(['recipients[3].colour']);
    const wrong = await broadcast({
      templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, commonVariables: { 1: 'Ada', 2: 'SPRING20' },
      recipients: [{ to: phone(1) }, { to: '12 34' }, { to: phone(3), variables: { 3: 'extra' } }, { to: 'not a number' }],
    });
    expect([wrong.statusCode, wrong.json().code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(Object.keys(errorsOf(wrong)).sort()).toEqual(['recipients[1].to', 'recipients[2].variables', 'recipients[3].to']);
    expect(errorsOf(wrong)['recipients[2].variables']!.join(' ')).toMatch(/unknown slot 3/);
    // The campaign's own faults are named once, not per recipient.
    const unknown = await broadcast({ templateName: 'no_such_template', recipients: [{ to: phone(1) }, { to: phone(2) }] });
    expect([unknown.statusCode, Object.keys(errorsOf(unknown))]).toEqual([422, ['templateName']]);
    const noMedia = await broadcast({ templateName: 'spring_sale', languageCode: 'en_US', commonVariables: { 1: 'a', 2: 'b' }, recipients: [{ to: phone(1) }] });
    expect([noMedia.statusCode, Object.keys(errorsOf(noMedia))]).toEqual([422, ['mediaUrl']]);
    const video = await broadcast({ templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: 'https://93.184.216.34/v/clip.mp4', commonVariables: { 1: 'a', 2: 'b' }, recipients: [{ to: phone(1) }] });
    expect([video.statusCode, errorsOf(video).mediaUrl?.join(' ')]).toEqual([422, expect.stringMatching(/video/)]);
    for (const rate of [0, 81, 2.5, '5']) {
      const res = await broadcast({ templateName: 'thanks_note', rateLimitPerSecond: rate, recipients: [{ to: phone(1), variables: { 1: 'a' } }] });
      expect([rate, res.statusCode, Object.keys(errorsOf(res))]).toEqual([rate, 422, ['rateLimitPerSecond']]);
    }
    const none = await broadcast({ templateName: 'thanks_note', recipients: [] });
    expect([none.statusCode, Object.keys(errorsOf(none))]).toEqual([422, ['recipients']]);
    const missing = await broadcast({ recipients: [{ to: phone(1) }] });
    expect([missing.statusCode, Object.keys(errorsOf(missing))]).toEqual([422, ['templateName']]);
    const otherRender = await broadcast({ templateName: 'spring_sale', languageCode: 'en_US', renderId: 'rnd_01JZZZZZZZZZZZZZZZZZZZZZZZ', commonVariables: { 1: 'a', 2: 'b' }, recipients: [{ to: phone(1) }] });
    expect([otherRender.statusCode, otherRender.json().code]).toEqual([404, 'RENDER_NOT_FOUND']);
    expect(await campaignsOf(ws)).toBe(0);
    expect(wa.sent.length).toBe(before);
  });

  it('§7: not connected → 409; the plan\'s allowance → 402 LIMIT_MESSAGES before anything is queued; §5 scopes; another workspace\'s campaign → 404', async () => {
    const other = await create();
    const res = await broadcast({ templateName: 'thanks_note', recipients: [{ to: phone(1), variables: { 1: 'a' } }] }, other.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([409, 'INTEGRATION_NOT_CONNECTED']);
    const starter = await create('starter');
    expect((await connectWhatsApp(starter)).code).toBe(0);
    const over = await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'a' }, recipients: Array.from({ length: 1_001 }, (_, i) => ({ to: phone(i) })) }, starter.liveKey);
    expect([over.statusCode, over.json().code]).toEqual([402, 'LIMIT_MESSAGES']);
    expect(await campaignsOf(starter)).toBe(0);
    const readKey = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'integrations:read')).json.key as string;
    const denied = await broadcast({ templateName: 'thanks_note', recipients: [{ to: phone(1), variables: { 1: 'a' } }] }, readKey);
    expect([denied.statusCode, denied.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    const unknown = await inject('GET', `${BASE}/campaigns/cmp_01JZZZZZZZZZZZZZZZZZZZZZZZ`, ws.liveKey);
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'CAMPAIGN_NOT_FOUND']);
  });

  it('sends every recipient once through the send path (variables over commonVariables, the media header), with progress, a paged recipients list, Idempotency-Key and campaign.completed', async () => {
    const numbers = [10, 11, 12, 13, 14].map(digits);
    const body = {
      templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, commonVariables: { 1: 'friend', 2: 'SPRING20' }, rateLimitPerSecond: 10,
      recipients: [10, 11, 12, 13, 14].map((n, i) => ({ to: phone(n), name: `R${i}`, ...(i === 1 ? { variables: { 1: 'Ada' } } : {}) })),
    };
    const res = await broadcast(body, ws.liveKey, { 'idempotency-key': 'spring-1' });
    expect(res.statusCode).toBe(202);
    const made = res.json().data as Json;
    expect(made).toMatchObject({ id: expect.stringMatching(/^cmp_/), channel: 'primary_chat', templateName: 'spring_sale', total: 5, rateLimitPerSecond: 10, mediaUrl: IMG });
    expect(made.name).toMatch(new RegExp(`^Broadcast ${new Date().toISOString().slice(0, 10)}`));
    const done = await settled(made.id as string);
    expect(done.progress).toEqual({ queued: 0, sending: 0, sent: 5, delivered: 0, read: 0, failed: 0, unknown: 0 });
    expect(done.completedAt).toEqual(expect.any(String));
    const got = sentTo(numbers);
    expect(got.map((m) => m.to).sort()).toEqual(numbers);
    const ada = got.find((m) => m.to === digits(11)) as { template: { components: { type: string; parameters: Json[] }[] } };
    expect(ada.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'image', image: { link: IMG } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'SPRING20' }] },
    ]);
    expect(got.filter((m) => JSON.stringify(m).includes('"friend"'))).toHaveLength(4);
    // Each carries its recipient's id as the reference WhatsApp echoes in status webhooks.
    expect(got.every((m) => String(m.biz_opaque_callback_data).startsWith('rcp_'))).toBe(true);

    const page1 = await inject('GET', `${BASE}/campaigns/${made.id}/recipients?limit=2`, ws.liveKey);
    expect(page1.json().pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect((page1.json().data as Json[]).map((r) => [r.position, r.name, r.status])).toEqual([[0, 'R0', 'sent'], [1, 'R1', 'sent']]);
    expect((page1.json().data as Json[])[0]).toMatchObject({ to: phone(10), providerMessageId: expect.stringMatching(/^wamid\./), messageId: expect.stringMatching(/^msg_/), attempts: 1, errorCode: null });
    expect(await recipients(made.id as string, '&status=failed')).toEqual([]);
    const badQuery = await inject('GET', `${BASE}/campaigns/${made.id}/recipients?status=lost`, ws.liveKey);
    expect([badQuery.statusCode, badQuery.json().code]).toEqual([422, 'INVALID_LIST_QUERY']);

    const again = await broadcast(body, ws.liveKey, { 'idempotency-key': 'spring-1' });
    expect([again.statusCode, (again.json().data as Json).id]).toEqual([200, made.id]);
    await new Promise((r) => setTimeout(r, 500));
    expect(sentTo(numbers)).toHaveLength(5);

    const events = await allWorkspaces(orm).fork().find(OutboxEvent, { workspaceId: ws.workspaceId, type: 'campaign.completed' });
    expect(events.map((e) => (e.data as Json).id)).toEqual([made.id]);
    expect((events[0]!.data as Json).progress).toMatchObject({ sent: 5 });

    const other = await create();
    for (const path of [`campaigns/${made.id}`, `campaigns/${made.id}/recipients`]) {
      const res2 = await inject('GET', `${BASE}/${path}`, other.liveKey);
      expect([path, res2.statusCode, res2.json().code]).toEqual([path, 404, 'CAMPAIGN_NOT_FOUND']);
    }
  });

  it('a provider 429 is retried within the campaign\'s rate; 5xx and a hanging provider end in failed recipients with reasons; a refused number fails alone', async () => {
    // 429 three times, then answers: every recipient sent, the retries counted in the rate.
    const limited = [20, 21, 22, 23, 24, 25].map(digits);
    wa.fail('rate-limit', 3, MESSAGES);
    const a = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, rateLimitPerSecond: 4, recipients: [20, 21, 22, 23, 24, 25].map((n) => ({ to: phone(n) })) })).json().data as Json;
    expect((await settled(a.id as string)).progress).toMatchObject({ sent: 6, failed: 0 });
    const calls = callsTo(limited);
    expect(calls).toHaveLength(9);
    expect(busiestSecond(calls.map((c) => c.at))).toBeLessThanOrEqual(4);
    expect(wa.accepted.filter((m) => limited.includes(m.to)).map((m) => m.to).sort()).toEqual(limited);

    // 5xx on every attempt: 3 attempts each (1 + MESSAGING_RETRY_DELAYS_MS), then failed with the reason.
    wa.fail('server-error', Infinity, MESSAGES);
    const failing = [30, 31].map(digits);
    const b = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, rateLimitPerSecond: 20, recipients: [30, 31].map((n) => ({ to: phone(n) })) })).json().data as Json;
    expect((await settled(b.id as string)).progress).toMatchObject({ sent: 0, failed: 2 });
    expect(callsTo(failing)).toHaveLength(6);
    for (const r of await recipients(b.id as string)) {
      expect(r).toMatchObject({ status: 'failed', errorCode: 'PROVIDER_UNAVAILABLE', attempts: 1, providerMessageId: null });
      expect(r.reason).toMatch(/500/);
    }

    // A provider that never answers: each attempt ends at MESSAGING_TIMEOUT_MS.
    wa.fail('hang', Infinity, MESSAGES);
    const hung = [40].map(digits);
    const t0 = Date.now();
    const c = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, recipients: [{ to: phone(40) }] })).json().data as Json;
    expect((await settled(c.id as string)).progress).toMatchObject({ failed: 1 });
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(callsTo(hung)).toHaveLength(3);
    const [h] = await recipients(c.id as string);
    expect(h).toMatchObject({ status: 'failed', errorCode: 'PROVIDER_UNAVAILABLE' });
    expect(h!.reason).toMatch(/did not finish within 2.5 s/);
    wa.fail(null);

    // WhatsApp refuses one number (131026): that recipient fails with WhatsApp's words; the others are sent.
    const d = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, rateLimitPerSecond: 20, recipients: [{ to: phone(50) }, { to: `+${UNDELIVERABLE_NUMBER}` }, { to: phone(51) }] })).json().data as Json;
    expect((await settled(d.id as string)).progress).toMatchObject({ sent: 2, failed: 1 });
    const [refused] = await recipients(d.id as string, '&status=failed');
    expect(refused).toMatchObject({ position: 1, errorCode: 'MESSAGE_REJECTED' });
    expect(refused!.reason).toMatch(/Undeliverable.*131026/);
    expect(await allWorkspaces(orm).fork().count(MessagingMessage, { workspaceId: ws.workspaceId, recipient: UNDELIVERABLE_NUMBER })).toBe(0);
  }, 60_000);

  it('WhatsApp status webhooks: Meta\'s verification; X-Hub-Signature-256 over the raw body; statuses folded into the message and its campaign recipient, never backwards; a bad signature → 403, nothing recorded', async () => {
    const hook = `${BASE}/status/whatsapp/${ws.workspaceId}`;
    const verify = await inject('GET', `${hook}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444`, null);
    expect([verify.statusCode, verify.headers['content-type'], verify.body]).toEqual([200, expect.stringMatching(/^text\/plain/), '1158201444']);
    const wrongToken = await inject('GET', `${hook}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`, null);
    expect([wrongToken.statusCode, wrongToken.json().code]).toEqual([403, 'INVALID_SIGNATURE']);

    const c = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, rateLimitPerSecond: 20, recipients: [{ to: phone(60) }] })).json().data as Json;
    await settled(c.id as string);
    const [r] = await recipients(c.id as string);
    const wamid = r!.providerMessageId as string;
    const post = (body: Json, signature?: string) => {
      const raw = JSON.stringify(body);
      return inject('POST', hook, null, raw, { 'content-type': 'application/json', 'x-hub-signature-256': signature ?? `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}` });
    };
    const message = () => allWorkspaces(orm).fork().findOneOrFail(MessagingMessage, { providerMessageId: wamid });
    const recipient = () => allWorkspaces(orm).fork().findOneOrFail(CampaignRecipient, { id: r!.id as string });

    const forged = await post(wa.statusBody(wamid, digits(60), 'read'), `sha256=${createHmac('sha256', 'not-the-secret').update('x').digest('hex')}`);
    expect([forged.statusCode, forged.json().code]).toEqual([403, 'INVALID_SIGNATURE']);
    const unsigned = await inject('POST', hook, null, JSON.stringify(wa.statusBody(wamid, digits(60), 'read')), { 'content-type': 'application/json' });
    expect([unsigned.statusCode, unsigned.json().code]).toEqual([403, 'INVALID_SIGNATURE']);
    // The same JSON re-serialised with other whitespace no longer matches: the signature is over the bytes.
    const body = wa.statusBody(wamid, digits(60), 'read');
    const spaced = await inject('POST', hook, null, JSON.stringify(body, null, 2), { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(JSON.stringify(body)).digest('hex')}` });
    expect(spaced.statusCode).toBe(403);
    expect([(await message()).status, (await recipient()).status]).toEqual(['sent', 'sent']);

    const delivered = await post(wa.statusBody(wamid, digits(60), 'delivered'));
    expect([delivered.statusCode, delivered.json().data]).toEqual([200, { received: 1, recorded: 1 }]);
    expect([(await message()).status, (await recipient()).status]).toEqual(['delivered', 'delivered']);
    expect((await post(wa.statusBody(wamid, digits(60), 'read'))).statusCode).toBe(200);
    // Duplicates and late or out-of-order statuses change nothing.
    for (const late of ['read', 'delivered', 'sent']) expect((await post(wa.statusBody(wamid, digits(60), late))).statusCode).toBe(200);
    expect((await post(wa.statusBody(wamid, digits(60), 'failed', undefined, { code: 131047, title: 'Re-engagement message', details: 'More than 24 hours have passed' }))).statusCode).toBe(200);
    expect([(await message()).status, (await recipient()).status]).toEqual(['read', 'read']);
    const progress = ((await inject('GET', `${BASE}/campaigns/${c.id}`, ws.liveKey)).json().data as Json).progress;
    expect(progress).toMatchObject({ read: 1, sent: 0 });

    // A failure status of a message only sent: failed with WhatsApp's reason.
    const d = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, rateLimitPerSecond: 20, recipients: [{ to: phone(61) }] })).json().data as Json;
    await settled(d.id as string);
    const [r2] = await recipients(d.id as string);
    await post(wa.statusBody(r2!.providerMessageId as string, digits(61), 'failed', undefined, { code: 131047, title: 'Re-engagement message', details: 'More than 24 hours have passed' }));
    const [after] = await recipients(d.id as string);
    expect(after).toMatchObject({ status: 'failed', errorCode: 'MESSAGE_FAILED', reason: expect.stringMatching(/Re-engagement message.*131047/) });
    const failedMessage = await allWorkspaces(orm).fork().findOneOrFail(MessagingMessage, { providerMessageId: r2!.providerMessageId as string });
    expect([failedMessage.status, failedMessage.error]).toEqual(['failed', expect.stringMatching(/24 hours/)]);
    // Another workspace's hook knows nothing of this message (and its secret is not this one).
    const other = await create();
    const raw = JSON.stringify(wa.statusBody(wamid, digits(60), 'read'));
    const cross = await inject('POST', `${BASE}/status/whatsapp/${other.workspaceId}`, null, raw, { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}` });
    expect([cross.statusCode, cross.json().code]).toEqual([403, 'INVALID_SIGNATURE']);

    // Over real HTTP, as Meta posts them: each accepted message's sent, delivered and read statuses.
    wa.statusWebhook = { url: whatsAppHook(ws), appSecret, statuses: ['sent', 'delivered', 'read'] };
    const answered = wa.webhookAnswers.length;
    try {
      const e = (await broadcast({ templateName: 'thanks_note', commonVariables: { 1: 'x' }, rateLimitPerSecond: 20, recipients: [62, 63, 64].map((n) => ({ to: phone(n) })) })).json().data as Json;
      await settled(e.id as string);
      await until('the three recipients to be read', async () => (await recipients(e.id as string, '&status=read')).length === 3, 10_000);
      // The fake notes an answer once it has arrived, which can be just after the status is stored.
      await until('the nine status posts to be answered', () => wa.webhookAnswers.length - answered >= 9, 10_000);
      expect(wa.webhookAnswers.slice(answered)).toEqual(Array(9).fill(200));
    } finally {
      wa.statusWebhook = null;
    }
  });

  it('Twilio status callbacks: StatusCallback asked for on each sms; X-Twilio-Signature over the URL and the sorted form; folded forwards only; a bad signature → 403', async () => {
    const sent = await inject('POST', `${BASE}/messages`, ws.liveKey, { to: phone(70), channel: 'sms', type: 'text', text: 'Your render is ready' });
    expect(sent.statusCode).toBe(201);
    const sid = (sent.json().data as Json).providerMessageId as string;
    const path = `/api${BASE}/status/twilio/${ws.workspaceId}`;
    const url = `${api.config.publicUrl}${path}`;
    expect(twilio.sent.at(-1)!.StatusCallback).toBe(url);
    const sign = (form: Record<string, string>) => createHmac('sha1', twilio.authToken).update(Object.keys(form).sort().reduce((acc, k) => acc + k + form[k], url)).digest('base64');
    const post = (form: Record<string, string>, signature = sign(form)) =>
      api.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, payload: new URLSearchParams(form).toString() });
    const form = (status: string, extra: Record<string, string> = {}) => ({ AccountSid: twilio.accountSid, ApiVersion: '2010-04-01', From: twilio.from, MessageSid: sid, MessageStatus: status, SmsSid: sid, SmsStatus: status, To: `+${digits(70)}`, ...extra });
    const status = async () => (await allWorkspaces(orm).fork().findOneOrFail(MessagingMessage, { providerMessageId: sid })).status;

    const forged = await post(form('delivered'), sign(form('sent')));
    expect([forged.statusCode, forged.json().code]).toEqual([403, 'INVALID_SIGNATURE']);
    expect(await status()).toBe('sent');
    const ok = await post(form('delivered'));
    expect([ok.statusCode, ok.json().data]).toEqual([200, { received: 1, recorded: 1 }]);
    expect(await status()).toBe('delivered');
    expect((await post(form('delivered'))).statusCode).toBe(200);
    expect((await post(form('undelivered', { ErrorCode: '30003' }))).statusCode).toBe(200);
    expect((await post(form('sent'))).statusCode).toBe(200);
    expect(await status()).toBe('delivered');
    // Twilio's intermediate statuses are acknowledged and not recorded.
    expect((await post(form('queued'))).json().data).toEqual({ received: 0, recorded: 0 });
    // A form body anywhere else is still 415.
    const elsewhere = await api.app.inject({ method: 'POST', url: `/api${BASE}/messages`, headers: { 'x-api-key': ws.liveKey, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'to=1' });
    expect([elsewhere.statusCode, elsewhere.json().code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  it('1,000 recipients at 50/s across two workers, one killed (SIGKILL) mid-way: exactly 1,000 messages at the provider, never more than 50 in any second; its in-flight sends not resent', async () => {
    await stop(shared);
    const [a, b] = [startWorker(), startWorker()];
    await Promise.all([started(a), started(b)]);
    const N = 1_000;
    const numbers = Array.from({ length: N }, (_, i) => digits(100_000 + i));
    const mine = new Set(numbers);
    const before = wa.calls.length;
    const t0 = Date.now();
    const res = await broadcast({ templateName: 'thanks_note', rateLimitPerSecond: 50, recipients: numbers.map((n, i) => ({ to: `+${n}`, variables: { 1: `R${i}` } })) });
    expect(res.statusCode).toBe(202);
    const id = (res.json().data as Json).id as string;

    // Mid-way, answers are held until each of the four runners (two per worker: CAMPAIGN_CONCURRENCY) waits
    // on one; no runner is then between claiming and calling. Worker A is killed with its two sends
    // received by the provider but unanswered: their outcome is unknown to us.
    await until('400 messages at the provider', () => wa.calls.length - before >= 400, 30_000, 50);
    wa.hold();
    await until('the four runners to wait on the provider', () => wa.heldCount >= 4, 5_000, 5);
    await new Promise((r) => setTimeout(r, 100));
    expect(wa.heldCount).toBe(4);
    a.proc.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    wa.release();

    const done = await settled(id, ws.liveKey, 60_000);
    const elapsed = (Date.now() - t0) / 1000;
    const calls = wa.calls.slice(before).filter((c) => c.method === 'POST' && mine.has(String((JSON.parse(c.body) as Json).to)));
    expect(calls).toHaveLength(N);
    expect(new Set(calls.map((c) => (JSON.parse(c.body) as Json).to)).size).toBe(N);
    const busiest = busiestSecond(calls.map((c) => c.at));
    expect(busiest).toBeLessThanOrEqual(50);
    // The killed worker's two in-flight recipients are `unknown`, not sent again; the others are sent.
    expect(done.progress).toEqual({ queued: 0, sending: 0, sent: N - 2, delivered: 0, read: 0, failed: 0, unknown: 2 });
    const unknown = (await inject('GET', `${BASE}/campaigns/${id}/recipients?status=unknown`, ws.liveKey)).json().data as Json[];
    expect(unknown.map((r) => r.errorCode)).toEqual(['OUTCOME_UNKNOWN', 'OUTCOME_UNKNOWN']);
    // WhatsApp's `sent` webhooks for them carry the recipient's id (biz_opaque_callback_data): they settle them.
    for (const r of unknown) {
      const got = wa.accepted.filter((m) => m.reference === r.id);
      expect(got).toHaveLength(1);
      const raw = JSON.stringify(wa.statusBody(got[0]!.id, got[0]!.to, 'sent', r.id as string));
      const hook = await inject('POST', `${BASE}/status/whatsapp/${ws.workspaceId}`, null, raw, { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}` });
      expect(hook.json().data).toEqual({ received: 1, recorded: 1 });
    }
    const after = ((await inject('GET', `${BASE}/campaigns/${id}`, ws.liveKey)).json().data as Json).progress;
    expect(after).toMatchObject({ sent: N, unknown: 0 });
    expect(await allWorkspaces(orm).fork().count(MessagingMessage, { workspaceId: ws.workspaceId, recipient: { $in: numbers }, status: 'sent' })).toBe(N);
    expect(b.proc.exitCode).toBeNull();
    const span = (Math.max(...calls.map((c) => c.at)) - Math.min(...calls.map((c) => c.at))) / 1000;
    console.log(`campaign: ${N} messages over ${span.toFixed(1)} s at the provider (${(N / span).toFixed(1)}/s, busiest second ${busiest}); completed ${elapsed.toFixed(1)} s after the request`);
  }, 120_000);
});
