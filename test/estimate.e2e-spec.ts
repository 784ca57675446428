import type { Redis } from 'ioredis';
import { createRedis, RedisKeys } from '#libs/redis';
import { startApi, type TestApi } from './harness.js';

// §2 Cost estimate, §4.1 Estimate cost; spec decisions "HTTP methods": GET /v1/render/estimate also
// answers from the query alone (type, durationSec, resolution, fps, size) when no template is named.
describe('GET /v1/render/estimate from the query alone', () => {
  let api: TestApi;
  let redis: Redis;
  let key: string;
  const get = (query: string) => api.app.inject({ method: 'GET', url: `/api/v1/render/estimate${query}`, headers: { 'x-api-key': key } });
  const post = (edit: unknown) => api.app.inject({ method: 'POST', url: '/api/v1/render/estimate', headers: { 'x-api-key': key }, payload: { edit } });
  const shape = (length: number) => ({ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 10, height: 10 } }, start: 0, length });

  beforeAll(async () => {
    api = await startApi();
    redis = createRedis(api.config, 'test');
    key = ((await api.cli('workspace:create', '--name', 'Estimates', '--plan', 'pro')).json as { liveKey: string }).liveKey;
  });
  afterAll(async () => {
    redis.disconnect();
    await api.close();
  });

  it('prices a still of a size as a render of that output is priced (the POST form agrees)', async () => {
    const res = await get('?type=png&size=2400x2400');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ kind: 'image', credits: 2, durationSec: 0, size: { width: 2400, height: 2400 }, breakdown: { duration: '0:00', size: '2400x2400', fps: 0, format: 'png', codec: 'png' } });
    const edit = { timeline: { tracks: [{ clips: [shape(1)] }] }, output: { format: 'png', size: { width: 2400, height: 2400 } } };
    expect((await post(edit)).json().data).toEqual(res.json().data);
    expect((await get('?type=jpg&resolution=hd')).json().data).toMatchObject({ kind: 'image', credits: 1, size: { width: 1280, height: 720 }, breakdown: { format: 'jpeg' } });
  });

  it('prices a video by duration, resolution and fps once a worker runs the video engine (503 ENGINE_NOT_CONFIGURED before, as the POST form)', async () => {
    expect([(await get('?durationSec=90&resolution=sd')).statusCode, (await get('?durationSec=90&resolution=sd')).json().code]).toEqual([503, 'ENGINE_NOT_CONFIGURED']);
    // The heartbeat a video worker keeps in Redis (apps/worker engine.holder.ts), set by hand: no Chromium here.
    await redis.set(new RedisKeys(api.config.redisPrefix).videoEngine(), 'test', 'PX', 60_000);
    const res = await get('?durationSec=90&resolution=sd&fps=25');
    expect(res.statusCode).toBe(200);
    // 2 started minutes, short side ≤ 720, ≤ 30 fps: 2 video credits (docs/pricing.md).
    expect(res.json().data).toMatchObject({ kind: 'video', credits: 2, durationSec: 90, breakdown: { duration: '1:30', fps: 25, format: 'mp4', codec: 'h264' } });
    const edit = { timeline: { tracks: [{ clips: [shape(90)] }] }, output: { format: 'mp4', resolution: 'sd', fps: 25 } };
    expect((await post(edit)).json().data).toEqual(res.json().data);
    expect((await get('?type=gif&durationSec=5&size=320x240')).json().data).toMatchObject({ kind: 'video', credits: 1, size: { width: 320, height: 240 }, breakdown: { format: 'gif' } });
    // The plan's ceilings apply as they do to a render (pro: 600 s, fhd).
    expect((await get('?durationSec=601')).json().code).toBe('LIMIT_VIDEO_DURATION');
    expect((await get('?durationSec=10&resolution=4k')).json().code).toBe('LIMIT_VIDEO_RESOLUTION');
  });

  it('§7: names what is wrong in the query by path (422), and a query naming nothing to price is 400', async () => {
    const cases: [string, string[]][] = [
      ['?type=mp4', ['query.durationSec']],
      ['?type=png&durationSec=3', ['query.durationSec']],
      ['?size=640x480&resolution=hd', ['query.size']],
      ['?size=big', ['query.size']],
      ['?size=8193x100', ['query.size']],
      ['?durationSec=-1', ['query.durationSec']],
      ['?templateId=tpl_x&durationSec=3&size=10x10', ['query.durationSec', 'query.size']],
    ];
    for (const [query, paths] of cases) {
      const res = await get(query);
      expect([query, res.statusCode, res.json().code, Object.keys(res.json().errors ?? {}).sort()]).toEqual([query, 422, 'VALIDATION_FAILED', paths]);
    }
    const none = await get('');
    expect([none.statusCode, none.json().code]).toEqual([400, 'INVALID_REQUEST']);
    // The POST form keeps its body: the query-only fields are unknown there.
    const posted = await api.app.inject({ method: 'POST', url: '/api/v1/render/estimate?durationSec=3', headers: { 'x-api-key': key }, payload: {} });
    expect([posted.statusCode, Object.keys(posted.json().errors ?? {})]).toEqual([422, ['query.durationSec']]);
  });
});
