import type { Redis } from 'ioredis';
import { PROBE_LIMITS } from '#libs/media';
import { createRedis, RedisKeys } from '#libs/redis';
import { noisyMp4, rangeMediaServer, sampleMedia, type RangeMediaServer } from '#testing/media';
import { startApi, type TestApi } from './harness.js';

// Issue 27 "One request cannot exhaust a worker": POST /v1/render/estimate with `length: "auto"`
// clips, for a key with only renders:read, measures media under limits (decisions.md "Hostile input
// (issue 27): outbound"): a capped count, range reads under a byte cap, a few at once, reused.
describe('hostile input (issue 27): measuring `length: "auto"` media', () => {
  let api: TestApi;
  let redis: Redis;
  let media: RangeMediaServer;
  let key: string;
  let workspaceId: string;
  let bigSize: number;
  const estimate = (edit: unknown) => api.app.inject({ method: 'POST', url: '/api/v1/render/estimate', headers: { 'x-api-key': key }, payload: { edit } });
  const output = { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 };
  const videoClip = (src: string, start = 0) => ({ asset: { type: 'video', src }, start, length: 'auto' });
  const balance = async () => (await api.app.inject({ method: 'GET', url: '/api/v1/credits', headers: { 'x-api-key': key } })).json();

  beforeAll(async () => {
    const big = await noisyMp4(60, 'end'); // 2 s, more than 8 MB, moov at the end
    bigSize = big.length;
    media = await rangeMediaServer({ '/big.mp4': big, '/tone.wav': await sampleMedia.wav(20), '/tone.mp3': await sampleMedia.mp3(10), '/clip.webm': await sampleMedia.webm(3) }, { delayMs: 30 });
    api = await startApi();
    redis = createRedis(api.config, 'test');
    // The heartbeat of a worker running the video engine (apps/worker engine.holder.ts), set by hand: no Chromium here.
    await redis.set(new RedisKeys(api.config.redisPrefix).videoEngine(), 'test', 'PX', 600_000);
    const ws = (await api.cli('workspace:create', '--name', 'Hostile outbound', '--plan', 'pro')).json as { workspaceId: string };
    workspaceId = ws.workspaceId;
    key = ((await api.cli('key:create', '--workspace', workspaceId, '--scopes', 'renders:read')).json as { key: string }).key;
  }, 180_000);
  afterAll(async () => {
    redis.disconnect();
    await api.close();
    await media.close();
  });
  beforeEach(() => media.reset());

  it(`200 clips of length "auto" → 422 VALIDATION_FAILED naming the clip past ${PROBE_LIMITS.maxMediaPerRequest} and the limit, with no download started`, async () => {
    const before = await balance();
    const clips = Array.from({ length: 200 }, (_, i) => videoClip(`${media.origin}/big.mp4?n=${i}`, i * 2));
    const res = await estimate({ timeline: { tracks: [{ clips }] }, output });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: { [`edit.timeline.tracks[0].clips[${PROBE_LIMITS.maxMediaPerRequest}].length`]: [expect.stringContaining(`at most ${PROBE_LIMITS.maxMediaPerRequest} distinct media files`)] },
    });
    expect(media.total()).toEqual({ requests: 0, bytes: 0 });
    expect(await balance()).toEqual(before);
  });

  it('a handful of clips: each file read within the per-probe cap (a head, and a tail for the moov at the end), a few at once, the API\'s memory not growing by the files\' size; a second estimate reads nothing', async () => {
    const srcs = [...Array.from({ length: 8 }, (_, i) => `${media.origin}/big.mp4?copy=${i}`), `${media.origin}/tone.wav`, `${media.origin}/tone.mp3`, `${media.origin}/clip.webm`];
    const edit = { timeline: { tracks: srcs.map((src) => ({ clips: [videoClip(src)] })) }, output };
    edit.timeline.tracks[8]!.clips[0]!.asset.type = 'audio';
    edit.timeline.tracks[9]!.clips[0]!.asset.type = 'audio';
    const before = await balance();
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const res = await estimate(edit);
    clearInterval(sampler);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.durationSec).toBe(20); // the longest: the 20 s tone
    // 8 copies of a file over 8 MB (88+ MB in all) read at a few hundred KB each.
    expect(8 * bigSize).toBeGreaterThan(8 * PROBE_LIMITS.maxBytesPerProbe);
    for (const src of srcs) {
      const path = new URL(src).pathname;
      expect(media.requests.get(path)).toBeGreaterThan(0);
    }
    const perFile = media.total().bytes / srcs.length;
    expect(perFile).toBeLessThanOrEqual(2 * PROBE_LIMITS.stepBytes);
    expect(media.requests.get('/big.mp4')).toBe(16); // head + tail of each copy
    expect(media.maxOpen).toBeLessThanOrEqual(PROBE_LIMITS.perRequest);
    expect(peak - base).toBeLessThan(40 * 1024 * 1024);

    const served = media.total();
    const again = await estimate(edit);
    expect(again.json().data).toEqual(res.json().data);
    expect(media.total()).toEqual(served);
    expect(await balance()).toEqual(before); // an estimate spends nothing
    // The API still answers.
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/keys/current', headers: { 'x-api-key': key } })).statusCode).toBe(200);
  }, 60_000);
});
