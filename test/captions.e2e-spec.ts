import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { Asset } from '#libs/assets';
import { newId } from '#libs/core';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { IntegrationConnection } from '#libs/integrations';
import { Render } from '#libs/renders';
import { createStorage, outputKey, type StorageDriver } from '#libs/storage';
import {
  startAssemblyAiFake, startDeepgramFake, startGoogleSpeechFake, synthesizeSpeech, wordErrorRate,
  type AssemblyAiFake, type DeepgramFake, type GoogleSpeechFake, type SynthesizedSpeech,
} from '#testing/captions';
import { ffmpegFile, sampleMedia } from '#testing/media';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { JobQueues } from '#libs/queue';
import { TranscriptionsService } from '#libs/captions';
import { multipart, queueEvents, startApi, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Contract §2 (Transcription, Caption provider), §3 (Transcription status), §4.3 (every route and
// option), §4.5 (the speech-gamma rows), §5 (integrations:read, assets:read, assets:write), §7
// (integration codes), §8 (caption limits); decisions.md "Assets and transcriptions" (queued →
// processing → done | failed; 200 on a cache hit, else 202), the 409 integration codes.

type Json = Record<string, unknown>;
type TranscriptionJson = {
  id: string; status: string; provider: string; languageCode: string | null; text: string | null; fromCache: boolean; audioSec: number | null;
  cues: { start: number; end: number; text: string; words: { word: string; start: number; end: number }[] }[] | null;
  vttUrl: string | null; srtUrl: string | null; error: { code: string; message: string } | null;
};

/** A 2-second mp4 (pictures) with `wav` as its sound track. */
async function withSound(wav: Buffer): Promise<Buffer> {
  return ffmpegFile(['-i', 'v.mp4', '-i', 'a.wav', '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac', '-shortest'], 'mp4', { 'v.mp4': await sampleMedia.mp4(2), 'a.wav': wav });
}

const SCRIPT = 'Hello world. This is a caption test with eight words spoken slowly. Goodbye now.';

describe('captions and transcriptions (§4.3, §4.5 speech-gamma)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let storage: StorageDriver;
  let alpha: DeepgramFake;
  let beta: AssemblyAiFake;
  let gamma: GoogleSpeechFake;
  let files: Server;
  let filesUrl: string;
  const served = new Map<string, Buffer>();
  // ws: alpha and gamma connected; bare: nothing connected; local: beta on the offline engine.
  let ws: { workspaceId: string; liveKey: string };
  let bare: { workspaceId: string; liveKey: string };
  let local: { workspaceId: string; liveKey: string };
  let speech: SynthesizedSpeech;
  let speechWav: Buffer;
  let speechDir: string;

  beforeAll(async () => {
    [alpha, beta, gamma] = await Promise.all([startDeepgramFake(), startAssemblyAiFake(), startGoogleSpeechFake()]);
    files = createServer((req, res) => {
      const body = served.get(req.url ?? '');
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/octet-stream' }).end(body ?? 'not here');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    api = await startApi({ SPEECH_POLL_INTERVAL_MS: '20', SPEECH_PROVIDER_TIMEOUT_MS: '20000' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    storage = createStorage(api.config);
    const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Captions', '--plan', plan)).json as typeof ws;
    [ws, bare, local] = [await create(), await create(), await create()];
    speechDir = await mkdtemp(join(tmpdir(), 'captions-e2e-'));
    speech = await synthesizeSpeech(['the quick brown fox jumps over the lazy dog', 'please call me tomorrow morning', 'we will meet at the station at seven'], { dir: speechDir });
    speechWav = await readFile(speech.path);
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await Promise.all([alpha.close(), beta.close(), gamma.close(), new Promise((r) => files.close(r)), rm(speechDir, { recursive: true, force: true })]);
  });

  const inject = (method: 'GET' | 'POST', url: string, key: string, payload?: Json | Buffer, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key, ...headers }, ...(payload ? { payload } : {}) });
  const connect = (workspaceId: string, ...flags: string[]) => api.cli('integration:connect', '--workspace', workspaceId, ...flags);
  const uploadAsset = async (key: string, bytes: Buffer, filename: string): Promise<string> => {
    const body = multipart([{ name: 'file', file: bytes, filename }]);
    const res = await inject('POST', '/v1/assets', key, body.payload, body.headers);
    expect(res.statusCode).toBe(201);
    const id = res.json().data.id as string;
    await until(async () => ((await allWorkspaces(orm).fork().findOne(Asset, { id }))?.status === 'ready') || undefined, `asset ${id} ready`, 60_000);
    return id;
  };
  /** Waits for a transcription to leave queued/processing; answers it as GET shows it. */
  const settled = async (id: string, key = ws.liveKey): Promise<TranscriptionJson> => {
    return until(async () => {
      const t = (await inject('GET', `/v1/transcriptions/${id}`, key)).json().data as TranscriptionJson;
      return ['done', 'failed'].includes(t.status) ? t : undefined;
    }, `transcription ${id}`, 90_000);
  };
  const fetchText = async (url: string) => (await api.app.inject({ method: 'GET', url: new URL(url).pathname })).body;

  let mp3Asset: string;
  let videoAsset: string;
  let firstAudioSec = 0;

  it('§4.3 providers before anything is connected: three, none connected, a cache with nothing in it', async () => {
    const res = await inject('GET', '/v1/captions/providers', bare.liveKey);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data.providers.map((p: Json) => p.slug)).toEqual(['speech-alpha', 'speech-beta', 'speech-gamma']);
    expect(data.providers.every((p: Json) => p.connected === false && p.recommended === false && p.account === null)).toBe(true);
    expect(data.connected).toBe(0);
    expect(data.cache).toEqual({ transcribed: 0, reused: 0, secondsSaved: 0, hitRate: 0 });
    // support is the adapters' own: Google's v1 adapter reads no video and labels no speakers.
    const gammaSupport = data.providers[2].support;
    expect(gammaSupport).toMatchObject({ video: false, diarize: false, multiLanguage: true });
    expect(data.providers[0].support).toMatchObject({ diarize: true, keywords: true, autoLanguage: true });
    expect(gammaSupport.maxBytes).toBeGreaterThan(0);
  });

  it('§7 no provider connected → 409 INTEGRATION_NOT_CONNECTED before anything is held', async () => {
    const res = await inject('POST', '/v1/captions', bare.liveKey, { audioUrl: `${filesUrl}/x.wav` });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('INTEGRATION_NOT_CONNECTED');
    expect((await inject('GET', '/v1/transcriptions', bare.liveKey)).json().data).toEqual([]);
    const gammaPath = await inject('GET', '/v1/integrations/speech-gamma/languages', bare.liveKey);
    expect(gammaPath.statusCode).toBe(409);
  });

  it('§7 a plan without integrations → 402 LIMIT_INTEGRATION_NOT_ALLOWED', async () => {
    const free = (await api.cli('workspace:create', '--name', 'Free', '--plan', 'free')).json as typeof ws;
    await connect(free.workspaceId, '--provider', 'speech-alpha', '--engine', 'local');
    const res = await inject('POST', '/v1/captions', free.liveKey, { audioUrl: `${filesUrl}/x.wav` });
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('LIMIT_INTEGRATION_NOT_ALLOWED');
  });

  it('connects alpha and gamma to their loopback providers; the list shows alpha recommended', async () => {
    expect((await connect(ws.workspaceId, '--provider', 'speech-alpha', '--api-key', alpha.apiKey, '--base-url', alpha.baseUrl, '--account-email', 'dg@example.com')).code).toBe(0);
    expect((await connect(ws.workspaceId, '--provider', 'speech-gamma', '--api-key', gamma.apiKey, '--base-url', gamma.baseUrl)).code).toBe(0);
    const data = (await inject('GET', '/v1/captions/providers', ws.liveKey)).json().data;
    expect(data.connected).toBe(2);
    expect(data.providers.map((p: Json) => [p.slug, p.connected, p.recommended, p.account])).toEqual([
      ['speech-alpha', true, true, 'dg@example.com'], ['speech-beta', false, false, null], ['speech-gamma', true, false, null],
    ]);
  });

  it('§4.3 options: the default provider\'s, a named one\'s (auto only where it detects), 404 for an unknown one', async () => {
    const def = (await inject('GET', '/v1/captions/options', ws.liveKey)).json().data;
    expect(def.provider).toBe('speech-alpha');
    expect(def.languages[0]).toEqual({ code: 'auto', label: expect.any(String) });
    expect(def.models.length).toBeGreaterThan(0);
    expect(def.models[0]).toEqual({ id: expect.any(String), label: expect.any(String), hint: expect.any(String) });
    const g = (await inject('GET', '/v1/captions/options/speech-gamma', ws.liveKey)).json().data;
    expect(g.provider).toBe('speech-gamma');
    expect(g.languages.some((l: Json) => l.code === 'auto')).toBe(false);
    expect(g.languages.some((l: Json) => l.code === 'en-US')).toBe(true);
    expect((await inject('GET', '/v1/captions/options/speech-delta', ws.liveKey)).statusCode).toBe(404);
  });

  it('§4.3/§8 bad bodies → 422 with errors by field, nothing queued', async () => {
    const bad = async (body: Json, field: string) => {
      const res = await inject('POST', '/v1/captions', ws.liveKey, body);
      expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 422, code: 'VALIDATION_FAILED' });
      expect(Object.keys(res.json().errors)).toContain(field);
    };
    await bad({}, 'audioUrl');
    await bad({ audioUrl: `${filesUrl}/a.wav`, assetId: 'ast_x' }, 'assetId');
    await bad({ audioUrl: 'ftp://example.com/a.wav' }, 'audioUrl');
    await bad({ audioUrl: `${filesUrl}/a.wav`, wordsPerCue: 13 }, 'wordsPerCue');
    await bad({ audioUrl: `${filesUrl}/a.wav`, wordsPerCue: 0 }, 'wordsPerCue');
    await bad({ audioUrl: `${filesUrl}/a.wav`, alternativeLanguageCodes: ['es', 'fr', 'de', 'it'] }, 'alternativeLanguageCodes');
    await bad({ audioUrl: `${filesUrl}/a.wav`, languageCode: 'english please' }, 'languageCode');
    await bad({ audioUrl: `${filesUrl}/a.wav`, cache: 'sometimes' }, 'cache');
    await bad({ audioUrl: `${filesUrl}/a.wav`, provider: 'speech-delta' }, 'provider');
    await bad({ audioUrl: `${filesUrl}/a.wav`, color: 'red' }, 'color');
    expect((await inject('GET', '/v1/transcriptions', ws.liveKey)).json().data).toEqual([]);
  });

  it('§4.3 an asset: 202 queued, then done with cues, per-word timings and .vtt/.srt files; the provider got the settings', async () => {
    mp3Asset = await uploadAsset(ws.liveKey, await sampleMedia.mp3(3), 'voice.mp3');
    alpha.say(SCRIPT);
    const res = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, diarize: true, keywords: ['caption'], model: 'nova-2', wordsPerCue: 3 });
    expect(res.statusCode).toBe(202);
    expect(res.json().data).toMatchObject({ status: 'queued', provider: 'speech-alpha', cues: null });
    const t = await settled(res.json().data.id);
    expect(t.status).toBe('done');
    expect(t.fromCache).toBe(false);
    expect(t.text).toBe(SCRIPT);
    firstAudioSec = t.audioSec ?? 0;
    expect(firstAudioSec).toBeGreaterThan(0);
    // wordsPerCue 3, a break after each full stop: "Hello world." stands alone.
    expect(t.cues![0].text).toBe('Hello world.');
    expect(t.cues!.every((c) => c.words.length <= 3 && c.words.length > 0)).toBe(true);
    expect(t.cues![1].words[0]).toMatchObject({ word: 'This', start: expect.any(Number), end: expect.any(Number) });
    const listen = alpha.sent('/v1/listen').at(-1)!;
    expect(listen.query).toMatchObject({ model: ['nova-2'], diarize: ['true'], punctuate: ['true'], keywords: ['caption'] });
    expect(listen.headers.authorization).toBe('[redacted]');
    const vtt = await fetchText(t.vttUrl!);
    expect(vtt.startsWith('WEBVTT')).toBe(true);
    expect(vtt).toContain('Hello world.');
    const srt = await fetchText(t.srtUrl!);
    expect(srt).toMatch(/^1\r?\n00:00:00,000 --> 00:00:0\d,\d{3}\r?\nHello world\./);
  });

  it('the cache: the same recording and settings → 200 done at once, no provider call; a new wordsPerCue re-cuts for free', async () => {
    const calls = alpha.sent('/v1/listen').length;
    const again = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, diarize: true, keywords: ['caption'], model: 'nova-2', wordsPerCue: 3 });
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toMatchObject({ status: 'done', fromCache: true, text: SCRIPT });
    const recut = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, diarize: true, keywords: ['caption'], model: 'nova-2', wordsPerCue: 1 });
    expect(recut.statusCode).toBe(200);
    const cues = recut.json().data.cues as TranscriptionJson['cues'];
    expect(cues!.length).toBe(SCRIPT.split(' ').length);
    expect(alpha.sent('/v1/listen')).toHaveLength(calls);
    // Other recognition settings are another cache entry: the provider is asked again.
    const other = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, model: 'nova-2' });
    expect(other.statusCode).toBe(202);
    expect((await settled(other.json().data.id)).fromCache).toBe(false);
    expect(alpha.sent('/v1/listen')).toHaveLength(calls + 1);
  });

  it('cache: false and "fresh" force a new transcription; the figures count what happened', async () => {
    const calls = alpha.sent('/v1/listen').length;
    for (const cache of [false, 'fresh']) {
      const res = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, model: 'nova-2', cache });
      expect(res.statusCode).toBe(202);
      expect((await settled(res.json().data.id)).fromCache).toBe(false);
    }
    expect(alpha.sent('/v1/listen')).toHaveLength(calls + 2);
    const { cache } = (await inject('GET', '/v1/captions/providers', ws.liveKey)).json().data;
    // Transcribed: the first, "other", false, fresh; reused: the repeat and the re-cut.
    expect(cache).toEqual({ transcribed: 4, reused: 2, secondsSaved: Math.round(2 * firstAudioSec), hitRate: 0.333 });
  });

  it('save: false writes no files', async () => {
    const res = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, model: 'nova-2', save: false });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ vttUrl: null, srtUrl: null, status: 'done' });
  });

  it('422 naming the providers that can: diarize on gamma, a video on gamma', async () => {
    const diarize = await inject('POST', '/v1/captions', ws.liveKey, { assetId: mp3Asset, provider: 'speech-gamma', diarize: true });
    expect(diarize.statusCode).toBe(422);
    expect(diarize.json().message).toMatch(/speech-alpha \(connected\), speech-beta/);
    videoAsset = await uploadAsset(ws.liveKey, await withSound(await sampleMedia.wav(2)), 'clip.mp4');
    const video = await inject('POST', '/v1/captions', ws.liveKey, { assetId: videoAsset, provider: 'speech-gamma' });
    expect(video.statusCode).toBe(422);
    expect(video.json().message).toContain('does not read video');
    expect(video.json().message).toContain('speech-alpha (connected)');
    // No provider named: gamma is skipped for a video, alpha takes it.
    alpha.say('A video with sound.');
    const chosen = await inject('POST', '/v1/captions', ws.liveKey, { assetId: videoAsset });
    expect(chosen.statusCode).toBe(202);
    expect(chosen.json().data.provider).toBe('speech-alpha');
    expect((await settled(chosen.json().data.id)).text).toBe('A video with sound.');
  });

  it('an audioUrl is fetched (SSRF-checked) and transcribed; one that answers 404 fails with MEDIA_UNAVAILABLE', async () => {
    served.set('/voice.wav', await sampleMedia.wav(2));
    alpha.say('From a link.');
    const res = await inject('POST', '/v1/captions', ws.liveKey, { audioUrl: `${filesUrl}/voice.wav` });
    expect(res.statusCode).toBe(202);
    expect(await settled(res.json().data.id)).toMatchObject({ status: 'done', text: 'From a link.', audioSec: expect.any(Number) });
    const missing = await inject('POST', '/v1/captions', ws.liveKey, { audioUrl: `${filesUrl}/gone.wav` });
    const failed = await settled(missing.json().data.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'MEDIA_UNAVAILABLE' } });
    expect(failed.error!.message).toContain('404');
  });

  it('a renderId: the audio track of a finished video render is transcribed; an unfinished one is 422, another workspace\'s 404', async () => {
    const id = newId('render');
    const key = outputKey(id, 'mp4');
    await storage.put(key, await withSound(speechWav));
    const em = forWorkspace(orm, ws.workspaceId);
    const base = {
      workspaceId: ws.workspaceId, kind: 'video' as const, mode: 'live' as const, format: 'mp4', width: 64, height: 48, duration: 2, fps: 10, scale: 1, credits: 1,
      watermarked: false, progress: 1, cancelRequested: false, edit: {}, attempts: 1,
    };
    em.create(Render, { ...base, id, status: 'done', outputKey: key, fileSizeBytes: 1000, completedAt: new Date() } as never);
    const running = newId('render');
    em.create(Render, { ...base, id: running, status: 'rendering' } as never);
    await em.flush();
    alpha.say('Spoken in a render.');
    const res = await inject('POST', '/v1/captions', ws.liveKey, { renderId: id });
    expect(res.statusCode).toBe(202);
    expect(await settled(res.json().data.id)).toMatchObject({ status: 'done', text: 'Spoken in a render.' });
    // What went to the provider was the audio track alone (WAV), not the mp4.
    expect(alpha.sent('/v1/listen').at(-1)!.headers['content-type']).toBe('audio/wav');
    const notYet = await inject('POST', '/v1/captions', ws.liveKey, { renderId: running });
    expect(notYet.statusCode).toBe(422);
    expect(notYet.json().errors.renderId[0]).toContain('rendering');
    expect((await inject('POST', '/v1/captions', bare.liveKey, { renderId: id, provider: 'speech-alpha' })).json().code).toBe('INTEGRATION_NOT_CONNECTED');
    await connect(bare.workspaceId, '--provider', 'speech-alpha', '--api-key', alpha.apiKey, '--base-url', alpha.baseUrl);
    const foreign = await inject('POST', '/v1/captions', bare.liveKey, { renderId: id });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('RENDER_NOT_FOUND');
  });

  it('a provider that fails: a job error fails the transcription with its message; a 500 is retried and recovers', async () => {
    await connect(local.workspaceId, '--provider', 'speech-beta', '--api-key', beta.apiKey, '--base-url', beta.baseUrl);
    const asset = await uploadAsset(local.liveKey, await sampleMedia.wav(1), 'beta.wav');
    beta.say('Never read.').fail('job-error', 'Audio file is too short');
    const res = await inject('POST', '/v1/captions', local.liveKey, { assetId: asset });
    const failed = await settled(res.json().data.id, local.liveKey);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'TRANSCRIPTION_FAILED' } });
    expect(failed.error!.message).toContain('Audio file is too short');

    beta.say('Second time lucky.').fail('server-error');
    const before = beta.requests.length;
    const retried = await inject('POST', '/v1/captions', local.liveKey, { assetId: asset, cache: 'fresh' });
    await until(async () => beta.requests.length > before || undefined, 'the first attempt');
    beta.recover();
    expect(await settled(retried.json().data.id, local.liveKey)).toMatchObject({ status: 'done', text: 'Second time lucky.' });
  }, 60_000);

  it('a revoked key → the transcription fails INTEGRATION_REAUTH_REQUIRED, the connection is marked, the next request is 409', async () => {
    const asset = await uploadAsset(local.liveKey, await sampleMedia.ogg(1), 'revoked.ogg');
    beta.revokeKey();
    const res = await inject('POST', '/v1/captions', local.liveKey, { assetId: asset });
    expect(await settled(res.json().data.id, local.liveKey)).toMatchObject({ status: 'failed', error: { code: 'INTEGRATION_REAUTH_REQUIRED' } });
    const conn = await allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: local.workspaceId, provider: 'speech-beta' });
    expect(conn.status).toBe('reauth_required');
    const next = await inject('POST', '/v1/captions', local.liveKey, { assetId: asset });
    expect(next.statusCode).toBe(409);
    expect(next.json().code).toBe('INTEGRATION_REAUTH_REQUIRED');
  });

  it('the offline engine (--engine local): synthesised speech comes back as words at their times', async () => {
    await connect(local.workspaceId, '--provider', 'speech-beta', '--engine', 'local');
    const asset = await uploadAsset(local.liveKey, speechWav, 'speech.wav');
    const res = await inject('POST', '/v1/captions', local.liveKey, { assetId: asset, wordsPerCue: 4 });
    expect(res.statusCode).toBe(202);
    const t = await settled(res.json().data.id, local.liveKey);
    expect(t.status).toBe('done');
    const reference = speech.phrases.map((p) => p.text).join(' ');
    const wer = wordErrorRate(reference, t.text ?? '');
    console.log(`offline engine word error rate on synthesised speech: ${(wer * 100).toFixed(0)}% ("${t.text}")`);
    expect(wer).toBeLessThan(0.75);
    // Every recognised word lies inside the window of a spoken phrase.
    const words = t.cues!.flatMap((c) => c.words);
    expect(words.length).toBeGreaterThan(5);
    for (const w of words) expect(speech.phrases.some((p) => w.start >= p.start - 0.35 && w.end <= p.end + 0.35)).toBe(true);
    // Cues break at the 1.5 s pauses between phrases.
    expect(t.cues!.every((c) => speech.phrases.some((p) => c.start >= p.start - 0.35 && c.end <= p.end + 0.35))).toBe(true);
  }, 120_000);

  it('the older path POST /v1/transcriptions: same engine, Deprecation and Link headers', async () => {
    const res = await inject('POST', '/v1/transcriptions', ws.liveKey, { assetId: mp3Asset, provider: 'speech-alpha', languageCode: 'en-US', wordsPerCue: 2 });
    expect([200, 202]).toContain(res.statusCode);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.link).toBe('</api/v1/captions>; rel="successor-version"');
    expect((await settled(res.json().data.id)).status).toBe('done');
    // Options only the new path has are refused here.
    const diarize = await inject('POST', '/v1/transcriptions', ws.liveKey, { assetId: mp3Asset, diarize: true });
    expect(diarize.statusCode).toBe(422);
  });

  it('§4.3 list (limit 1–100, default 20) and get; 404 TRANSCRIPTION_NOT_FOUND across workspaces', async () => {
    const list = (await inject('GET', '/v1/transcriptions', ws.liveKey)).json().data as Json[];
    expect(list.length).toBeGreaterThan(5);
    expect(Object.keys(list[0]).sort()).toEqual(['id', 'languageCode', 'mode', 'srtUrl', 'status']);
    // Issue 28: each transcription carries the mode it was asked in (this file asks with a live key).
    expect(new Set(list.map((t) => t.mode))).toEqual(new Set(['live']));
    expect((await inject('GET', '/v1/transcriptions?limit=2', ws.liveKey)).json().data).toHaveLength(2);
    const over = await inject('GET', '/v1/transcriptions?limit=101', ws.liveKey);
    expect(over.statusCode).toBe(422);
    expect(over.json().errors['query.limit']).toBeDefined();
    const foreign = await inject('GET', `/v1/transcriptions/${list[0].id as string}`, bare.liveKey);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('TRANSCRIPTION_NOT_FOUND');
    const narrow = (await api.cli('key:create', '--workspace', ws.workspaceId, '--scopes', 'assets:read')).json.key as string;
    expect((await inject('GET', '/v1/transcriptions', narrow)).statusCode).toBe(200);
    expect((await inject('POST', '/v1/captions', narrow, { assetId: mp3Asset })).json().code).toBe('INSUFFICIENT_SCOPE');
    expect((await inject('GET', '/v1/captions/providers', narrow)).json().code).toBe('INSUFFICIENT_SCOPE');
  });

  it('§4.5 speech-gamma: languages; captions of an audio asset with its own limits; a video or a render refused', async () => {
    const langs = (await inject('GET', '/v1/integrations/speech-gamma/languages', ws.liveKey)).json().data.languages as Json[];
    expect(langs.some((l) => l.code === 'en-US')).toBe(true);
    expect(langs.some((l) => l.code === 'auto')).toBe(false);
    gamma.say('Google style words.');
    const res = await inject('POST', '/v1/integrations/speech-gamma/captions', ws.liveKey, { assetId: mp3Asset, alternativeLanguageCodes: ['es-ES'], name: 'episode-1' });
    expect(res.statusCode).toBe(202);
    const done = await settled(res.json().data.id);
    expect(done).toMatchObject({ status: 'done', provider: 'speech-gamma', text: 'Google style words.', languageCode: expect.any(String) });
    // `name` names the files.
    expect(done.vttUrl).toMatch(/\/episode-1\.vtt$/);
    expect(done.srtUrl).toMatch(/\/episode-1\.srt$/);
    expect(await fetchText(done.vttUrl!)).toContain('Google style words.');
    const sent = gamma.sent('/v1/speech:longrunningrecognize').at(-1)!.json as { config: Json };
    expect(sent.config).toMatchObject({ languageCode: 'en-US', alternativeLanguageCodes: ['es-ES'], enableWordTimeOffsets: true, enableAutomaticPunctuation: true });
    for (const [body, field] of [
      [{ assetId: videoAsset }, 'assetId'],
      [{ renderId: 'rnd_01' }, 'renderId'],
      [{ assetId: mp3Asset, alternativeLanguageCodes: ['a-b', 'es', 'fr', 'de'] }, 'alternativeLanguageCodes'],
      [{ assetId: mp3Asset, wordsPerCue: 13 }, 'wordsPerCue'],
      [{ assetId: mp3Asset, diarize: true }, 'diarize'],
    ] as const) {
      const bad = await inject('POST', '/v1/integrations/speech-gamma/captions', ws.liveKey, body);
      expect({ status: bad.statusCode, field: Object.keys(bad.json().errors ?? {}) }).toEqual({ status: 422, field: expect.arrayContaining([field]) });
    }
  });
  it('transcriptions.sweep hands a transcription whose job was lost to the workers again', async () => {
    // Queued, but its job never reached Redis (Redis restarted without its data).
    const lost = await worker.get(TranscriptionsService).create(ws.workspaceId, {
      mode: 'live', route: 'captions', provider: 'speech-alpha', engine: 'provider', source: { kind: 'assetId', value: mp3Asset },
      settings: { languageCode: 'en-US', alternativeLanguageCodes: [], model: 'nova-2', diarize: false, keywords: [], punctuation: true, filterProfanity: false },
      cueOptions: { wordsPerCue: 4, charsPerCue: 42, maxCueSec: 6 }, cacheMode: 'fresh', save: false, name: null,
    });
    alpha.say('Found again.');
    const queues = worker.get(JobQueues);
    const events = await queueEvents(queues, 'system');
    try {
      const job = await queues.add('transcriptions.sweep', { now: new Date(Date.now() + 3600_000).toISOString() });
      expect(await job.waitUntilFinished(events, 30_000)).toMatchObject({ requeued: 1 });
    } finally {
      await events.close();
    }
    expect(await settled(lost.id)).toMatchObject({ status: 'done', text: 'Found again.' });
  });
});
