import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { Asset, AssetsService } from '#libs/assets';
import { PLANS } from '#libs/workspaces';
import { allWorkspaces, type Orm } from '#libs/db';
import { IntegrationConnection } from '#libs/integrations';
import { createStorage } from '#libs/storage';
import { wordErrorRate } from '#testing/captions';
import { FAKE_VOICES, startElevenLabsFake, type ElevenLabsFake } from '#testing/voice';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Contract §4.5 (the voice-provider rows and "Generate voice-over"), §2 (Voice, Speech model,
// Character allowance), §5 (integrations:read, assets:write), §7 (402/409), §8 (voice-over text up to
// 5,000 characters); docs/voice.md (the house codes PROVIDER_UNAVAILABLE / PROVIDER_ERROR).

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string };
type AssetJson = { id: string; type: string; status: string; name: string; mimeType: string; durationSec: number | null; folder: string | null; sizeBytes: number };

const SCRIPT = 'Welcome to the spring sale. Everything in the shop is half price until Sunday evening.';

describe('voice-overs (§4.5 voice-provider)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let fake: ElevenLabsFake;
  let ws: Ws;
  let bare: Ws;

  beforeAll(async () => {
    fake = await startElevenLabsFake();
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    [ws, bare] = [await create(), await create()];
    await connectFake(ws, fake);
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await fake.close();
  });

  const create = async (plan = 'pro') => (await api.cli('workspace:create', '--name', 'Voice', '--plan', plan)).json as Ws;
  const connect = (w: Ws, ...flags: string[]) => api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'voice-provider', ...flags);
  const connectFake = async (w: Ws, f: ElevenLabsFake) => expect((await connect(w, '--api-key', f.apiKey, '--base-url', f.baseUrl)).code).toBe(0);
  const inject = (method: 'GET' | 'POST', url: string, key: string, payload?: Json) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
  const speak = (key: string, body: Json) => inject('POST', '/v1/integrations/voice-provider/speech', key, body);
  const assetCount = (w: Ws) => allWorkspaces(orm).fork().count(Asset, { workspaceId: w.workspaceId });
  /** The asset as GET /v1/assets/{id} shows it, once processing settled it. */
  const settled = (key: string, id: string) => until(async () => {
    const a = (await inject('GET', `/v1/assets/${id}`, key)).json().data as AssetJson;
    return a.status === 'ready' || a.status === 'failed' ? a : undefined;
  }, `asset ${id}`, 60_000);

  it('§7 not connected → 409 INTEGRATION_NOT_CONNECTED on every route; a plan without integrations → 402', async () => {
    for (const [method, path] of [['GET', 'voices'], ['GET', 'models'], ['GET', 'usage'], ['POST', 'speech']] as const) {
      const res = await inject(method, `/v1/integrations/voice-provider/${path}`, bare.liveKey, method === 'POST' ? { text: 'Hi', voiceId: FAKE_VOICES[0]!.voice_id } : undefined);
      expect([path, res.statusCode, res.json().code]).toEqual([path, 409, 'INTEGRATION_NOT_CONNECTED']);
    }
    const free = await create('free');
    await connectFake(free, fake);
    const res = await inject('GET', '/v1/integrations/voice-provider/voices', free.liveKey);
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_INTEGRATION_NOT_ALLOWED']);
    expect(fake.requests).toHaveLength(0);
  });

  it('§5 scopes: voices with integrations:read; a voice-over needs assets:write', async () => {
    const key = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'integrations:read')).json.key as string;
    expect((await inject('GET', '/v1/integrations/voice-provider/voices', key)).statusCode).toBe(200);
    const res = await speak(key, { text: 'Hi', voiceId: FAKE_VOICES[0]!.voice_id });
    expect([res.statusCode, res.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect(fake.spoken).toHaveLength(0);
  });

  it('§2 voices, models and the character allowance in the contract\'s shapes, read with the account\'s key', async () => {
    const voices = (await inject('GET', '/v1/integrations/voice-provider/voices', ws.liveKey)).json().data;
    expect(voices).toEqual(FAKE_VOICES.map((v) => ({ id: v.voice_id, name: v.name, category: v.category, previewUrl: v.preview_url, labels: v.labels })));
    const models = (await inject('GET', '/v1/integrations/voice-provider/models', ws.liveKey)).json().data as Json[];
    // ElevenLabs' ids without "eleven_"; the speech-to-speech model is not offered.
    expect(models.map((m) => m.id)).toEqual(['multilingual_v2', 'turbo_v2_5']);
    expect(models[0]).toEqual({ id: 'multilingual_v2', name: 'Eleven Multilingual v2', maxCharacters: 10000, languages: [{ id: 'en', name: 'English' }, { id: 'de', name: 'German' }, { id: 'fr', name: 'French' }] });
    const usage = (await inject('GET', '/v1/integrations/voice-provider/usage', ws.liveKey)).json().data;
    expect(usage).toEqual({
      tier: 'creator', characterCount: fake.characterCount, characterLimit: fake.characterLimit,
      charactersRemaining: fake.characterLimit - fake.characterCount, resetsAt: new Date(fake.resetUnix * 1000).toISOString(),
    });
  });

  it('a voice-over lands in the media library as MP3 audio, ready with its duration; the characters are the account\'s', async () => {
    const before = fake.characterCount;
    const res = await speak(ws.liveKey, { text: SCRIPT, voiceId: FAKE_VOICES[0]!.voice_id, stability: 0.4, similarityBoost: 0.8, style: 0, folder: 'ads/spring' });
    expect(res.statusCode).toBe(201);
    const answered = res.json().data as AssetJson;
    expect(answered).toMatchObject({ type: 'audio', mimeType: 'audio/mpeg', status: 'processing', folder: 'ads/spring', name: 'Welcome to the spring sale. Everything in the.mp3' });
    const call = fake.spoken.at(-1)!;
    expect(call.path).toBe(`/v1/text-to-speech/${FAKE_VOICES[0]!.voice_id}`);
    expect(call.query.output_format).toBe('mp3_44100_128');
    expect(call.json).toEqual({ text: SCRIPT, model_id: 'eleven_multilingual_v2', voice_settings: { stability: 0.4, similarity_boost: 0.8, style: 0 } });
    const ready = await settled(ws.liveKey, answered.id);
    expect(ready).toMatchObject({ id: answered.id, status: 'ready', type: 'audio' });
    expect(ready.durationSec).toBeGreaterThan(0.8);
    expect(ready.durationSec).toBeLessThan(4);
    expect(fake.characterCount - before).toBe(SCRIPT.length);
    // A named one, on another model, with the voice's own settings.
    const named = await speak(ws.liveKey, { text: 'Short one.', voiceId: FAKE_VOICES[1]!.voice_id, modelId: 'turbo_v2_5', name: 'Outro' });
    expect(named.json().data.name).toBe('Outro.mp3');
    expect(fake.spoken.at(-1)!.json).toEqual({ text: 'Short one.', model_id: 'eleven_turbo_v2_5' });
  });

  it('§8 and the body\'s rules: 422 naming the field, nothing stored and nothing sent', async () => {
    const voiceId = FAKE_VOICES[0]!.voice_id;
    const assets = await assetCount(ws);
    const spoken = fake.spoken.length;
    for (const [body, field] of [
      [{ text: 'x'.repeat(5001), voiceId }, 'text'],
      [{ voiceId }, 'text'],
      [{ text: '   ', voiceId }, 'text'],
      [{ text: 'Hi' }, 'voiceId'],
      [{ text: 'Hi', voiceId, stability: 1.5 }, 'stability'],
      [{ text: 'Hi', voiceId, similarityBoost: -0.1 }, 'similarityBoost'],
      [{ text: 'Hi', voiceId, style: 'loud' }, 'style'],
      [{ text: 'Hi', voiceId, folder: 'a,b' }, 'folder'],
    ] as [Json, string][]) {
      const res = await speak(ws.liveKey, body);
      expect([field, res.statusCode, res.json().code]).toEqual([field, 422, 'VALIDATION_FAILED']);
      expect(Object.keys(res.json().errors)).toContain(field);
    }
    expect(fake.spoken.length).toBe(spoken);
    // 5,000 characters are taken.
    expect((await speak(ws.liveKey, { text: 'a '.repeat(2500), voiceId })).statusCode).toBe(201);
    // The provider's refusals: an unknown voice or model → 422 naming it.
    const unknown = await speak(ws.liveKey, { text: 'Hi', voiceId: 'no-such-voice' });
    expect([unknown.statusCode, unknown.json().code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(unknown.json().errors.voiceId[0]).toContain('no-such-voice');
    const model = await speak(ws.liveKey, { text: 'Hi', voiceId, modelId: 'english_sts_v2' });
    expect([model.statusCode, Object.keys(model.json().errors)]).toEqual([422, ['modelId']]);
    expect(await assetCount(ws)).toBe(assets + 1);
  });

  it('§8 storage allowance: a workspace with no room left → 402 LIMIT_STORAGE before the provider is asked, nothing stored', async () => {
    const full = await create('starter');
    await connectFake(full, fake);
    const services = new AssetsService(orm, createStorage(api.config));
    const filler = await services.reserve(full.workspaceId, PLANS.starter, { mode: 'live', name: 'filler.mp4', type: 'video', mimeType: 'video/mp4', ext: 'mp4', reserveBytes: PLANS.starter.storageBytes - 1024 });
    await services.stored(filler, PLANS.starter.storageBytes - 1024, { tags: [], description: null, folder: null });
    const spoken = fake.spoken.length;
    const res = await speak(full.liveKey, { text: SCRIPT, voiceId: FAKE_VOICES[0]!.voice_id });
    expect([res.statusCode, res.json().code]).toEqual([402, 'LIMIT_STORAGE']);
    expect(fake.spoken.length).toBe(spoken);
    expect(await assetCount(full)).toBe(1);
  });

  it('provider 500, 429 or not answering → 503 PROVIDER_UNAVAILABLE with Retry-After (never a 500); not audio → 502; the connection stays', async () => {
    const assets = await assetCount(ws);
    try {
      for (const mode of ['server-error', 'rate-limit'] as const) {
        fake.failure = mode;
        for (const res of [await speak(ws.liveKey, { text: 'Hi', voiceId: FAKE_VOICES[0]!.voice_id }), await inject('GET', '/v1/integrations/voice-provider/voices', ws.liveKey)]) {
          expect([mode, res.statusCode, res.json().code]).toEqual([mode, 503, 'PROVIDER_UNAVAILABLE']);
          expect(res.headers['retry-after']).toBe('30');
          expect(res.json().message).not.toContain(fake.apiKey);
        }
      }
      fake.failure = 'not-audio';
      const res = await speak(ws.liveKey, { text: 'Hi', voiceId: FAKE_VOICES[0]!.voice_id });
      expect([res.statusCode, res.json().code]).toEqual([502, 'PROVIDER_ERROR']);
    } finally {
      fake.failure = null;
    }
    expect(await assetCount(ws)).toBe(assets);
    expect((await inject('GET', '/v1/integrations/voice-provider/usage', ws.liveKey)).statusCode).toBe(200);
  });

  it('provider 401 → the connection lapses: 409 INTEGRATION_REAUTH_REQUIRED, and reconnecting restores it', async () => {
    const other = await startElevenLabsFake();
    try {
      const lapsing = await create();
      await connectFake(lapsing, other);
      other.revoke();
      const res = await speak(lapsing.liveKey, { text: 'Hi', voiceId: FAKE_VOICES[0]!.voice_id });
      expect([res.statusCode, res.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
      expect(res.json().message).toContain('Invalid API key');
      const conn = await allWorkspaces(orm).fork().findOneOrFail(IntegrationConnection, { workspaceId: lapsing.workspaceId, provider: 'voice-provider' });
      expect(conn.status).toBe('reauth_required');
      const calls = other.requests.length;
      const next = await inject('GET', '/v1/integrations/voice-provider/voices', lapsing.liveKey);
      expect([next.statusCode, next.json().code]).toEqual([409, 'INTEGRATION_REAUTH_REQUIRED']);
      expect(other.requests.length).toBe(calls);
      // The other workspace's connection to its own account is untouched.
      expect((await inject('GET', '/v1/integrations/voice-provider/voices', ws.liveKey)).statusCode).toBe(200);
      await connectFake(lapsing, fake);
      expect((await inject('GET', '/v1/integrations/voice-provider/voices', lapsing.liveKey)).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('isolation: a voice-over belongs to its workspace only', async () => {
    const res = await speak(ws.liveKey, { text: 'Private words.', voiceId: FAKE_VOICES[0]!.voice_id });
    const id = res.json().data.id as string;
    const other = await inject('GET', `/v1/assets/${id}`, bare.liveKey);
    expect([other.statusCode, other.json().code]).toEqual([404, 'ASSET_NOT_FOUND']);
    expect((await inject('GET', '/v1/assets', bare.liveKey)).json().data).toEqual([]);
  });

  describe('the offline engine (--engine local: espeak-ng + lame)', () => {
    let local: Ws;
    beforeAll(async () => {
      local = await create();
      expect((await connect(local, '--engine', 'local')).json).toMatchObject({ provider: 'voice-provider', engine: 'local', status: 'connected' });
    });

    it('lists espeak-ng\'s voices, one model, and an honest unlimited allowance', async () => {
      const voices = (await inject('GET', '/v1/integrations/voice-provider/voices', local.liveKey)).json().data as { id: string; category: string; labels: Json }[];
      expect(voices.length).toBeGreaterThan(50);
      expect(voices.find((v) => v.id === 'en-us')).toMatchObject({ category: 'offline', labels: { language: 'en-us', engine: 'espeak-ng' } });
      const models = (await inject('GET', '/v1/integrations/voice-provider/models', local.liveKey)).json().data as Json[];
      expect(models).toHaveLength(1);
      expect(models[0]).toMatchObject({ id: 'espeak-ng', maxCharacters: 5000 });
      expect((await inject('GET', '/v1/integrations/voice-provider/usage', local.liveKey)).json().data)
        .toEqual({ tier: 'offline', characterCount: null, characterLimit: null, charactersRemaining: null, resetsAt: null });
      const unknown = await speak(local.liveKey, { text: 'Hi', voiceId: 'xx-nowhere' });
      expect([unknown.statusCode, Object.keys(unknown.json().errors)]).toEqual([422, ['voiceId']]);
      const variant = await speak(local.liveKey, { text: 'Hi', voiceId: 'en-us+nosuchvariant' });
      expect([variant.statusCode, Object.keys(variant.json().errors)]).toEqual([422, ['voiceId']]);
      const model = await speak(local.liveKey, { text: 'Hi', voiceId: 'en-us', modelId: 'multilingual_v2' });
      expect([model.statusCode, Object.keys(model.json().errors)]).toEqual([422, ['modelId']]);
    });

    it('round trip: a voice-over said offline is transcribed back by the offline caption engine', async () => {
      const text = 'The quick brown fox jumps over the lazy dog. Please call me tomorrow morning. We will meet at the station at seven.';
      const res = await speak(local.liveKey, { text, voiceId: 'en-us+klatt2' });
      expect(res.statusCode).toBe(201);
      const asset = await settled(local.liveKey, res.json().data.id as string);
      expect(asset).toMatchObject({ status: 'ready', type: 'audio', mimeType: 'audio/mpeg', name: 'The quick brown fox jumps over the lazy.mp3' });
      expect(asset.durationSec).toBeGreaterThan(4);
      expect((await api.cli('integration:connect', '--workspace', local.workspaceId, '--provider', 'speech-alpha', '--engine', 'local')).code).toBe(0);
      const started = await inject('POST', '/v1/captions', local.liveKey, { assetId: asset.id });
      expect(started.statusCode).toBe(202);
      const t = await until(async () => {
        const row = (await inject('GET', `/v1/transcriptions/${started.json().data.id as string}`, local.liveKey)).json().data as { status: string; text: string | null };
        return ['done', 'failed'].includes(row.status) ? row : undefined;
      }, 'transcription', 120_000);
      expect(t.status).toBe('done');
      const wer = wordErrorRate(text, t.text ?? '');
      console.log(`voice-over round trip word error rate: ${(wer * 100).toFixed(0)}% ("${t.text}")`);
      expect(wer).toBeLessThan(0.5);
    }, 180_000);
  });
});
