import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { startAssemblyAiFake, startDeepgramFake, startGoogleSpeechFake, type SpeechProviderFake } from '#testing/captions';
import { startElevenLabsFake, type ElevenLabsFake } from '#testing/voice';
import { EngineCensus } from '#libs/app';
import { offlineEngine } from '#libs/integrations';
import { createRedis, RedisKeys } from '#libs/redis';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { SmtpFake, TwilioFake, WhatsAppFake } from '#testing/messaging';
import { freePort, startApi, userSession, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Issue 29 "Connect accounts from the browser": the dashboard's session routes under
// /organization/integrations (decisions.md "Dashboard (issue 29): the team"): the workspace suite by
// authorization code + PKCE through the provider's consent page, the offline engines in one click,
// Disconnect; an owner's only.

type Json = Record<string, unknown>;

describe('connecting accounts from the dashboard (issue 29)', () => {
  let api: TestApi;
  let google: GoogleFake;
  let ws: { workspaceId: string; liveKey: string };
  let owner: Record<string, string>;
  let member: Record<string, string>;
  const PUBLIC = 'http://dashboard.example.test';

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
    api.app.inject({ method, url: `/api${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  /** The consent page answering a program (no text/html): it agrees at once and redirects with code and state. */
  const consent = async (authorizationUrl: string) => {
    const back = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(back.status).toBe(302);
    return new URL(back.headers.get('location')!);
  };

  beforeAll(async () => {
    google = await startGoogleFake();
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, GOOGLE_BASE_URLS: google.baseUrl, PUBLIC_URL: PUBLIC });
    ws = (await api.cli('workspace:create', '--name', 'Connector', '--plan', 'pro')).json as typeof ws;
    owner = { authorization: `Bearer ${await userSession(api, ws.workspaceId, '+4915100029001', 'owner')}`, 'x-service-org': ws.workspaceId };
    member = { authorization: `Bearer ${await userSession(api, ws.workspaceId, '+4915100029002', 'member')}`, 'x-service-org': ws.workspaceId };
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await google?.close();
  });

  it('voice and speech providers by API key: a refused key is 422 with what the provider answered and nothing saved; a good one is checked, saved and tested', async () => {
    const voice: ElevenLabsFake = await startElevenLabsFake();
    const speech: [string, SpeechProviderFake][] = [['speech-alpha', await startDeepgramFake()], ['speech-beta', await startAssemblyAiFake()], ['speech-gamma', await startGoogleSpeechFake()]];
    try {
      for (const [provider, fake] of [['voice-provider', voice], ...speech] as [string, { apiKey: string; baseUrl: string }][]) {
        const url = `/organization/integrations/${provider}`;
        const wrong = await call('POST', `${url}/key`, owner, { apiKey: 'not-the-right-key', baseUrl: fake.baseUrl });
        expect([provider, wrong.statusCode, wrong.json().code, wrong.json().errors?.apiKey?.[0]]).toEqual([provider, 422, 'VALIDATION_FAILED', expect.stringMatching(/^the provider answered: .+/)]);
        expect([provider, ((await call('GET', '/v1/integrations', { 'x-api-key': ws.liveKey })).json().data as Json[]).some((c) => c.provider === provider)]).toEqual([provider, false]);
        const right = await call('POST', `${url}/key`, owner, { apiKey: fake.apiKey, baseUrl: fake.baseUrl });
        expect([provider, right.statusCode, right.json().data.status, right.json().data.account.name]).toEqual([provider, 200, 'connected', `API key …${fake.apiKey.slice(-4)}`]);
        expect(JSON.stringify(right.json())).not.toContain(fake.apiKey);
        const tested = await call('POST', `${url}/test`, owner);
        expect([provider, tested.statusCode, tested.json().data.message]).toEqual([provider, 200, 'The provider accepted the key']);
        expect((await call('POST', `${url}/key`, member, { apiKey: fake.apiKey })).json().code).toBe('ROLE_REQUIRED');
      }
      // The provider revokes the key: Test says what it answered.
      voice.revoke();
      const lapsed = await call('POST', '/organization/integrations/voice-provider/test', owner);
      expect([lapsed.statusCode, lapsed.json().errors?.apiKey?.[0]]).toEqual([422, expect.stringMatching(/^the provider answered: /)]);
    } finally {
      for (const provider of ['voice-provider', 'speech-alpha', 'speech-beta', 'speech-gamma']) await call('DELETE', `/organization/integrations/${provider}`, owner);
      await voice.close();
      for (const [, fake] of speech) await fake.close();
    }
  });

  it('messaging channels by form: each checked against its provider (WhatsApp, Twilio, SMTP) with a failed check 422 on its field and nothing saved; Test; one channel disconnected, the others kept', async () => {
    const [whatsapp, twilio, smtp] = [await new WhatsAppFake().start(), await new TwilioFake().start(), await new SmtpFake().start()];
    const url = '/organization/integrations/messaging-provider/channels';
    const saved = async () => ((await call('GET', '/organization/integrations', owner)).json().data as { provider: string; channels: Json[] }[]).find((p) => p.provider === 'messaging-provider')!.channels;
    const refused = async (channel: string, body: Json) => {
      const res = await call('POST', `${url}/${channel}`, owner, body);
      return [res.statusCode, res.json().code, res.json().errors];
    };
    try {
      const chat = { accessToken: whatsapp.accessToken, phoneNumberId: whatsapp.phoneNumberId, wabaId: whatsapp.wabaId, baseUrl: whatsapp.baseUrl };
      // What is missing is named field by field, before any call.
      expect(await refused('email', {})).toEqual([422, 'VALIDATION_FAILED', { smtpHost: ['is required for the email channel'], from: ['is required for the email channel'] }]);
      expect(await refused('sms', { accountSid: twilio.accountSid, authToken: twilio.authToken })).toEqual([422, 'VALIDATION_FAILED', { from: ['a number (from) or messagingServiceSid is required for the sms channel'] }]);
      expect((await call('POST', `${url}/email`, owner, { smtpHost: '127.0.0.1', from: 'a@b.test', smtpPort: 'twenty-five' })).json().errors).toHaveProperty('smtpPort');
      expect((await call('POST', `${url}/rcs`, owner, {})).statusCode).toBe(404);
      expect(whatsapp.calls.length + twilio.calls.length + smtp.connections).toBe(0);
      // Each refusal of the provider on the field it is about, in its words.
      expect(await refused('primary_chat', { ...chat, accessToken: 'EAAGnot-the-token' })).toEqual([422, 'VALIDATION_FAILED', { accessToken: [expect.stringMatching(/^the provider answered: .*Error validating access token/)] }]);
      expect(await refused('primary_chat', { ...chat, phoneNumberId: '999' })).toEqual([422, 'VALIDATION_FAILED', { phoneNumberId: [expect.stringMatching(/Object with ID '999' does not exist/)] }]);
      expect(await refused('primary_chat', { ...chat, wabaId: '998' })).toEqual([422, 'VALIDATION_FAILED', { wabaId: [expect.stringMatching(/Object with ID '998' does not exist/)] }]);
      const sms = { accountSid: twilio.accountSid, authToken: twilio.authToken, from: twilio.from, baseUrl: twilio.baseUrl };
      expect(await refused('sms', { ...sms, authToken: 'f'.repeat(32) })).toEqual([422, 'VALIDATION_FAILED', { authToken: [expect.stringMatching(/^the provider answered: .*Authenticate \(code 20003\)/)] }]);
      expect(await refused('sms', { ...sms, from: '+15550009999' })).toEqual([422, 'VALIDATION_FAILED', { from: ['the provider answered: sms (Twilio) has no number +15550009999 on this account'] }]);
      twilio.accountStatus = 'suspended';
      expect(await refused('sms', sms)).toEqual([422, 'VALIDATION_FAILED', { accountSid: ['the provider answered: sms (Twilio) says the account is suspended'] }]);
      twilio.accountStatus = 'active';
      const mail = { smtpHost: '127.0.0.1', smtpPort: smtp.port, smtpSecure: false, smtpUser: smtp.user, smtpPassword: smtp.password, from: 'News <news@shop.test>' };
      expect(await refused('email', { ...mail, smtpPassword: 'wrong-password' })).toEqual([422, 'VALIDATION_FAILED', { smtpPassword: [expect.stringMatching(/^the provider answered: .*535/)] }]);
      expect(await refused('email', { ...mail, smtpPort: await freePort() })).toEqual([422, 'VALIDATION_FAILED', { smtpHost: [expect.stringMatching(/^the provider answered: email \(SMTP\) .*ECONNREFUSED/)] }]);
      expect(await saved()).toEqual([]);
      expect(smtp.received).toEqual([]);
      // Good accounts: saved beside each other, the WhatsApp number as the provider shows it, no secret answered.
      const connected = await call('POST', `${url}/primary_chat`, owner, chat);
      expect([connected.statusCode, connected.json().data.channels]).toEqual([200, [{ channel: 'primary_chat', identifier: '+1 555-0100' }]]);
      expect((await call('POST', `${url}/sms`, owner, sms)).statusCode).toBe(200);
      const all = await call('POST', `${url}/email`, owner, mail);
      expect(all.json().data.channels).toEqual([{ channel: 'primary_chat', identifier: '+1 555-0100' }, { channel: 'sms', identifier: twilio.from }, { channel: 'email', identifier: 'News <news@shop.test>' }]);
      for (const secret of [whatsapp.accessToken, twilio.authToken, smtp.password]) expect(JSON.stringify([connected.json(), all.json(), await saved()])).not.toContain(secret);
      // The contract's channel list (§4.5) sees them; nothing was sent to anyone.
      const listed = (await call('GET', '/v1/integrations/messaging-provider/channels', { 'x-api-key': ws.liveKey })).json().data as Json[];
      expect(listed.map((c) => c.channel)).toEqual(['primary_chat', 'sms', 'email']);
      expect([whatsapp.sent, twilio.sent, smtp.received]).toEqual([[], [], []]);
      // Test: one channel, or the connection's every channel; a revoked token says what the provider answered.
      expect((await call('POST', `${url}/email/test`, owner)).json().data.message).toBe('The provider accepted the email account');
      expect((await call('POST', '/organization/integrations/messaging-provider/test', owner)).json().data.message).toBe('The provider accepted every account: primary_chat, sms, email');
      whatsapp.revoke();
      const lapsed = await call('POST', `${url}/primary_chat/test`, owner);
      expect([lapsed.statusCode, lapsed.json().errors?.accessToken?.[0]]).toEqual([422, expect.stringMatching(/^the provider answered: .*Error validating access token/)]);
      expect((await call('POST', `${url}/sms`, member, sms)).json().code).toBe('ROLE_REQUIRED');
      // Disconnect one channel: the others stay; the last one takes the connection with it.
      const off = await call('DELETE', `${url}/sms`, owner);
      expect([off.statusCode, off.json().data]).toEqual([200, { channel: 'sms', disconnected: true }]);
      expect((await call('DELETE', `${url}/sms`, owner)).json().code).toBe('MESSAGING_CHANNEL_NOT_CONNECTED');
      expect((await call('POST', `${url}/sms/test`, owner)).json().code).toBe('MESSAGING_CHANNEL_NOT_CONNECTED');
      expect((await saved()).map((c) => c.channel)).toEqual(['primary_chat', 'email']);
      await call('DELETE', `${url}/primary_chat`, owner);
      await call('DELETE', `${url}/email`, owner);
      expect(((await call('GET', '/v1/integrations', { 'x-api-key': ws.liveKey })).json().data as Json[]).map((c) => c.provider)).not.toContain('messaging-provider');
    } finally {
      await call('DELETE', '/organization/integrations/messaging-provider', owner);
      await Promise.all([whatsapp.close(), twilio.close(), smtp.close()]);
    }
  });

  it('lists every provider with its connection and whether this machine runs its offline engine', async () => {
    const res = await call('GET', '/organization/integrations', member);
    expect(res.statusCode).toBe(200);
    const rows = res.json().data as { provider: string; connection: unknown; localEngine: string }[];
    expect(rows.map((r) => r.provider)).toEqual(['workspace-suite', 'voice-provider', 'messaging-provider', 'speech-alpha', 'speech-beta', 'speech-gamma']);
    expect(rows.every((r) => r.connection === null)).toBe(true);
    expect(Object.fromEntries(rows.map((r) => [r.provider, r.localEngine]))).toEqual({
      'workspace-suite': 'none', 'messaging-provider': 'none',
      'voice-provider': offlineEngine('voice-provider').state, 'speech-alpha': offlineEngine('speech-alpha').state,
      'speech-beta': offlineEngine('speech-beta').state, 'speech-gamma': offlineEngine('speech-gamma').state,
    });
    expect(offlineEngine('speech-alpha').state).toBe('available'); // the test machine installs pocketsphinx
  });

  it('is an owner\'s: a member is 403 ROLE_REQUIRED, an API key 401 SESSION_REQUIRED, on every change', async () => {
    for (const [method, url] of [['POST', '/organization/integrations/workspace-suite/authorize'], ['POST', '/organization/integrations/workspace-suite/connect'], ['POST', '/organization/integrations/speech-alpha/local'], ['DELETE', '/organization/integrations/speech-alpha'], ['POST', '/organization/integrations/messaging-provider/channels/sms'], ['DELETE', '/organization/integrations/messaging-provider/channels/sms']] as const) {
      expect([url, (await call(method, url, member, method === 'POST' ? {} : undefined)).json().code]).toEqual([url, 'ROLE_REQUIRED']);
      expect([url, (await call(method, url, { 'x-api-key': ws.liveKey }, method === 'POST' ? {} : undefined)).json().code]).toEqual([url, 'SESSION_REQUIRED']);
    }
  });

  it('connects the workspace suite: consent URL (PKCE S256) back to the dashboard\'s callback, the code traded once with the session, the account\'s email read', async () => {
    const started = await call('POST', '/organization/integrations/workspace-suite/authorize', owner, { baseUrl: google.baseUrl });
    expect(started.statusCode).toBe(200);
    const { authorizationUrl, redirectUri } = started.json().data as { authorizationUrl: string; redirectUri: string };
    expect(redirectUri).toBe(`${PUBLIC}/integrations/callback`);
    const q = new URL(authorizationUrl).searchParams;
    expect([q.get('redirect_uri'), q.get('code_challenge_method'), q.get('response_type')]).toEqual([redirectUri, 'S256', 'code']);
    const back = await consent(authorizationUrl);
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    const body = { code: back.searchParams.get('code'), state: back.searchParams.get('state') };
    const done = await call('POST', '/organization/integrations/workspace-suite/connect', owner, body);
    expect([done.statusCode, done.json().data]).toEqual([200, expect.objectContaining({ provider: 'workspace-suite', status: 'connected', engine: 'provider', account: { email: 'ops@example.com', name: 'Ops Team' } })]);
    expect(JSON.stringify(done.json())).not.toContain(google.refreshToken);
    // The connection works for the API's routes, and the state is spent.
    expect((await call('GET', '/v1/integrations/workspace-suite/drive/files', { 'x-api-key': ws.liveKey })).statusCode).toBe(200);
    const replay = await call('POST', '/organization/integrations/workspace-suite/connect', owner, body);
    expect([replay.statusCode, Object.keys(replay.json().errors)]).toEqual([422, ['state']]);
  });

  it('a base URL the operator did not list is refused before anything is kept (the OAuth client\'s secret would be sent there); a state is its workspace\'s only', async () => {
    const elsewhere = await call('POST', '/organization/integrations/workspace-suite/authorize', owner, { baseUrl: 'https://tokens.attacker.example' });
    expect([elsewhere.statusCode, Object.keys(elsewhere.json().errors)]).toEqual([422, ['baseUrl']]);
    const started = (await call('POST', '/organization/integrations/workspace-suite/authorize', owner, { baseUrl: google.baseUrl })).json().data as { authorizationUrl: string };
    const back = await consent(started.authorizationUrl);
    const other = (await api.cli('workspace:create', '--name', 'Other', '--plan', 'pro')).json as { workspaceId: string };
    const stranger = { authorization: `Bearer ${await userSession(api, other.workspaceId, '+4915100029003', 'owner')}`, 'x-service-org': other.workspaceId };
    const taken = await call('POST', '/organization/integrations/workspace-suite/connect', stranger, { code: back.searchParams.get('code'), state: back.searchParams.get('state') });
    expect([taken.statusCode, Object.keys(taken.json().errors)]).toEqual([422, ['state']]);
    expect((await call('GET', '/v1/integrations', { 'x-api-key': (await api.cli('key:create', '--workspace', other.workspaceId)).json.key as string })).json().data).toEqual([]);
  });

  it('a consent cancelled on the provider\'s page sends the user back with error=access_denied and connects nothing', async () => {
    const started = (await call('POST', '/organization/integrations/workspace-suite/authorize', owner, { baseUrl: google.baseUrl })).json().data as { authorizationUrl: string };
    const denied = new URL(started.authorizationUrl);
    denied.searchParams.set('decision', 'deny');
    const back = await consent(denied.toString());
    expect([back.searchParams.get('error'), back.searchParams.get('code')]).toEqual(['access_denied', null]);
    // A browser sees the consent page itself.
    const page = await fetch(started.authorizationUrl, { headers: { accept: 'text/html' } });
    expect([page.status, await page.text()]).toEqual([200, expect.stringContaining('Allow')]);
  });

  it('the offline engine in one click where there is one; disconnect deletes the connection, once', async () => {
    const on = await call('POST', '/organization/integrations/speech-alpha/local', owner);
    expect([on.statusCode, on.json().data.engine, on.json().data.status]).toEqual([200, 'local', 'connected']);
    const none = await call('POST', '/organization/integrations/messaging-provider/local', owner);
    expect([none.statusCode, none.json().errors]).toEqual([422, { provider: ['messaging-provider has no offline engine'] }]);
    expect((await call('POST', '/organization/integrations/nope/local', owner)).statusCode).toBe(404);
    const off = await call('DELETE', '/organization/integrations/speech-alpha', owner);
    expect([off.statusCode, off.json().data]).toEqual([200, { provider: 'speech-alpha', disconnected: true }]);
    expect((await call('DELETE', '/organization/integrations/speech-alpha', owner)).json().code).toBe('INTEGRATION_NOT_CONNECTED');
    const listed = ((await call('GET', '/v1/integrations', { 'x-api-key': ws.liveKey })).json().data as Json[]).map((c) => c.provider);
    expect(listed).toEqual(['workspace-suite']);
  });

  it('an offline engine is available when a worker reports its programs (the API machine\'s PATH only when no worker has reported), withdrawn as the worker stops', async () => {
    const census = api.app.get(EngineCensus);
    const alpha = async () => ((await call('GET', '/organization/integrations', owner)).json().data as { provider: string; localEngine: string; missingPrograms: string[] }[]).find((p) => p.provider === 'speech-alpha')!;
    // A worker without the programs: the dashboard says so, though this machine has them.
    await census.report('bare-worker:1', () => false);
    expect(await alpha()).toMatchObject({ localEngine: 'missing', missingPrograms: ['pocketsphinx_continuous'] });
    const refused = await call('POST', '/organization/integrations/speech-alpha/local', owner);
    expect([refused.statusCode, refused.json().errors]).toEqual([422, { provider: ['no worker has pocketsphinx_continuous (the offline engine\'s programs)'] }]);
    // A real worker starts: its report (every program on its PATH) makes the engine available.
    const worker = await createWorkerApp(api.config);
    try {
      await until(async () => (await alpha()).localEngine === 'available', 'the worker\'s report', 10_000, 50);
      const on = await call('POST', '/organization/integrations/speech-alpha/local', owner);
      expect(on.statusCode).toBe(200);
      expect((await call('POST', '/organization/integrations/speech-alpha/test', owner)).json().data.message).toBe('The offline engine is installed on the workers');
    } finally {
      await worker.close();
    }
    // It withdrew as it stopped: the bare worker is the fleet again.
    expect(await alpha()).toMatchObject({ localEngine: 'missing' });
    expect((await call('POST', '/organization/integrations/speech-alpha/test', owner)).json()).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', message: 'The offline engine of speech-alpha is not installed on any worker: pocketsphinx_continuous missing' });
    // A report Redis expired (a worker killed without withdrawing) no longer counts, and leaves the set: back to this machine's PATH.
    await census.report('bare-worker:1', () => false, 50);
    await new Promise((r) => setTimeout(r, 120));
    expect(await alpha()).toMatchObject({ localEngine: 'available' }); // this machine has pocketsphinx (the test above says so)
    const redis = createRedis(api.config, 'census-test');
    try {
      expect(await redis.smembers(new RedisKeys(api.config.redisPrefix).offlineEngines())).toEqual([]);
    } finally {
      redis.disconnect();
    }
    await call('DELETE', '/organization/integrations/speech-alpha', owner);
  }, 60_000);
});
