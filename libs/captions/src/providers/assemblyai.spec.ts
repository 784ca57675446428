import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recognitionSettings, speechAudio, startAssemblyAiFake, type AssemblyAiFake } from '#testing/captions';
import { sampleMedia } from '#testing/media';
import type { SpeechAudio } from '../speech.js';
import { AssemblyAiEngine, speakerNumber, toAssemblyAi } from './assemblyai.js';

// speech-beta against a loopback AssemblyAI: upload, transcript request, polling, and the answer read.
describe('AssemblyAI adapter (speech-beta)', () => {
  let fake: AssemblyAiFake;
  let dir: string;
  let wav: SpeechAudio;
  const engine = () => new AssemblyAiEngine({ credentials: { apiKey: fake.apiKey }, baseUrl: fake.baseUrl, outboundPolicy: 'development', pollIntervalMs: 5 });
  const run = (settings = recognitionSettings(), audio = wav) => engine().transcribe(audio, settings, new AbortController().signal);
  const transcriptRequest = () => fake.sent('/v2/transcript').find((r) => r.method === 'POST')!.json as Record<string, unknown>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'assemblyai-spec-'));
    wav = await speechAudio(dir, await sampleMedia.wav(1), 'wav', 1);
  });
  beforeEach(async () => {
    fake = await startAssemblyAiFake();
    fake.say('Hello there, world. How are you?');
  });
  afterEach(() => fake.close());
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('uploads the bytes, asks for a transcript of the upload, and polls until it is completed', async () => {
    fake.pollsBeforeDone = 3;
    const result = await run();
    const [upload, create, ...polls] = fake.requests;
    expect(upload).toMatchObject({ method: 'POST', path: '/v2/upload', bodyBytes: wav.sizeBytes });
    expect(upload!.headers).toMatchObject({ authorization: '[redacted]', 'content-type': 'application/octet-stream' });
    expect(create).toMatchObject({ method: 'POST', path: '/v2/transcript' });
    expect(create!.json).toEqual({
      audio_url: expect.stringMatching(/^https:\/\/cdn\.assemblyai\.com\/upload\//),
      speech_models: ['universal-3-pro', 'universal-2'],
      punctuate: true,
      format_text: true,
      speaker_labels: false,
      language_code: 'en_us',
    });
    // Three answers "processing", then the completed one.
    expect(polls.map((p) => `${p.method} ${p.path}`)).toEqual(Array(4).fill(expect.stringMatching(/^GET \/v2\/transcript\/[\w-]+$/)));
    // Milliseconds in the answer, seconds out.
    expect(result.words[1]).toEqual({ word: 'there,', start: 0.5, end: 0.9, confidence: 0.93, speaker: null });
    expect(result.words.map((w) => w.word)).toEqual(['Hello', 'there,', 'world.', 'How', 'are', 'you?']);
    expect(result).toMatchObject({ languageCode: 'en-US', model: 'universal-3-pro', audioSec: 3.4 });
  });

  it('detects the language for auto (no language_code), and reads the detected one back', async () => {
    fake.detect('de');
    const result = await run(recognitionSettings({ languageCode: 'auto' }));
    expect(transcriptRequest()).toMatchObject({ language_detection: true });
    expect(transcriptRequest()).not.toHaveProperty('language_code');
    expect(result.languageCode).toBe('de');
  });

  it('names English accents its own way and other languages by their language alone', async () => {
    const british = await run(recognitionSettings({ languageCode: 'en-GB' }));
    expect(transcriptRequest().language_code).toBe('en_uk');
    expect(british.languageCode).toBe('en-GB');
    expect(['en-US', 'en-AU', 'es-MX', 'pt-BR', 'ja'].map(toAssemblyAi)).toEqual(['en_us', 'en_au', 'es', 'pt', 'ja']);
  });

  it('asks for the model given, and reports the one that ran', async () => {
    const result = await run(recognitionSettings({ languageCode: 'hi', model: 'universal-2' }));
    expect(transcriptRequest().speech_models).toEqual(['universal-2']);
    expect(result.model).toBe('universal-2');
  });

  it('falls back to Universal-2 on its own for languages Universal-3 Pro lacks (the default route)', async () => {
    const result = await run(recognitionSettings({ languageCode: 'ja' }));
    expect(result.model).toBe('universal-2');
  });

  it('labels speakers (A, B → 0, 1) and gives bare words without punctuation and formatting', async () => {
    fake.say('Good morning. Hi there.', { speakers: 2 });
    const result = await run(recognitionSettings({ diarize: true, punctuation: false }));
    expect(transcriptRequest()).toMatchObject({ speaker_labels: true, punctuate: false, format_text: false });
    expect(result.words.map((w) => [w.word, w.speaker])).toEqual([['good', 0], ['morning', 0], ['hi', 1], ['there', 1]]);
    expect([speakerNumber('A'), speakerNumber('Z'), speakerNumber('AA'), speakerNumber(null), speakerNumber('1')]).toEqual([0, 25, 26, null, null]);
  });

  it('fails a transcript that ends in error as rejected, with AssemblyAI\'s reason', async () => {
    fake.fail('job-error', 'Transcoding failed. File does not appear to contain audio.');
    await expect(run()).rejects.toMatchObject({
      kind: 'rejected',
      message: 'speech-beta could not transcribe the recording: Transcoding failed. File does not appear to contain audio.',
    });
    expect(fake.sent('/v2/transcript/').length).toBeGreaterThanOrEqual(2);
  });

  it('refuses keywords, profanity filtering and alternative languages, which it does not take, before uploading', async () => {
    for (const settings of [{ keywords: ['x'] }, { filterProfanity: true }, { alternativeLanguageCodes: ['fr'] }]) {
      await expect(run(recognitionSettings(settings))).rejects.toMatchObject({ kind: 'rejected' });
    }
    expect(fake.requests).toHaveLength(0);
  });
});
