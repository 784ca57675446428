import { freePort, startApi, type TestApi } from './harness.js';
import { until, workerProcesses } from './render-helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

// Issue 30 "Metrics": GET /metrics in Prometheus' text format on the API and on the worker's own
// listener, for a bearer of METRICS_TOKEN; after a still, a video and their webhook deliveries the
// counters moved by exactly what happened (docs/decisions.md "Fleet (issue 30): metrics").

const TOKEN = 'metrics-token-for-the-test-0123456789';

type Samples = Map<string, number>;

/** The exposition's samples by `name{labels sorted}` (comments and blank lines left out). */
function parse(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`).filter((l) => !l.startsWith('process=')).sort();
    out.set(`${m[1]}{${labels.join(',')}}`, Number(m[3]));
  }
  return out;
}
const delta = (after: Samples, before: Samples, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

describe('metrics (issue 30)', () => {
  let api: TestApi;
  let receiver: Receiver;
  let receiverUrl: string;
  let workerUrl: string;
  let key: string;
  const workers = workerProcesses(() => ({ ...api.env, WORKER_METRICS_PORT: new URL(workerUrl).port }));

  const scrapeApi = async () => {
    const res = await api.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, expect.stringContaining('text/plain')]);
    return parse(res.body);
  };
  const scrapeWorker = async () => {
    const res = await fetch(workerUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return parse(await res.text());
  };
  const post = (url: string, body: unknown) => api.app.inject({ method: 'POST', url: `/api${url}`, headers: { 'x-api-key': key }, payload: body as object });

  beforeAll(async () => {
    receiver = await startReceiver();
    receiverUrl = `${receiver.base}/hooks`;
    workerUrl = `http://127.0.0.1:${await freePort()}/metrics`;
    api = await startApi({ METRICS_TOKEN: TOKEN, VIDEO_ENGINE: 'on' });
    key = ((await api.cli('workspace:create', '--name', 'Metered', '--plan', 'pro')).json as { liveKey: string }).liveKey;
    workers.spawn();
    await until(async () => (await fetch(workerUrl, { headers: { authorization: `Bearer ${TOKEN}` } }).catch(() => null))?.status === 200, 'the worker\'s metrics listener', 60_000, 200);
  }, 120_000);
  afterAll(async () => {
    workers.killAll();
    await receiver?.close();
    await api?.close();
  });

  it('the worker\'s listener answers /livez to anyone (a liveness probe), and nothing else', async () => {
    const livez = await fetch(new URL('/livez', workerUrl));
    expect([livez.status, await livez.text()]).toEqual([200, 'ok\n']);
    expect((await fetch(new URL('/other', workerUrl))).status).toBe(404);
  });

  it('is a bearer\'s of METRICS_TOKEN only, on both listeners', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${TOKEN}`]) {
      const res = await api.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect([authorization, res.statusCode]).toEqual([authorization, 401]);
      expect([authorization, (await fetch(workerUrl, { headers: authorization ? { authorization } : {} })).status]).toEqual([authorization, 401]);
    }
  });

  it('after a still, a video and their webhook deliveries, the counters moved by exactly what happened', async () => {
    const hook = await post('/v1/webhooks', { url: receiverUrl, events: ['render.completed'] });
    expect(hook.statusCode).toBe(201);
    const [apiBefore, workerBefore] = [await scrapeApi(), await scrapeWorker()];
    const still = await post('/v1/render', { edit: { timeline: { background: '#123456', tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 8 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 64, height: 64 } } } });
    expect([still.statusCode, still.json().data.status]).toEqual([200, 'done']);
    // The worker's video engine announces itself once its browser is up (503 ENGINE_UNAVAILABLE until then, nothing held).
    const video = await until(async () => {
      const res = await post('/v1/render', { edit: { timeline: { background: '#654321', tracks: [{ clips: [{ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 20, height: 20 } }, start: 0, length: 1 }] }] }, output: { format: 'mp4', fps: 12, size: { width: 96, height: 64 } } } });
      return res.statusCode === 503 ? undefined : res;
    }, 'the video engine', 60_000, 250);
    expect([video.statusCode, video.json().code]).toEqual([202, undefined]);
    const videoId = video.json().data.id as string;
    await until(async () => ((await api.app.inject({ method: 'GET', url: `/api/v1/render/${videoId}`, headers: { 'x-api-key': key } })).json().data.status === 'done'), 'the video', 90_000, 200);
    await until(() => receiver.hits.length >= 2, 'both render.completed deliveries', 30_000, 50);
    const [apiAfter, workerAfter] = await until(async () => {
      const pair = [await scrapeApi(), await scrapeWorker()] as const;
      return delta(pair[1], workerBefore, 'mr_webhook_deliveries_total{outcome="delivered"}') + delta(pair[0], apiBefore, 'mr_webhook_deliveries_total{outcome="delivered"}') >= 2 ? pair : undefined;
    }, 'the deliveries counted', 10_000, 100);
    const both = (k: string) => delta(apiAfter, apiBefore, k) + delta(workerAfter, workerBefore, k);
    // Renders settled, wherever they were settled: one still, one video, nothing else.
    expect(both('mr_renders_total{format="png",kind="image",outcome="done"}')).toBe(1);
    expect(both('mr_renders_total{format="mp4",kind="video",outcome="done"}')).toBe(1);
    expect(both('mr_renders_total{format="mp4",kind="video",outcome="failed"}')).toBe(0);
    expect(both('mr_render_duration_seconds_count{format="mp4",kind="video",outcome="done"}')).toBe(1);
    // Two deliveries, both delivered (one event each to one endpoint).
    expect([both('mr_webhook_deliveries_total{outcome="delivered"}'), both('mr_webhook_deliveries_total{outcome="failed"}'), receiver.hits.length]).toEqual([2, 0, 2]);
    // The API counted its requests by route template: two renders made, one of them answered 202.
    expect(delta(apiAfter, apiBefore, 'mr_http_requests_total{method="POST",route="/api/v1/render",status="200"}')).toBe(1);
    expect(delta(apiAfter, apiBefore, 'mr_http_requests_total{method="POST",route="/api/v1/render",status="202"}')).toBe(1);
    expect(delta(apiAfter, apiBefore, 'mr_http_requests_total{method="GET",route="/api/v1/render/:id",status="200"}')).toBeGreaterThanOrEqual(1);
    expect([...apiAfter.keys()].some((k) => /rnd_|org_|ast_|req_/.test(k))).toBe(false); // no ids in labels
    // Sampled: every queue's depth, credits held (none now), the outbox lag; the process's own figures.
    for (const s of [apiAfter, workerAfter]) {
      expect(s.get('mr_queue_jobs{queue="videos",state="waiting"}')).toBe(0);
      expect(s.get('mr_credits_held{}')).toBe(0);
      expect(s.get('mr_outbox_lag_seconds{}')).toBeGreaterThanOrEqual(0);
      expect(s.get('mr_process_resident_memory_bytes{}')).toBeGreaterThan(10 * 2 ** 20);
      expect(s.has('mr_nodejs_eventloop_lag_seconds{}')).toBe(true);
    }
  }, 150_000);
});
