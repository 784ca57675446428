import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { recognitionSettings, speechAudio, startGoogleSpeechFake, toneSpeech, type FakeRecognitionFailure, type GoogleSpeechFake, type InlineAudio, type ToneSpeech } from '#testing/captions';
import { ffmpegFile, sampleMedia } from '#testing/media';
import type { SpeechAudio, SpeechCredentials, SpeechEngineOptions } from '../speech.js';
import { GOOGLE_MAX_BYTES, GOOGLE_MAX_DURATION_SEC, GoogleSpeechEngine, seconds } from './google.js';

// speech-gamma against a loopback Google Speech-to-Text v1, which applies v1's rules for inline audio.
describe('Google Speech-to-Text v1 adapter (speech-gamma)', () => {
  let fake: GoogleSpeechFake;
  let dir: string;
  let wav: SpeechAudio;
  const engine = (credentials: SpeechCredentials = { apiKey: fake.apiKey }, options: Partial<SpeechEngineOptions> = {}) =>
    new GoogleSpeechEngine({ credentials, baseUrl: fake.baseUrl, outboundPolicy: 'development', pollIntervalMs: 5, ...options });
  const run = (settings = recognitionSettings(), audio = wav, credentials?: SpeechCredentials) => engine(credentials).transcribe(audio, settings, new AbortController().signal);
  type RecognizeBody = { config: Record<string, unknown>; audio: { content: InlineAudio } };
  const recognizeRequests = () => fake.sent('/v1/speech:longrunningrecognize');
  const recognizeRequest = () => recognizeRequests().at(-1)!.json as RecognizeBody;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'google-speech-spec-'));
    wav = await speechAudio(dir, await sampleMedia.wav(1), 'wav', 1);
  });
  beforeEach(async () => {
    fake = await startGoogleSpeechFake();
    fake.say('Hello there, world. How are you?');
  });
  afterEach(() => fake.close());
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('sends the config and the audio as a mono 16 kHz WAV inline, polls the operation until done, and reads "1.500s" times', async () => {
    fake.pollsBeforeDone = 2;
    fake.script([
      { word: 'Hello,', start: 0, end: 0.4, confidence: 0.8 },
      { word: 'world.', start: 1.5, end: 2.25, confidence: 0.9 },
    ]);
    const result = await run();
    const [create, ...polls] = fake.requests;
    expect(create).toMatchObject({ method: 'POST', path: '/v1/speech:longrunningrecognize', query: { key: ['[redacted]'] } });
    expect(create!.headers.authorization).toBeUndefined();
    const { config, audio } = recognizeRequest();
    expect(config).toEqual({
      encoding: 'LINEAR16',
      languageCode: 'en-US',
      enableWordTimeOffsets: true,
      enableWordConfidence: true,
      enableAutomaticPunctuation: true,
      profanityFilter: false,
    });
    expect(audio.content).toMatchObject({ container: 'wav', channels: 1, sampleRate: 16000 });
    expect(audio.content.durationSec).toBeCloseTo(1, 1);
    expect(polls.map((p) => p.path)).toEqual(Array(3).fill(expect.stringMatching(/^\/v1\/operations\/\d+$/)));
    expect(polls.every((p) => p.query.key?.[0] === '[redacted]')).toBe(true);
    expect(result.words).toEqual([
      { word: 'Hello,', start: 0, end: 0.4, confidence: 0.8, speaker: null },
      { word: 'world.', start: 1.5, end: 2.25, confidence: 0.9, speaker: null },
    ]);
    // Google answers "en-us"; the tag comes back in its canonical casing. Billed time is whole seconds here.
    expect(result).toMatchObject({ languageCode: 'en-US', model: 'default', audioSec: 1 });
    expect(recognizeRequests()).toHaveLength(1);
  });

  it('re-encodes what v1 cannot read inline: stereo WAV, MP3, Ogg Opus and FLAC all arrive as mono 16 kHz WAV', async () => {
    const stereo = await speechAudio(dir, await ffmpegFile(['-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=44100:duration=1', '-ac', '2', '-c:a', 'pcm_s16le'], 'wav'), 'wav', 1);
    const mp3 = await speechAudio(dir, await sampleMedia.mp3(1), 'mp3', 1);
    const opus = await speechAudio(dir, await sampleMedia.ogg(1), 'ogg', 1);
    const flac = await speechAudio(dir, await sampleMedia.flac(1), 'flac', 1);
    for (const audio of [stereo, mp3, opus, flac]) {
      await run(recognitionSettings(), audio);
      expect(recognizeRequest().audio.content).toMatchObject({ container: 'wav', channels: 1, sampleRate: 16000 });
    }
  });

  it('sends an access token as a bearer header instead of a key', async () => {
    await run(recognitionSettings(), wav, { accessToken: fake.accessToken });
    const create = fake.requests[0]!;
    expect(create.headers.authorization).toBe('[redacted]');
    expect(create.query.key).toBeUndefined();
  });

  it('a wrong or expired access token is auth (Google\'s 401 UNAUTHENTICATED)', async () => {
    await expect(run(recognitionSettings(), wav, { accessToken: 'ya29.expired' })).rejects.toMatchObject({
      kind: 'auth',
      status: 401,
      message: expect.stringContaining('Request had invalid authentication credentials'),
    });
  });

  it('the fake holds v1\'s rules: stereo, MP3 and a missing encoding are refused as Google does', async () => {
    const post = async (config: Record<string, unknown>, bytes: Buffer) => {
      const res = await fetch(`${fake.baseUrl}/v1/speech:longrunningrecognize?key=${fake.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ config: { languageCode: 'en-US', ...config }, audio: { content: bytes.toString('base64') } }),
      });
      return { status: res.status, message: ((await res.json()) as { error?: { message?: string } }).error?.message };
    };
    const stereo = await ffmpegFile(['-f', 'lavfi', '-i', 'sine=frequency=300:duration=1', '-ac', '2', '-c:a', 'pcm_s16le'], 'wav');
    expect(await post({}, stereo)).toEqual({ status: 400, message: 'Must use single channel (mono) audio, but WAV header indicates 2 channels.' });
    expect(await post({ encoding: 'MP3', sampleRateHertz: 44100 }, await sampleMedia.mp3(1))).toMatchObject({ status: 400, message: expect.stringContaining('v1p1beta1') });
    expect(await post({}, await sampleMedia.mp3(1))).toMatchObject({ status: 400, message: expect.stringContaining('bad encoding') });
    expect((await post({}, await sampleMedia.wav(1))).status).toBe(200);
  });

  it('sends up to three alternative languages and reads the language Google heard', async () => {
    fake.detect('fr-FR');
    const result = await run(recognitionSettings({ alternativeLanguageCodes: ['fr-FR', 'de-DE', 'es-ES'] }));
    expect(recognizeRequest().config.alternativeLanguageCodes).toEqual(['fr-FR', 'de-DE', 'es-ES']);
    expect(result.languageCode).toBe('fr-FR');
    await expect(run(recognitionSettings({ alternativeLanguageCodes: ['fr-FR', 'de-DE', 'es-ES', 'it-IT'] }))).rejects.toMatchObject({ kind: 'rejected', message: expect.stringContaining('at most 3') });
    expect(fake.sent('/v1/speech')).toHaveLength(1);
  });

  it('sends the model, punctuation and profanity settings', async () => {
    fake.say('Well damn it.');
    const result = await run(recognitionSettings({ model: 'latest_long', punctuation: false, filterProfanity: true }));
    expect(recognizeRequest().config).toMatchObject({ model: 'latest_long', enableAutomaticPunctuation: false, profanityFilter: true });
    expect(result.words.map((w) => w.word)).toEqual(['Well', 'd***', 'it']);
    expect(result.model).toBe('latest_long');
  });

  it('refuses, before calling, what it cannot take: video, auto, diarizing, keywords, over 4 hours, over 200 MB', async () => {
    const mp4 = await speechAudio(dir, await sampleMedia.audioOnlyMp4(1), 'mp4', 1);
    await expect(run(recognitionSettings(), mp4)).rejects.toMatchObject({ kind: 'rejected', message: expect.stringContaining('reads audio only') });
    await expect(run(recognitionSettings({ languageCode: 'auto' }))).rejects.toMatchObject({ kind: 'rejected' });
    await expect(run(recognitionSettings({ diarize: true }))).rejects.toMatchObject({ kind: 'rejected' });
    await expect(run(recognitionSettings({ keywords: ['x'] }))).rejects.toMatchObject({ kind: 'rejected' });
    expect([GOOGLE_MAX_DURATION_SEC, GOOGLE_MAX_BYTES]).toEqual([4 * 3600, 200 * 1024 * 1024]);
    await expect(run(recognitionSettings(), { ...wav, durationSec: GOOGLE_MAX_DURATION_SEC + 1 })).rejects.toMatchObject({ kind: 'rejected', message: expect.stringContaining('up to 14400 s') });
    await expect(run(recognitionSettings(), { ...wav, sizeBytes: GOOGLE_MAX_BYTES + 1 })).rejects.toMatchObject({ kind: 'rejected', message: expect.stringContaining('up to 200 MB') });
    expect(fake.requests).toHaveLength(0);
  });

  describe('a recording longer than 55 s', () => {
    // About three minutes of "speech" as a 44.1 kHz stereo MP3: sentences of tone words (0.35 s,
    // 0.15 s apart) with 0.8 s pauses between sentences; the fake hears each tone as a word.
    const SENTENCES = Array.from({ length: 34 }, (_, i) => [6, 9, 12, 7, 14, 8, 10][i % 7]!);
    let speech: ToneSpeech;
    let podcast: SpeechAudio;

    beforeAll(async () => {
      speech = toneSpeech(SENTENCES);
      const mp3 = await ffmpegFile(['-i', 'speech.wav', '-ar', '44100', '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '96k'], 'mp3', { 'speech.wav': speech.wav });
      podcast = await speechAudio(dir, mp3, 'mp3', speech.durationSec);
    });
    beforeEach(() => fake.hearTones());

    it('goes as parts of at most 55 s cut in pauses between sentences; the words come back whole, in order, at their place in the recording', async () => {
      fake.detect('fr-FR');
      const result = await run(recognitionSettings({ alternativeLanguageCodes: ['fr-FR'] }), podcast);
      expect(speech.durationSec).toBeGreaterThan(180);

      const sent = recognizeRequests();
      expect(sent).toHaveLength(4);
      for (const request of sent) {
        const { config, audio } = request.json as RecognizeBody;
        expect(request.bodyBytes).toBeLessThan(10 * 1024 * 1024);
        expect(audio.content).toMatchObject({ container: 'wav', channels: 1, sampleRate: 16000 });
        expect(audio.content.durationSec).toBeLessThanOrEqual(55);
        expect(config).toMatchObject({ encoding: 'LINEAR16', languageCode: 'en-US', alternativeLanguageCodes: ['fr-FR'] });
      }
      const partSec = sent.map((r) => (r.json as RecognizeBody).audio.content.durationSec!);
      expect(partSec.reduce((a, b) => a + b)).toBeCloseTo(speech.durationSec, 1);
      // Every part starts and ends inside a sentence's 0.8 s pause (not in a 0.15 s gap between words, not in a word).
      for (const part of fake.heard) {
        expect(part.words[0]!.start).toBeGreaterThanOrEqual(0.3);
        expect(part.durationSec - part.words.at(-1)!.end).toBeGreaterThanOrEqual(0.3);
      }

      expect(result.words.map((w) => w.word)).toEqual(speech.words.map((w) => w.word));
      result.words.forEach((w, i) => {
        expect(Math.abs(w.start - speech.words[i]!.start)).toBeLessThan(0.03);
        expect(Math.abs(w.end - speech.words[i]!.end)).toBeLessThan(0.03);
      });
      expect(result.languageCode).toBe('fr-FR');
      expect(result.audioSec).toBeCloseTo(speech.durationSec, 1);
    });

    it('cuts hard at 55 s where nothing is quiet: a continuous tone of 130 s goes as 55 + 55 + 20 s', async () => {
      const tone = await speechAudio(dir, await ffmpegFile(['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=16000:duration=130', '-c:a', 'pcm_s16le'], 'wav'), 'wav', 130);
      const result = await run(recognitionSettings(), tone);
      expect(fake.heard.map((p) => p.durationSec).sort((a, b) => a - b)).toEqual([20, 55, 55]);
      expect(result.words.map((w) => [w.word, w.start, w.end])).toEqual([['440hz', 0, 55], ['440hz', 55, 110], ['440hz', 110, 130]]);
      expect(result.audioSec).toBe(130);
    });

    it.each<[FakeRecognitionFailure, string]>([
      ['rate-limit', 'unavailable'],
      ['revoked-key', 'auth'],
      ['server-error', 'unavailable'],
    ])('a part refused when sent (%s) fails the whole as %s; the other parts stop and the fourth is never sent', async (mode, kind) => {
      fake.pollsBeforeDone = 20;
      fake.failRecognition(2, mode);
      await expect(run(recognitionSettings(), podcast)).rejects.toMatchObject({ kind });
      // An upload under way when the failure came may still land (slowly, on a busy machine); then
      // nothing more: the fake hears nothing new for 500 ms (polls that went on would keep it growing).
      let seen = -1;
      for (let i = 0; i < 20 && fake.requests.length !== seen; i++) {
        seen = fake.requests.length;
        await sleep(500);
      }
      expect(fake.requests).toHaveLength(seen);
      expect(recognizeRequests().length).toBeLessThanOrEqual(3);
    });

    it('a part whose recognition fails fails the whole as rejected, with Google\'s reason', async () => {
      fake.failRecognition(3, 'job-error', 'Invalid audio: no speech could be decoded.');
      await expect(run(recognitionSettings(), podcast)).rejects.toMatchObject({ kind: 'rejected', message: 'speech-gamma could not transcribe the recording: Invalid audio: no speech could be decoded.' });
    });

    it('runs three parts at a time; an abort stops every one of them at once', async () => {
      fake.fail('hang');
      const controller = new AbortController();
      const pending = engine().transcribe(podcast, recognitionSettings(), controller.signal);
      for (const started = Date.now(); recognizeRequests().length < 3 && Date.now() - started < 10_000;) await sleep(10);
      await sleep(100);
      expect(recognizeRequests()).toHaveLength(3);
      const reason = new Error('stopped by the test');
      const aborted = Date.now();
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      // At once: without the abort reaching them the three parts hang with the fake. 1.1 s once on a
      // loaded machine (2026-11-29), 500 ms before that.
      expect(Date.now() - aborted).toBeLessThan(3_000);
      await sleep(100);
      expect(fake.requests).toHaveLength(3);
    });

    it('all parts share the one deadline', async () => {
      fake.fail('hang');
      const started = Date.now();
      await expect(engine(undefined, { timeoutMs: 2000 }).transcribe(podcast, recognitionSettings(), new AbortController().signal)).rejects.toMatchObject({
        kind: 'unavailable',
        message: 'speech-gamma did not finish within 2 s',
      });
      expect(Date.now() - started).toBeLessThan(3500);
    });
  });

  it('fails an unreadable file before calling Google, without naming where it is stored', async () => {
    const junk = await speechAudio(dir, Buffer.from('not audio at all, just text'), 'wav', 1);
    const err = (await run(recognitionSettings(), junk).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ kind: 'rejected', message: expect.stringContaining("could not read the recording's audio") });
    expect(err.message).not.toContain(dir);
    expect(fake.requests).toHaveLength(0);
  });

  it('fails an operation that ends in error as rejected, with Google\'s message', async () => {
    fake.fail('job-error', 'Invalid audio: no speech could be decoded.');
    await expect(run()).rejects.toMatchObject({ kind: 'rejected', message: 'speech-gamma could not transcribe the recording: Invalid audio: no speech could be decoded.' });
  });

  it('reads protobuf durations', () => {
    expect([seconds('1.500s'), seconds('0s'), seconds('12s'), seconds('3.1s'), seconds('abc'), seconds(undefined)]).toEqual([1.5, 0, 12, 3.1, undefined, undefined]);
  });
});
