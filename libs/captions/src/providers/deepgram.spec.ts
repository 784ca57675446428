import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recognitionSettings, speechAudio, startDeepgramFake, type DeepgramFake } from '#testing/captions';
import { sampleMedia } from '#testing/media';
import { SpeechProviderError, type SpeechAudio } from '../speech.js';
import { DeepgramEngine } from './deepgram.js';

// speech-alpha against a loopback Deepgram: what each setting sends, and how the answer is read.
describe('Deepgram adapter (speech-alpha)', () => {
  let fake: DeepgramFake;
  let dir: string;
  let wav: SpeechAudio;
  const engine = () => new DeepgramEngine({ credentials: { apiKey: fake.apiKey }, baseUrl: fake.baseUrl, outboundPolicy: 'development' });
  const run = (settings = recognitionSettings(), audio = wav) => engine().transcribe(audio, settings, new AbortController().signal);
  const lastQuery = () => fake.requests.at(-1)!.query;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'deepgram-spec-'));
    wav = await speechAudio(dir, await sampleMedia.wav(1), 'wav', 1);
  });
  beforeEach(async () => {
    fake = await startDeepgramFake();
    fake.say('Hello there, world. How are you?');
  });
  afterEach(() => fake.close());
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('posts the recording as it is, with its content type and every setting in the query', async () => {
    const result = await run();
    const sent = fake.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/listen', bodyBytes: wav.sizeBytes });
    expect(sent.headers['content-type']).toBe('audio/wav');
    expect(sent.headers.authorization).toBe('[redacted]');
    expect(sent.query).toEqual({
      model: ['nova-3'], punctuate: ['true'], diarize: ['false'], profanity_filter: ['false'], smart_format: ['false'], language: ['en-US'],
    });
    expect(result.words.map((w) => w.word)).toEqual(['Hello', 'there,', 'world.', 'How', 'are', 'you?']);
    expect(result.words[1]).toEqual({ word: 'there,', start: 0.5, end: 0.9, confidence: 0.93, speaker: null });
    expect(result).toMatchObject({ languageCode: 'en-US', model: 'nova-3', audioSec: 3.4 });
  });

  it('detects the language for auto, and reads the detected one back', async () => {
    fake.detect('es');
    const result = await run(recognitionSettings({ languageCode: 'auto' }));
    expect(lastQuery().detect_language).toEqual(['true']);
    expect(lastQuery().language).toBeUndefined();
    expect(result.languageCode).toBe('es');
  });

  it('asks for code-switching (language=multi) when alternative languages are given', async () => {
    fake.detect('fr');
    const result = await run(recognitionSettings({ languageCode: 'en', alternativeLanguageCodes: ['fr', 'es'] }));
    expect(lastQuery().language).toEqual(['multi']);
    expect(result.languageCode).toBe('fr');
  });

  it('labels speakers from 0 when diarizing, and gives bare words without punctuation', async () => {
    fake.say('Good morning. Hi there.', { speakers: 2 });
    const result = await run(recognitionSettings({ diarize: true, punctuation: false }));
    expect(lastQuery()).toMatchObject({ diarize: ['true'], punctuate: ['false'] });
    expect(result.words.map((w) => [w.word, w.speaker])).toEqual([['good', 0], ['morning', 0], ['hi', 1], ['there', 1]]);
  });

  it('sends keywords as keyterm to Nova-3 and as keywords to older models, one parameter each', async () => {
    await run(recognitionSettings({ keywords: ['Remotion', 'media render'] }));
    expect(lastQuery().keyterm).toEqual(['Remotion', 'media render']);
    expect(lastQuery().keywords).toBeUndefined();
    const older = await run(recognitionSettings({ model: 'nova-2-meeting', keywords: ['Remotion', 'a:b'] }));
    expect(lastQuery()).toMatchObject({ model: ['nova-2-meeting'], keywords: ['Remotion', 'a b'] });
    expect(lastQuery().keyterm).toBeUndefined();
    expect(older.model).toBe('nova-2-meeting');
  });

  it('filters profanity when asked', async () => {
    fake.say('Well damn it.');
    const plain = await run();
    expect(plain.words[1]!.word).toBe('damn');
    const filtered = await run(recognitionSettings({ filterProfanity: true }));
    expect(lastQuery().profanity_filter).toEqual(['true']);
    expect(filtered.words[1]!.word).toBe('d***');
  });

  it('fails a recording Deepgram cannot process as rejected, in its own words', async () => {
    const junk = await speechAudio(dir, Buffer.from('this is not audio at all'), 'wav', 1);
    const err = await run(recognitionSettings(), junk).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpeechProviderError);
    expect(err).toMatchObject({ kind: 'rejected', status: 400, message: expect.stringContaining('failed to process audio: corrupt or unsupported data') });
  });

  it('refuses, before calling, a model it does not list or a file over its size', async () => {
    await expect(run(recognitionSettings({ model: 'whisper-xl' }))).rejects.toMatchObject({ kind: 'rejected', message: expect.stringContaining('no model "whisper-xl"') });
    await expect(run(recognitionSettings(), { ...wav, sizeBytes: 3e9 })).rejects.toMatchObject({ kind: 'rejected', message: expect.stringContaining('up to 1.9 GB') });
    expect(fake.requests).toHaveLength(0);
  });

  it('reads videos itself', async () => {
    const mp4 = await speechAudio(dir, await sampleMedia.audioOnlyMp4(1), 'mp4', 1);
    await run(recognitionSettings(), mp4);
    expect(fake.requests.at(-1)!.headers['content-type']).toBe('video/mp4');
  });
});
