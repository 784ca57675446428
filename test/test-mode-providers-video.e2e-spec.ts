import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import { Transcription } from '#libs/captions';
import { forWorkspace, type Orm } from '#libs/db';
import { startDeepgramFake, synthesizeSpeech, type DeepgramFake } from '#testing/captions';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Issue 28 "A test key never reaches a real provider": a test render's alias:// captions (docs/captions.md
// "Captions in videos") are transcribed by the offline engine, not the workspace's speech provider;
// docs/decisions.md "Test mode (issue 28): providers, messaging, workflows".

describe('test mode: a test render\'s auto-captions use the offline engine (issue 28)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let deepgram: DeepgramFake;
  let media: Server;
  let origin: string;
  let dir: string;
  let ws: { workspaceId: string; liveKey: string; testKey: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'test-mode-speech-'));
    const speech = await synthesizeSpeech(['please call me tomorrow morning', 'we will meet at the station at seven'], { dir, gapSec: 2 });
    const wav = readFileSync(speech.path);
    media = createServer((req, res) => (req.url === '/speech.wav' ? res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav) : res.writeHead(404).end()));
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
    deepgram = await startDeepgramFake();
    api = await startApi({ VIDEO_ENGINE: 'on' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = (await api.cli('workspace:create', '--name', 'Test captions', '--plan', 'pro')).json as typeof ws;
    // The workspace's speech provider is a real one (the Deepgram-speaking adapter), not the offline engine.
    expect((await api.cli('integration:connect', '--workspace', ws.workspaceId, '--provider', 'speech-alpha', '--api-key', deepgram.apiKey, '--base-url', deepgram.baseUrl)).code).toBe(0);
  }, 240_000);
  afterAll(async () => {
    await orm.close(true);
    await worker.close();
    await api.close();
    await deepgram.close();
    await new Promise((r) => media.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('a test key\'s video with alias:// captions renders with cues from pocketsphinx; no recording reaches the speech provider', async () => {
    deepgram.say('words only the provider would say');
    const edit = {
      timeline: {
        background: '#000000',
        tracks: [
          { clips: [{ asset: { type: 'caption', src: 'alias://voice', font: { color: '#ffffff', size: 14 } }, start: 0, length: 'alias://voice' }] },
          { clips: [{ alias: 'voice', asset: { type: 'audio', src: `${origin}/speech.wav` }, start: 0, length: 'auto' }] },
        ],
      },
      output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 },
    };
    const post = () => api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': ws.testKey }, payload: { edit } });
    // The engine starts in the background (bundle + browser): 503 until it is up.
    const res = await until(async () => {
      const r = await post();
      return r.statusCode !== 503 && r;
    }, 'the video engine', 180_000, 500);
    expect(res.statusCode).toBe(202);
    const id = res.json().data.id as string;
    const done = await until(async () => {
      const r = (await api.app.inject({ method: 'GET', url: `/api/v1/render/${id}`, headers: { 'x-api-key': ws.testKey } })).json().data as { status: string; mode: string };
      return ['done', 'failed', 'cancelled'].includes(r.status) && r;
    }, 'the test render', 150_000, 250);
    expect(done).toMatchObject({ status: 'done', mode: 'test' });
    const [t] = await forWorkspace(orm, ws.workspaceId).find(Transcription, { route: 'render' });
    expect(t).toMatchObject({ status: 'done', provider: 'speech-alpha', engine: 'local' });
    expect((t!.cues ?? []).length).toBeGreaterThan(0);
    expect(t!.text).not.toContain('provider would say');
    expect(deepgram.requests).toHaveLength(0);
  }, 360_000);
});
