import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { Transcription } from '#libs/captions';
import { allWorkspaces, type Orm } from '#libs/db';
import { JobQueues } from '#libs/queue';
import { startDeepgramFake, type DeepgramFake } from '#testing/captions';
import { sampleMedia } from '#testing/media';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Issue 32 "Captions: a repeat by URL is a cache hit"; decisions.md "Captions (issue 15)" (200 with
// the done transcription when answered from the cache at once) and "Fidelity (issue 32):
// captions-url-cache" (what an audioUrl held is remembered 24 h with its validators, checked by a HEAD).

type Json = Record<string, unknown>;
type TranscriptionJson = { id: string; status: string; fromCache: boolean; text: string | null; mode: string; completedAt: string | null };

/** One file a loopback server answers, and what it was asked. */
interface Served {
  body: Buffer;
  headers: Record<string, string>;
  /** HEAD answers this status instead (a server whose check fails). */
  headStatus?: number;
}

describe('captions: a repeat by audioUrl is a cache hit (issue 32)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let alpha: DeepgramFake;
  let files: Server;
  let filesUrl: string;
  const served = new Map<string, Served>();
  const asked: { method: string; path: string }[] = [];
  let ws: { workspaceId: string; liveKey: string; testKey: string };
  let other: { workspaceId: string; liveKey: string; testKey: string };
  // Four recordings of different bytes (each transcribed afresh the first time it is read).
  let one: Buffer;
  let two: Buffer;
  let three: Buffer;
  let four: Buffer;

  beforeAll(async () => {
    alpha = await startDeepgramFake();
    files = createServer((req, res) => {
      const path = req.url ?? '';
      asked.push({ method: req.method ?? '', path });
      const file = served.get(path);
      if (!file) return void res.writeHead(404).end();
      if (req.method === 'HEAD' && file.headStatus) return void res.writeHead(file.headStatus).end();
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(file.body.length), ...file.headers });
      res.end(req.method === 'HEAD' ? undefined : file.body);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    api = await startApi({ SPEECH_POLL_INTERVAL_MS: '20', SPEECH_PROVIDER_TIMEOUT_MS: '20000' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    const create = async () => (await api.cli('workspace:create', '--name', 'Captions by URL', '--plan', 'pro')).json as typeof ws;
    [ws, other] = [await create(), await create()];
    for (const w of [ws, other]) {
      expect((await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'speech-alpha', '--api-key', alpha.apiKey, '--base-url', alpha.baseUrl)).code).toBe(0);
    }
    [one, two, three, four] = await Promise.all([1, 2, 3, 4].map((sec) => sampleMedia.mp3(sec)));
    alpha.say('Spoken at a link.');
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await Promise.all([alpha.close(), new Promise((r) => files.close(r))]);
  });

  const post = (body: Json, key = ws.liveKey) =>
    api.app.inject({ method: 'POST', url: '/api/v1/captions', headers: { 'x-api-key': key }, payload: body });
  const settled = async (id: string, key = ws.liveKey): Promise<TranscriptionJson> => until(async () => {
    const t = (await api.app.inject({ method: 'GET', url: `/api/v1/transcriptions/${id}`, headers: { 'x-api-key': key } })).json().data as TranscriptionJson;
    return ['done', 'failed'].includes(t.status) ? t : undefined;
  }, `transcription ${id}`, 60_000);
  const count = (method: string, path: string) => asked.filter((a) => a.method === method && a.path === path).length;
  const calls = () => alpha.sent('/v1/listen').length;
  const cacheStats = async (key = ws.liveKey) => (await api.app.inject({ method: 'GET', url: '/api/v1/captions/providers', headers: { 'x-api-key': key } })).json().data.cache;
  /** A first request: 202, then done by the worker (one GET, one provider call). */
  const transcribeOnce = async (url: string, key = ws.liveKey) => {
    const before = calls();
    const res = await post({ audioUrl: url }, key);
    expect(res.statusCode).toBe(202);
    const t = await settled(res.json().data.id, key);
    expect(t).toMatchObject({ status: 'done', fromCache: false, text: 'Spoken at a link.' });
    expect(calls()).toBe(before + 1);
  };

  it('a repeat with unchanged ETag/Last-Modified → 200 done fromCache at once: one HEAD, no GET, no provider call, no job', async () => {
    const path = '/tagged.mp3';
    served.set(path, { body: one, headers: { etag: '"v1"', 'last-modified': 'Wed, 25 Nov 2026 10:00:00 GMT' } });
    await transcribeOnce(`${filesUrl}${path}`);
    expect([count('GET', path), count('HEAD', path)]).toEqual([1, 0]);
    const stats = await cacheStats();
    const before = calls();

    const again = await post({ audioUrl: `${filesUrl}${path}`, wordsPerCue: 1 });
    expect(again.statusCode).toBe(200);
    const t = again.json().data as TranscriptionJson & { cues: unknown[] };
    expect(t).toMatchObject({ status: 'done', fromCache: true, text: 'Spoken at a link.', mode: 'live' });
    expect(t.completedAt).not.toBeNull();
    expect(t.cues).toHaveLength(4); // re-cut by its own wordsPerCue
    expect([count('GET', path), count('HEAD', path)]).toEqual([1, 1]);
    expect(calls()).toBe(before);
    // No job was queued for it: the record stays as answered.
    const queued = await worker.get(JobQueues).queue('captions').getJob(t.id);
    expect(queued).toBeUndefined();
    expect(await cacheStats()).toEqual({ ...stats, reused: stats.reused + 1, hitRate: expect.any(Number), secondsSaved: expect.any(Number) });
  });

  it('per workspace: another workspace repeating the URL is not answered from the first one\'s memory (202, a GET)', async () => {
    const path = '/tagged.mp3';
    const gets = count('GET', path);
    const heads = count('HEAD', path);
    const res = await post({ audioUrl: `${filesUrl}${path}` }, other.liveKey);
    expect(res.statusCode).toBe(202);
    expect((await settled(res.json().data.id, other.liveKey)).fromCache).toBe(false);
    expect([count('GET', path), count('HEAD', path)]).toEqual([gets + 1, heads]);
  });

  it('changed content and ETag between requests → 202 and a new job that reads and transcribes the new bytes', async () => {
    const path = '/changing.mp3';
    served.set(path, { body: three, headers: { etag: '"a"' } });
    await transcribeOnce(`${filesUrl}${path}`);
    served.set(path, { body: four, headers: { etag: '"b"' } });
    const before = calls();
    const res = await post({ audioUrl: `${filesUrl}${path}` });
    expect(res.statusCode).toBe(202);
    expect(await settled(res.json().data.id)).toMatchObject({ status: 'done', fromCache: false });
    expect([count('GET', path), count('HEAD', path)]).toEqual([2, 1]);
    expect(calls()).toBe(before + 1);
    // The new bytes are what is remembered now: a repeat is a hit again.
    expect((await post({ audioUrl: `${filesUrl}${path}` })).statusCode).toBe(200);
  });

  it('a server without validators → 202 as before (no HEAD); the worker may still answer from the cache', async () => {
    const path = '/plain.mp3';
    served.set(path, { body: one, headers: {} });
    const first = await post({ audioUrl: `${filesUrl}${path}` });
    expect(first.statusCode).toBe(202);
    await settled(first.json().data.id);
    const res = await post({ audioUrl: `${filesUrl}${path}` });
    expect(res.statusCode).toBe(202);
    expect(await settled(res.json().data.id)).toMatchObject({ status: 'done', fromCache: true });
    expect([count('GET', path), count('HEAD', path)]).toEqual([2, 0]);
  });

  it('issue 28: a test caller\'s repeat is a hit in test mode, on the offline engine\'s words (no provider call)', async () => {
    const path = '/tagged.mp3';
    const before = calls();
    // The live words are another cache entry: the first test-mode request runs the offline engine.
    const first = await post({ audioUrl: `${filesUrl}${path}` }, ws.testKey);
    expect(first.statusCode).toBe(202);
    const done = await settled(first.json().data.id, ws.testKey);
    expect(done).toMatchObject({ status: 'done', fromCache: false, mode: 'test' });
    const heads = count('HEAD', path);
    const again = await post({ audioUrl: `${filesUrl}${path}` }, ws.testKey);
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toMatchObject({ status: 'done', fromCache: true, mode: 'test', text: done.text });
    expect(count('HEAD', path)).toBe(heads + 1);
    expect(calls()).toBe(before);
  });

  it('a failing HEAD, or a memory older than 24 h → 202 (never a wrong hit)', async () => {
    const path = '/checked.mp3';
    served.set(path, { body: two, headers: { 'last-modified': 'Thu, 26 Nov 2026 10:00:00 GMT' }, headStatus: 500 });
    await transcribeOnce(`${filesUrl}${path}`);
    const failing = await post({ audioUrl: `${filesUrl}${path}` });
    expect(failing.statusCode).toBe(202);
    await settled(failing.json().data.id);
    expect(count('HEAD', path)).toBe(1);

    served.set(path, { body: two, headers: { 'last-modified': 'Thu, 26 Nov 2026 10:00:00 GMT' } });
    expect((await post({ audioUrl: `${filesUrl}${path}` })).statusCode).toBe(200);
    // 25 hours later: what the URL held is forgotten.
    const old = new Date(Date.now() - 25 * 3600 * 1000);
    const em = allWorkspaces(orm).fork();
    for (const row of await em.find(Transcription, { sourceValue: `${filesUrl}${path}`, urlValidators: { $ne: null } })) {
      row.urlValidators = { ...row.urlValidators!, readAt: old.toISOString() };
      row.completedAt = old;
    }
    await em.flush();
    const heads = count('HEAD', path);
    const expired = await post({ audioUrl: `${filesUrl}${path}` });
    expect(expired.statusCode).toBe(202);
    expect(count('HEAD', path)).toBe(heads);
    await settled(expired.json().data.id);
  });
});
