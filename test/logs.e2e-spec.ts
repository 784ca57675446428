import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, startApi, userSession, type TestApi } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';
import { until } from './render-helpers.js';

// Issue 30 "Logs that follow a render": JSON lines (LOG_FORMAT=json) from a real API process and a
// real worker process; every line about a request or a job carries its ids, so a render's id finds its life in
// both; the secrets the run used (keys, a session token, a webhook signing secret) appear nowhere.

type Line = Record<string, unknown> & { level: string; message: unknown };

describe('logs that follow a render (issue 30)', () => {
  let api: TestApi;
  let worker: ChildProcess;
  let receiver: Receiver;
  const apiOut: string[] = [];
  const workerOut: string[] = [];
  const secrets: string[] = [];
  let apiProcess: ChildProcess;
  let base: string;

  /** The JSON log records among the lines (anything else: not a record). */
  const records = (chunks: string[]): Line[] => chunks.join('').split('\n').flatMap((l) => {
    try {
      const v = JSON.parse(l) as Line;
      return typeof v === 'object' && v !== null && 'level' in v && 'pid' in v ? [v] : [];
    } catch {
      return [];
    }
  });

  beforeAll(async () => {
    receiver = await startReceiver();
    // The database, Redis and the CLI of the harness; the API and the worker as operators run them, each its own process.
    api = await startApi();
    const port = await freePort();
    base = `http://127.0.0.1:${port}/api`;
    const env = { ...process.env, ...api.env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', PORT: String(port), HOST: '127.0.0.1' };
    apiProcess = spawn(process.execPath, ['dist/apps/api/src/main.js'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    apiProcess.stdout!.on('data', (c: Buffer) => apiOut.push(c.toString()));
    apiProcess.stderr!.on('data', (c: Buffer) => apiOut.push(c.toString()));
    worker = spawn(process.execPath, ['dist/apps/worker/src/main.js'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    worker.stdout!.on('data', (c: Buffer) => workerOut.push(c.toString()));
    worker.stderr!.on('data', (c: Buffer) => workerOut.push(c.toString()));
  }, 60_000);
  afterAll(async () => {
    for (const child of [worker, apiProcess]) if (child?.pid) process.kill(-child.pid, 'SIGKILL');
    await receiver?.close();
    await api?.close();
  });

  it('a render\'s id finds its acceptance in the API (with the request\'s id) and its settling in the worker; no secret is written', async () => {
    const ws = (await api.cli('workspace:create', '--name', 'Logged', '--plan', 'pro')).json as { workspaceId: string; liveKey: string; testKey: string };
    secrets.push(ws.liveKey, ws.testKey);
    const session = await userSession(api, ws.workspaceId, '+4915100030001', 'owner');
    secrets.push(session);
    const json = { 'content-type': 'application/json' };
    // Answering once it has started.
    await until(async () => (await fetch(`${base}/health`).catch(() => null))?.ok, 'the API process', 60_000, 200);
    const hook = await fetch(`${base}/v1/webhooks`, { method: 'POST', headers: { 'x-api-key': ws.liveKey, ...json }, body: JSON.stringify({ url: `${receiver.base}/hooks`, events: ['render.completed'] }) });
    expect(hook.status).toBe(201);
    secrets.push(((await hook.json()) as { data: { secret: string } }).data.secret);
    // A still drawn by the worker process (retried until it has started and answers).
    const res = await until(async () => {
      const r = await fetch(`${base}/v1/render`, { method: 'POST', headers: { 'x-api-key': ws.liveKey, authorization: `Bearer ${session}`, 'x-request-id': 'req-logs-test-1', ...json }, body: JSON.stringify({ edit: { timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 6 } }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 40, height: 40 } } } }) });
      return r.status === 200 ? r : undefined;
    }, 'the worker to draw a still', 60_000, 500);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const lines = await until(() => {
      const [a, w] = [records(apiOut), records(workerOut)];
      return w.some((l) => l.renderId === id) && a.some((l) => l.renderId === id) ? { a, w } : undefined;
    }, 'the worker\'s lines about the render', 20_000, 100);
    const accepted = lines.a.find((l) => l.renderId === id && String(l.message).includes('accepted'));
    expect(accepted).toMatchObject({ level: 'log', context: 'renders', requestId: 'req-logs-test-1', renderId: id });
    const settled = lines.w.find((l) => l.renderId === id && String(l.message).includes(`render ${id} done`));
    // The job carried the request's id into the worker: one grep follows the request across processes.
    expect(settled).toMatchObject({ level: 'log', requestId: 'req-logs-test-1', renderId: id, queue: 'stills' });
    // Nothing either process wrote holds a secret of the run.
    const everything = apiOut.join('') + workerOut.join('');
    expect(secrets.filter((s) => s && everything.includes(s))).toEqual([]);
    expect(secrets.length).toBe(4);
  }, 90_000);
});
