import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { newId } from '#libs/core';
import { monthStart } from '#libs/workspaces';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { MessagingCampaign, MessagingMessage } from '#libs/messaging';
import { Render } from '#libs/renders';
import { startDeepgramFake, wordErrorRate, type DeepgramFake } from '#testing/captions';
import { SmtpFake, TwilioFake, UNDELIVERABLE_NUMBER, WhatsAppFake } from '#testing/messaging';
import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { FAKE_VOICES, startElevenLabsFake, type ElevenLabsFake } from '#testing/voice';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, userSession, type TestApi } from './harness.js';
import { publishedCardTemplate, until } from './render-helpers.js';

// Issue 28 "A test key cannot touch live mode" and "A test key never reaches a real provider";
// docs/decisions.md "Test mode (issue 28): the rule" and "Test mode (issue 28): providers, messaging,
// workflows"; contract §5.1 (keys belong to the workspace, pk_test_ keys), §4.3 and §4.5 (the captions,
// voice, messaging and workspace-suite rows), §7 (403 LIVE_MODE_REQUIRED, 402 LIMIT_MESSAGES), §8.

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string; testKey: string };
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const MSG = '/v1/integrations/messaging-provider';
const WF = '/v1/workflows';
/** A public address as an IP literal: checked, never connected to (the provider would fetch it). */
const IMG = 'https://93.184.216.34/banners/spring.jpg';
/** The id shapes of the real providers: WhatsApp's wamid, Twilio's message SID, an RFC 5322 Message-ID. */
const WAMID = /^wamid\.[A-Za-z0-9+/=_-]{20,}$/;
const TWILIO_SID = /^SM[0-9a-f]{32}$/;
const MESSAGE_ID = /^<[^<>@\s]+@shop\.test>$/;
const SCRIPT = 'The quick brown fox jumps over the lazy dog. Please call me tomorrow morning. We will meet at the station at seven.';

describe('test mode never reaches a provider, and a test key cannot change live records (issue 28)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let wa: WhatsAppFake;
  let twilio: TwilioFake;
  let smtp: SmtpFake;
  let google: GoogleFake;
  let eleven: ElevenLabsFake;
  let deepgram: DeepgramFake;
  let ws: Ws;
  let templateId: string;

  beforeAll(async () => {
    [wa, twilio, smtp, google, eleven, deepgram] = await Promise.all([
      new WhatsAppFake().start(), new TwilioFake().start(), new SmtpFake().start(), startGoogleFake(), startElevenLabsFake(), startDeepgramFake(),
    ]);
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, MESSAGING_RETRY_DELAYS_MS: '10,10' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = await create('pro');
    templateId = await publishedTemplate(ws);
  }, 120_000);
  afterAll(async () => {
    await orm.close(true);
    await worker.close();
    await api.close();
    await Promise.all([wa.close(), twilio.close(), smtp.close(), google.close(), eleven.close(), deepgram.close()]);
  });

  const connect = async (w: Ws, provider: string, ...flags: string[]) =>
    expect((await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', provider, ...flags)).code).toBe(0);
  /** A workspace with every account connected (`messagingOnly`: WhatsApp and Twilio, each CLI call being a process). */
  async function create(plan: string, messagingOnly = false): Promise<Ws> {
    const w = (await api.cli('workspace:create', '--name', 'Test mode', '--plan', plan)).json as Ws;
    await connect(w, 'messaging-provider', '--channel', 'primary_chat', '--access-token', wa.accessToken, '--phone-number-id', wa.phoneNumberId, '--waba-id', wa.wabaId, '--base-url', wa.baseUrl);
    await connect(w, 'messaging-provider', '--channel', 'sms', '--account-sid', twilio.accountSid, '--auth-token', twilio.authToken, '--from', twilio.from, '--base-url', twilio.baseUrl);
    if (messagingOnly) return w;
    await connect(w, 'messaging-provider', '--channel', 'email', '--smtp-host', '127.0.0.1', '--smtp-port', String(smtp.port), '--smtp-secure', 'false',
      '--smtp-user', smtp.user, '--smtp-password', smtp.password, '--from', 'News <news@shop.test>');
    await connect(w, 'workspace-suite', '--access-token', google.accessToken, '--refresh-token', google.refreshToken, '--expires-at', new Date(Date.now() + 3600_000).toISOString(), '--base-url', google.baseUrl);
    await connect(w, 'voice-provider', '--api-key', eleven.apiKey, '--base-url', eleven.baseUrl);
    await connect(w, 'speech-alpha', '--api-key', deepgram.apiKey, '--base-url', deepgram.baseUrl);
    return w;
  }
  const inject = (method: Method, url: string, key: string, payload?: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key, ...headers }, ...(payload !== undefined ? { payload: payload as Json } : {}) });
  const answer = (res: { statusCode: number; json(): unknown }) => {
    const body = res.json() as { code?: string; errors?: Record<string, string[]> };
    return [res.statusCode, body.code, Object.keys(body.errors ?? {}).sort()];
  };
  const publishedTemplate = (w: Ws) => publishedCardTemplate(api, w.liveKey);
  /** What reached the providers: every request but WhatsApp's template reads (the checks read them in both modes). */
  const providerWrites = () => ({
    whatsapp: wa.calls.filter((c) => c.method !== 'GET').length,
    twilio: twilio.calls.length,
    smtp: smtp.connections,
    google: google.apiCalls.filter((c) => c.method !== 'GET').length,
    elevenlabs: eleven.requests.length,
    deepgram: deepgram.requests.length,
  });
  const settledAsset = (key: string, id: string) => until(async () => {
    const a = (await inject('GET', `/v1/assets/${id}`, key)).json().data as Json;
    return a.status === 'ready' || a.status === 'failed' ? a : undefined;
  }, `asset ${id}`, 60_000);
  const settledTranscription = (key: string, id: string) => until(async () => {
    const t = (await inject('GET', `/v1/transcriptions/${id}`, key)).json().data as Json;
    return t.status === 'done' || t.status === 'failed' ? t : undefined;
  }, `transcription ${id}`, 120_000);

  it('a test-mode message is checked and answered as live mode answers it (status, id shapes), marked simulated, and nothing reaches WhatsApp, Twilio or SMTP', async () => {
    const before = providerWrites();
    const sends: [Json, RegExp][] = [
      [{ to: '+44 7700 900123', type: 'text', text: 'Hello' }, WAMID],
      [{ to: '+44 7700 900124', templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, variables: { 1: 'Ada', 2: 'SPRING20' } }, WAMID],
      [{ to: '+44 7700 900125', channel: 'sms', type: 'text', text: 'Hello' }, TWILIO_SID],
      [{ to: 'ada@example.com', channel: 'email', type: 'text', subject: 'Hi', text: 'Hello' }, MESSAGE_ID],
    ];
    for (const [body, shape] of sends) {
      const res = await inject('POST', `${MSG}/messages`, ws.testKey, body);
      expect([res.statusCode, res.json().code]).toEqual([201, undefined]);
      expect(res.json().data).toMatchObject({ status: 'sent', mode: 'test', simulated: true, providerMessageId: expect.stringMatching(shape), sentAt: expect.any(String) });
    }
    // Nothing was sent: no message to WhatsApp, no request to Twilio, no connection to the SMTP server.
    expect(providerWrites()).toEqual(before);
    expect(wa.sent).toHaveLength(0);
    expect(smtp.received).toHaveLength(0);

    // The same checks as live mode, the same answers (only the template read reaches WhatsApp, in both modes).
    const bad: Json[] = [
      { to: '12345', type: 'text', text: 'Hello' },
      { to: '+44 7700 900123', templateName: 'nope', variables: {} },
      { to: '+44 7700 900123', templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, variables: { 1: 'Ada' } },
      { to: '+44 7700 900123', channel: 'sms', type: 'video', mediaUrl: 'https://93.184.216.34/a.mp4' },
      { to: 'ada@example.com', channel: 'email', type: 'text', text: 'no subject' },
    ];
    for (const body of bad) {
      const [live, test] = [await inject('POST', `${MSG}/messages`, ws.liveKey, body), await inject('POST', `${MSG}/messages`, ws.testKey, body)];
      expect(answer(test)).toEqual(answer(live));
      expect(test.statusCode).toBe(422);
    }
    // Idempotency-Key: the same message again, sent once.
    const keyed = await inject('POST', `${MSG}/messages`, ws.testKey, { to: '+44 7700 900126', type: 'text', text: 'Once' }, { 'idempotency-key': 'tm-once' });
    const again = await inject('POST', `${MSG}/messages`, ws.testKey, { to: '+44 7700 900126', type: 'text', text: 'Once' }, { 'idempotency-key': 'tm-once' });
    expect([keyed.statusCode, again.statusCode, again.json().data.id]).toEqual([201, 200, keyed.json().data.id]);
    // A simulated message reached no one: it adds nobody to the contacts.
    const contacts = (await inject('GET', `${MSG}/contacts?search=4477009001`, ws.liveKey)).json().data as { total: number };
    expect(contacts.total).toBe(0);
    expect(providerWrites()).toEqual(before);

    // Live mode, for contrast: the provider is called.
    const live = await inject('POST', `${MSG}/messages`, ws.liveKey, { to: '+44 7700 900127', channel: 'sms', type: 'text', text: 'Hello' });
    expect(live.json().data).toMatchObject({ status: 'sent', mode: 'live', simulated: false });
    expect(providerWrites().twilio).toBe(before.twilio + 1);
  });

  it('a test-mode campaign is checked like a live one and progresses through the same statuses to completed, every recipient simulated: no message reaches WhatsApp', async () => {
    const before = providerWrites();
    const body = { templateName: 'spring_sale', languageCode: 'en_US', mediaUrl: IMG, commonVariables: { 1: 'Ada', 2: 'SPRING20' }, rateLimitPerSecond: 80,
      recipients: [{ to: '+44 7700 900201' }, { to: '+44 7700 900202', variables: { 1: 'Bo' } }, { to: `+${UNDELIVERABLE_NUMBER}` }] };
    const bad = { ...body, recipients: [{ to: '+44 7700 900201' }, { to: 'nope' }] };
    expect(answer(await inject('POST', `${MSG}/campaigns`, ws.testKey, bad))).toEqual(answer(await inject('POST', `${MSG}/campaigns`, ws.liveKey, bad)));
    const res = await inject('POST', `${MSG}/campaigns`, ws.testKey, body);
    expect(res.statusCode).toBe(202);
    expect(res.json().data).toMatchObject({ status: 'sending', total: 3, mode: 'test', simulated: true });
    const id = res.json().data.id as string;
    const done = await until(async () => {
      const c = (await inject('GET', `${MSG}/campaigns/${id}`, ws.testKey)).json().data as Json;
      return c.status === 'completed' && c;
    }, 'the test campaign to complete', 60_000);
    expect(done).toMatchObject({ status: 'completed', mode: 'test', simulated: true, progress: { sent: 3, queued: 0, sending: 0, failed: 0 } });
    const recipients = (await inject('GET', `${MSG}/campaigns/${id}/recipients`, ws.testKey)).json().data as Json[];
    for (const r of recipients) expect(r).toMatchObject({ status: 'sent', providerMessageId: expect.stringMatching(WAMID), messageId: expect.stringMatching(/^msg_/) });
    const stored = await forWorkspace(orm, ws.workspaceId).find(MessagingMessage, { idempotencyKey: { $in: recipients.map((r) => r.id as string) } });
    expect(stored.map((m) => m.mode)).toEqual(['test', 'test', 'test']);
    expect(providerWrites()).toEqual(before);
    expect(wa.sent).toHaveLength(0);
  }, 90_000);

  it('a test-mode workflow run renders in test mode and simulates its write-back, message and upload: nothing is written to Google or sent to WhatsApp', async () => {
    const spreadsheetId = google.seed(`People ${newId('workflow')}`, [{ title: 'Contacts', rows: [['Name', 'Phone', 'Code', 'Link'], ['Ada', '+44 7700 900301', 'A1', ''], ['Bo', '+44 7700 900302', 'B2', '']] }]);
    const definition = {
      name: 'Spring cards', source: { type: 'sheet', spreadsheetId, tab: 'Contacts' }, templateId, mapping: { NAME: 'Name' },
      steps: [
        { type: 'writeBack', column: 'Link' },
        { type: 'message', channel: 'primary_chat', to: 'Phone', templateName: 'spring_sale', languageCode: 'en_US', variables: { 1: 'Name', 2: 'Code' } },
        { type: 'upload', folderId: null },
      ],
    };
    const defined = await inject('POST', WF, ws.testKey, definition);
    expect([defined.statusCode, defined.json().data.mode]).toEqual([201, 'test']);
    const id = defined.json().data.id as string;
    const before = providerWrites();
    const started = await inject('POST', `${WF}/${id}/runs`, ws.testKey);
    expect([started.statusCode, started.json().data.mode]).toEqual([202, 'test']);
    const runId = started.json().data.id as string;
    const run = await until(async () => {
      const r = (await inject('GET', `${WF}/${id}/runs/${runId}`, ws.testKey)).json().data as Json;
      return r.status === 'completed' && r;
    }, 'the test run to settle', 90_000);
    expect(run).toMatchObject({ status: 'completed', mode: 'test', progress: { done: 2, failed: 0 } });
    const rows = (await inject('GET', `${WF}/${id}/runs/${runId}/rows`, ws.testKey)).json().data as Json[];
    for (const [i, row] of rows.entries()) {
      expect(row.steps).toEqual([
        { type: 'writeBack', status: 'done', result: { range: expect.stringMatching(new RegExp(`^'?Contacts'?!D${i + 2}$`)), simulated: 'true' } },
        { type: 'message', status: 'done', result: { messageId: expect.stringMatching(/^msg_/), status: 'sent', simulated: 'true' } },
        { type: 'upload', status: 'done', result: { fileId: expect.stringMatching(/^[\w-]{33}$/), name: `${row.renderId as string}.png`, simulated: 'true' } },
      ]);
      const render = await forWorkspace(orm, ws.workspaceId).findOneOrFail(Render, { id: row.renderId as string });
      expect([render.mode, render.status]).toEqual(['test', 'done']);
    }
    // Nothing written into the sheet (the Link cells are as they were), uploaded to Drive or sent.
    expect(google.grid(spreadsheetId, 'Contacts').slice(1).map((r) => r[3])).toEqual(['', '']);
    expect(providerWrites()).toEqual(before);
    expect(wa.sent).toHaveLength(0);
  }, 120_000);

  it('§5.1 a test key cannot change, delete, cancel or rerun a live workflow or run (403 LIVE_MODE_REQUIRED, nothing changed); a live key can; a test key runs a live workflow in test mode', async () => {
    const body = { name: 'Live flow', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [] };
    const live = (await inject('POST', WF, ws.liveKey, body)).json().data as Json;
    expect(live.mode).toBe('live');
    const started = await inject('POST', `${WF}/${live.id as string}/runs`, ws.liveKey, { rows: [{ Name: 'Ada' }] });
    const liveRun = started.json().data as Json;
    const path = `${WF}/${live.id as string}`;
    const runPath = `${path}/runs/${liveRun.id as string}`;
    // While queued or running and once settled: the mode decides before the status.
    for (const [method, url, payload] of [['PATCH', path, { name: 'Hijacked' }], ['DELETE', path, undefined], ['POST', `${runPath}/cancel`, undefined]] as const) {
      const res = await inject(method, url, ws.testKey, payload);
      expect([method, url, res.statusCode, res.json().code]).toEqual([method, url, 403, 'LIVE_MODE_REQUIRED']);
    }
    const settled = await until(async () => {
      const r = (await inject('GET', runPath, ws.liveKey)).json().data as Json;
      return r.status === 'completed' && r;
    }, 'the live run', 60_000);
    expect(settled).toMatchObject({ cancelRequested: false, round: 1, progress: { done: 1 } });
    for (const [method, url] of [['POST', `${runPath}/rerun`], ['POST', `${runPath}/cancel`], ['DELETE', path]] as const) {
      const res = await inject(method, url, ws.testKey);
      expect([method, url, res.statusCode, res.json().code]).toEqual([method, url, 403, 'LIVE_MODE_REQUIRED']);
    }
    const still = (await inject('GET', path, ws.testKey)).json().data as Json;
    expect([still.name, still.updatedAt]).toEqual(['Live flow', live.updatedAt]);
    expect((await inject('GET', runPath, ws.testKey)).json().data).toMatchObject({ round: 1, status: 'completed', cancelRequested: false });
    // Unknown ids stay 404 for a test key.
    expect(answer(await inject('PATCH', `${WF}/wfl_nope`, ws.testKey, { name: 'x' })).slice(0, 2)).toEqual([404, 'WORKFLOW_NOT_FOUND']);
    expect(answer(await inject('POST', `${path}/runs/wfr_nope/cancel`, ws.testKey)).slice(0, 2)).toEqual([404, 'WORKFLOW_RUN_NOT_FOUND']);
    // A test key may start a run of a live workflow: the run is its own, in test mode.
    const testRun = await inject('POST', `${path}/runs`, ws.testKey, { rows: [{ Name: 'Bo' }] });
    expect([testRun.statusCode, testRun.json().data.mode]).toEqual([202, 'test']);
    // A dashboard session in test mode (X-Service-Mode: test) is a test caller; the owner's live session keeps full rights.
    const session = await userSession(api, ws.workspaceId, '+447700900999', 'owner');
    const asSession = (mode?: string) => ({ authorization: `Bearer ${session}`, 'x-service-org': ws.workspaceId, ...(mode ? { 'x-service-mode': mode } : {}) });
    const testSession = await api.app.inject({ method: 'PATCH', url: `/api${path}`, headers: asSession('test'), payload: { name: 'Hijacked' } });
    expect([testSession.statusCode, testSession.json().code]).toEqual([403, 'LIVE_MODE_REQUIRED']);
    const liveSession = await api.app.inject({ method: 'PATCH', url: `/api${path}`, headers: asSession(), payload: { name: 'By the owner' } });
    expect([liveSession.statusCode, liveSession.json().data.name]).toEqual([200, 'By the owner']);
    // Live keys keep full rights.
    expect((await inject('PATCH', path, ws.liveKey, { name: 'Renamed' })).statusCode).toBe(200);
    expect((await inject('POST', `${runPath}/rerun`, ws.liveKey)).statusCode).toBe(202);
    await until(async () => ((await inject('GET', `${path}/runs?status=queued,running`, ws.liveKey)).json().data as Json[]).length === 0, 'runs to settle', 60_000);
    expect((await inject('DELETE', path, ws.liveKey)).statusCode).toBe(200);
    // A test key's own workflow is its to change and delete.
    const own = (await inject('POST', WF, ws.testKey, body)).json().data as Json;
    expect((await inject('PATCH', `${WF}/${own.id as string}`, ws.testKey, { name: 'Mine' })).json().data).toMatchObject({ name: 'Mine', mode: 'test' });
    expect((await inject('DELETE', `${WF}/${own.id as string}`, ws.testKey)).statusCode).toBe(200);
  }, 120_000);

  it('a test key cannot write into the connected Google account (403 LIVE_MODE_REQUIRED, no call made); it may still read it', async () => {
    const spreadsheetId = google.seed('Ledger', [{ title: 'Sheet1', rows: [['A'], ['1']] }]);
    const before = providerWrites();
    const writes: [string, Json][] = [
      [`/v1/integrations/workspace-suite/sheets/spreadsheets/${spreadsheetId}/values`, { range: 'Sheet1!A3', values: [['2']] }],
      ['/v1/integrations/workspace-suite/sheets/spreadsheets', { title: 'New' }],
      ['/v1/integrations/workspace-suite/drive/files', { url: IMG }],
      ['/v1/integrations/workspace-suite/drive/folders', { name: 'Folder' }],
    ];
    for (const [url, body] of writes) {
      const res = await inject('POST', url, ws.testKey, body);
      expect([url, res.statusCode, res.json().code]).toEqual([url, 403, 'LIVE_MODE_REQUIRED']);
    }
    expect(providerWrites()).toEqual(before);
    expect(google.grid(spreadsheetId, 'Sheet1')).toEqual([['A'], ['1']]);
    const read = await inject('GET', `/v1/integrations/workspace-suite/sheets/spreadsheets/${spreadsheetId}/values?range=Sheet1&as=values`, ws.testKey);
    expect(read.statusCode).toBe(200);
    const live = await inject('POST', writes[0]![0], ws.liveKey, writes[0]![1]);
    expect([live.statusCode, google.grid(spreadsheetId, 'Sheet1')]).toEqual([200, [['A'], ['1'], [2]]]);
  });

  it('voice and captions in test mode use the offline engines (espeak-ng, pocketsphinx): no call to ElevenLabs or the speech provider; a language the offline engine cannot read is 422 naming the live-only provider', async () => {
    const before = providerWrites();
    // An ElevenLabs voice id: espeak-ng's `en-us+klatt2` voice stands in for it.
    const spoken = await inject('POST', '/v1/integrations/voice-provider/speech', ws.testKey, { text: SCRIPT, voiceId: FAKE_VOICES[0]!.voice_id });
    expect(spoken.statusCode).toBe(201);
    const asset = await settledAsset(ws.testKey, spoken.json().data.id as string);
    expect(asset).toMatchObject({ status: 'ready', type: 'audio', mimeType: 'audio/mpeg' });
    expect(asset.durationSec).toBeGreaterThan(2);
    // The same checks: a script over 5,000 characters is refused as in live mode.
    const long = { text: 'a'.repeat(5001), voiceId: FAKE_VOICES[0]!.voice_id };
    expect(answer(await inject('POST', '/v1/integrations/voice-provider/speech', ws.testKey, long))).toEqual(answer(await inject('POST', '/v1/integrations/voice-provider/speech', ws.liveKey, long)));

    deepgram.say('words only the provider would say');
    const started = await inject('POST', '/v1/captions', ws.testKey, { assetId: asset.id, provider: 'speech-alpha' });
    expect(started.statusCode).toBe(202);
    const t = await settledTranscription(ws.testKey, started.json().data.id as string);
    expect(t).toMatchObject({ status: 'done', provider: 'speech-alpha', fromCache: false });
    expect(wordErrorRate(SCRIPT, (t.text as string | null) ?? '')).toBeLessThan(0.5);
    expect(providerWrites()).toEqual(before);

    // pocketsphinx reads en-US only: another language is refused, naming the provider that reads it in live mode.
    const french = await inject('POST', '/v1/captions', ws.testKey, { assetId: asset.id, provider: 'speech-alpha', languageCode: 'fr-FR' });
    expect(answer(french)).toEqual([422, 'VALIDATION_FAILED', ['provider']]);
    expect(french.json().message).toMatch(/test mode.*speech-alpha/i);
    expect(providerWrites()).toEqual(before);

    // Live mode, for contrast: the same recording goes to the provider (the test transcription's words are not its cache).
    const live = await inject('POST', '/v1/captions', ws.liveKey, { assetId: asset.id, provider: 'speech-alpha' });
    const lt = await settledTranscription(ws.liveKey, live.json().data.id as string);
    expect(lt).toMatchObject({ status: 'done', text: 'words only the provider would say' });
    expect(providerWrites().deepgram).toBeGreaterThan(before.deepgram);
  }, 180_000);

  describe('§8 the monthly message allowance is one atomic step (issue 28 "Stored secrets and limits")', () => {
    const LIMIT = 1_000; // starter
    /** Messages already sent this month, as rows (live, the database default). */
    const seed = async (w: Ws, n: number) => {
      const at = new Date(Math.max(monthStart().getTime(), Date.now() - 60_000));
      const rows = Array.from({ length: n }, (_, i) => ({
        id: newId('message'), workspaceId: w.workspaceId, channel: 'sms', accountId: twilio.from, recipient: `4477009${String(i).padStart(5, '0')}`, type: 'text',
        status: 'sent' as const, idempotencyKey: null, createdAt: at, allowanceAt: at,
      }));
      const em = allWorkspaces(orm).fork();
      for (let i = 0; i < rows.length; i += 200) await em.insertMany(MessagingMessage, rows.slice(i, i + 200) as never);
    };
    const usage = async (key: string) => ((await inject('GET', `${MSG}/usage`, key)).json().data as { messages: { used: number } }).messages.used;
    const sms = (key: string, i: number) => inject('POST', `${MSG}/messages`, key, { to: `+44 7700 95${String(i).padStart(4, '0')}`, channel: 'sms', type: 'text', text: 'Hi' });

    it('8 parallel sends at the last 3 units: exactly 3 pass, 5 are 402 LIMIT_MESSAGES; test-mode messages have their own allowance', async () => {
      const w = await create('starter', true);
      await seed(w, LIMIT - 3);
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => sms(w.liveKey, i)));
      const codes = answers.map((r) => `${r.statusCode} ${r.json().code ?? ''}`.trim()).sort();
      expect(codes).toEqual([...Array(3).fill('201'), ...Array(5).fill('402 LIMIT_MESSAGES')]);
      expect(await usage(w.liveKey)).toBe(LIMIT);
      expect(await allWorkspaces(orm).fork().count(MessagingMessage, { workspaceId: w.workspaceId })).toBe(LIMIT);
      // Test mode spends none of live mode's allowance and is not refused by it.
      expect((await sms(w.testKey, 99)).statusCode).toBe(201);
      expect([await usage(w.testKey), await usage(w.liveKey)]).toEqual([1, LIMIT]);
    });

    it('a campaign reserves its recipients up front: parallel single sends cannot take their units; a failed recipient gives its unit back', async () => {
      const w = await create('starter', true);
      await seed(w, LIMIT - 18);
      // The undeliverable one last: runners claim among the first 8 queued, so it fails (and gives its unit back) only after 8 were sent, 4 s in.
      const recipients = [...Array.from({ length: 15 }, (_, i) => ({ to: `+44 7700 96${String(i).padStart(4, '0')}` })), { to: `+${UNDELIVERABLE_NUMBER}` }];
      const campaign = await inject('POST', `${MSG}/campaigns`, w.liveKey, { templateName: 'thanks_note', languageCode: 'en_US', commonVariables: { 1: 'Ada' }, rateLimitPerSecond: 2, recipients });
      expect(campaign.statusCode).toBe(202);
      // 982 sent + 16 reserved: 2 units left for single sends, whatever the campaign has sent so far.
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => sms(w.liveKey, i)));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 201, 402, 402, 402]);
      const id = campaign.json().data.id as string;
      // Read from the database: the starter plan's 60 requests a minute are not spent on polling.
      await until(async () => (await forWorkspace(orm, w.workspaceId).findOneOrFail(MessagingCampaign, { id })).status === 'completed', 'the campaign', 60_000);
      expect((await inject('GET', `${MSG}/campaigns/${id}`, w.liveKey)).json().data).toMatchObject({ status: 'completed', progress: { sent: 15, failed: 1 } });
      // The undeliverable recipient's unit came back: one more send fits, then none.
      expect(await usage(w.liveKey)).toBe(LIMIT - 1);
      expect((await sms(w.liveKey, 50)).statusCode).toBe(201);
      expect(answer(await sms(w.liveKey, 51)).slice(0, 2)).toEqual([402, 'LIMIT_MESSAGES']);
    }, 90_000);
  });
});
