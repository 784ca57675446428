import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recognitionSettings, speechAudio, startAssemblyAiFake, startDeepgramFake, startGoogleSpeechFake, type SpeechProviderFake } from '#testing/captions';
import { sampleMedia } from '#testing/media';
import { SpeechProviderError, type SpeechAudio, type SpeechEngineOptions, type SpeechProvider } from '../speech.js';
import { createSpeechEngine } from './index.js';

/**
 * How every adapter fails (§2 "Caption provider" kinds: auth / unavailable / rejected), stops on
 * abort, refuses non-public targets in production, and keeps credentials out of every message.
 */
const PROVIDERS: { provider: SpeechProvider; start: () => Promise<SpeechProviderFake>; polls: boolean; authWords: string }[] = [
  { provider: 'speech-alpha', start: startDeepgramFake, polls: false, authWords: 'Invalid credentials.' },
  { provider: 'speech-beta', start: startAssemblyAiFake, polls: true, authWords: 'Authentication error, API token missing/invalid' },
  { provider: 'speech-gamma', start: startGoogleSpeechFake, polls: true, authWords: 'API key not valid. Please pass a valid API key.' },
];

describe.each(PROVIDERS)('$provider failures', ({ provider, start, polls, authWords }) => {
  let fake: SpeechProviderFake;
  let dir: string;
  let wav: SpeechAudio;
  const engine = (options: Partial<SpeechEngineOptions> = {}) =>
    createSpeechEngine(provider, { credentials: { apiKey: fake.apiKey }, baseUrl: fake.baseUrl, outboundPolicy: 'development', pollIntervalMs: 5, ...options });
  const failure = async (promise: Promise<unknown>): Promise<SpeechProviderError> => {
    const err = await promise.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(SpeechProviderError);
    const message = (err as SpeechProviderError).message;
    expect(message.startsWith(`${provider} `)).toBe(true);
    expect(message).not.toContain(fake.apiKey);
    return err as SpeechProviderError;
  };
  const run = (options: Partial<SpeechEngineOptions> = {}, signal = new AbortController().signal) => engine(options).transcribe(wav, recognitionSettings(), signal);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'speech-failures-'));
    wav = await speechAudio(dir, await sampleMedia.wav(1), 'wav', 1);
  });
  beforeEach(async () => {
    fake = await start();
    fake.say('One two three.');
  });
  afterEach(() => fake.close());
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a wrong key is auth, in the provider\'s own words', async () => {
    const err = await failure(run({ credentials: { apiKey: 'not-the-key-0123456789' } }));
    expect(err.kind).toBe('auth');
    expect(err.message).toContain(authWords);
    expect(err.message).not.toContain('not-the-key-0123456789');
  });

  it('a key revoked since the connection was made is auth', async () => {
    await expect(run()).resolves.toMatchObject({ words: expect.any(Array) });
    fake.revokeKey();
    expect((await failure(run())).kind).toBe('auth');
  });

  it('a connection without a key is auth, and nothing is sent', async () => {
    expect((await failure(run({ credentials: {} }))).kind).toBe('auth');
    expect(fake.requests).toHaveLength(0);
  });

  it('500 and 429 are unavailable', async () => {
    fake.fail('server-error');
    expect(await failure(run())).toMatchObject({ kind: 'unavailable', status: 500 });
    fake.fail('rate-limit');
    expect(await failure(run())).toMatchObject({ kind: 'unavailable', status: 429 });
  });

  it('a provider that never answers is unavailable once the budget is spent', async () => {
    fake.fail('hang');
    const started = Date.now();
    const err = await failure(run({ timeoutMs: 300 }));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toBe(`${provider} did not finish within 300 ms`);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('a recognition that fails is rejected, with the provider\'s reason', async () => {
    fake.fail('job-error', 'The audio could not be decoded (test reason).');
    const err = await failure(run());
    expect(err.kind).toBe('rejected');
    expect(err.message).toContain('The audio could not be decoded (test reason).');
  });

  it('abort stops a request in flight at once, with the caller\'s reason', async () => {
    fake.fail('hang');
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    setTimeout(() => controller.abort(reason), 50);
    const started = Date.now();
    await expect(run({}, controller.signal)).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  // Deepgram answers in one call: nothing to poll.
  if (polls) it('abort stops the polling at once, and no poll follows', async () => {
    fake.pollsBeforeDone = 1_000_000;
    const controller = new AbortController();
    const reason = new Error('cancelled while polling');
    const running = run({ pollIntervalMs: 20 }, controller.signal);
    // Polling has begun once the fake has seen a few polls (speech-gamma decodes with ffmpeg first: slower under load).
    for (const until = Date.now() + 10_000; fake.requests.length <= 2 && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 10));
    const pollsSoFar = fake.requests.length;
    expect(pollsSoFar).toBeGreaterThan(2);
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests.length).toBeLessThanOrEqual(pollsSoFar + 1);
  });

  it('production refuses a non-public provider address before connecting (no request leaves)', async () => {
    const production = (baseUrl: string | undefined, addresses: string[]) =>
      run({ outboundPolicy: 'production', baseUrl, lookup: async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) });
    // The loopback fake itself: plain HTTP and a loopback address.
    expect(await failure(production(fake.baseUrl, []))).toMatchObject({ kind: 'unavailable', message: expect.stringContaining('HTTPS only') });
    // The provider's real host, resolved (by the stub) to addresses that are not public.
    for (const addresses of [['127.0.0.1'], ['10.0.0.7'], ['93.184.216.34', '169.254.169.254'], ['::1']]) {
      const err = await failure(production(undefined, addresses));
      expect(err).toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/not a public address/) });
    }
    expect(fake.requests).toHaveLength(0);
  });
});
