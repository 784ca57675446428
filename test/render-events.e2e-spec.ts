import { get, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import { createServicesContext, ORM, PROCESS_ROLES, REDIS } from '#libs/app';
import { forWorkspace } from '#libs/db';
import { OutboxEvent, PROGRESS_EVERY_MS, RenderFeed } from '#libs/events';
import { RedisKeys } from '#libs/redis';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { RenderEventStreams } from '../apps/api/src/renders/render-events.js';
import { startApi, userSession, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Issue 18: GET /v1/renders/events, the gallery's live feed; decisions.md "Render event stream".

const still = (text: string) => ({
  timeline: { background: '#1d3557', tracks: [{ clips: [{ asset: { type: 'text', text, font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1 }] }] },
  output: { format: 'png', size: { width: 160, height: 100 } },
});

interface Sse { id?: string; event?: string; data?: { id?: string; type: string; data: { id: string; progress?: number } } }

/** An open event stream over real HTTP (its own connection): the parsed events and comments so far, and a way to hang up. */
class Stream {
  readonly events: Sse[] = [];
  readonly comments: string[] = [];
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  private req: ClientRequest | null = null;
  /** Settles when the server ends the stream (or the client closed it). */
  ended: Promise<void> = Promise.resolve();

  open(url: string, headers: Record<string, string>): Promise<this> {
    return new Promise((resolve, reject) => {
      const req = get(url, { headers, agent: false }, (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        res.setEncoding('utf8');
        let buffer = '';
        this.ended = new Promise((done) => res.on('close', done));
        res.on('data', (chunk: string) => {
          buffer += chunk;
          if (this.status !== 200) return;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const ev: Sse = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
              else if (line.startsWith('id: ')) ev.id = line.slice(4);
              else if (line.startsWith('event: ')) ev.event = line.slice(7);
              else if (line.startsWith('data: ')) ev.data = JSON.parse(line.slice(6)) as Sse['data'];
            }
            if (ev.event) this.events.push(ev);
          }
        });
        if (this.status === 200) resolve(this);
        else res.on('end', () => {
          this.events.push({ data: JSON.parse(buffer) as Sse['data'] });
          resolve(this);
        });
      });
      req.on('error', (err) => (this.status ? undefined : reject(err)));
      this.req = req;
    });
  }

  of(type: string): Sse[] {
    return this.events.filter((e) => e.event === type);
  }

  async close(): Promise<void> {
    this.req?.destroy();
    await this.ended;
  }
}

describe('GET /v1/renders/events: the workspace\'s render events, live', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let publisher: INestApplicationContext;
  let base: string;
  let a: { workspaceId: string; liveKey: string };
  let b: { workspaceId: string; liveKey: string };
  let memberToken: string;
  let neighbour: Stream;
  const streams: Stream[] = [];

  const render = async (key: string, text: string) => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': key }, payload: { edit: still(text) } });
    expect(res.statusCode).toBe(200);
    return res.json().data.id as string;
  };
  const open = async (headers: Record<string, string>) => {
    const s = await new Stream().open(`${base}/v1/renders/events`, headers);
    streams.push(s);
    return s;
  };
  const numsub = async (workspaceId: string) => {
    const [, n] = (await publisher.get(REDIS).pubsub('NUMSUB', new RedisKeys(api.config.redisPrefix).renderFeed(workspaceId))) as [string, number];
    return Number(n);
  };

  beforeAll(async () => {
    api = await startApi();
    worker = await createWorkerApp(api.config);
    // Another process on the same Redis (a video worker's role for progress figures).
    publisher = await createServicesContext(api.config, PROCESS_ROLES.cli);
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}/api`;
    a = (await api.cli('workspace:create', '--name', 'Gallery', '--plan', 'pro')).json as typeof a;
    b = (await api.cli('workspace:create', '--name', 'Neighbour', '--plan', 'pro')).json as typeof b;
    memberToken = await userSession(api, a.workspaceId, '+4915100005001', 'member');
  }, 120_000);
  afterAll(async () => {
    for (const s of streams) await s.close();
    await publisher.close();
    await worker.close();
    await api.close();
  });

  it('streams the workspace\'s render events as they settle, by key or by a member\'s session; another workspace\'s never', async () => {
    const byKey = await open({ 'x-api-key': a.liveKey });
    const bySession = await open({ authorization: `Bearer ${memberToken}`, 'x-service-org': a.workspaceId });
    neighbour = await open({ 'x-api-key': b.liveKey });
    expect([byKey.status, byKey.headers['content-type'], byKey.headers['cache-control']]).toEqual([200, 'text/event-stream; charset=utf-8', 'no-cache, no-transform']);
    expect(bySession.status).toBe(200);
    const mine = await render(a.liveKey, 'mine');
    const theirs = await render(b.liveKey, 'theirs');
    for (const s of [byKey, bySession]) await until(async () => s.of('render.completed').some((e) => e.data?.data.id === mine), 'render.completed on the stream', 10_000);
    await until(async () => neighbour.of('render.completed').some((e) => e.data?.data.id === theirs), 'the neighbour\'s event on its stream', 10_000);
    const completed = byKey.of('render.completed').find((e) => e.data?.data.id === mine)!;
    // The §2 event envelope, with the outbox event's id as the SSE id (for Last-Event-ID).
    expect(completed.id).toMatch(/^evt_/);
    expect(completed.data).toMatchObject({ id: completed.id, type: 'render.completed', created: expect.any(String), data: { id: mine, status: 'done', kind: 'image' } });
    // Workspace isolation: neither stream of A saw B's render, nor B's stream A's.
    for (const s of [byKey, bySession]) expect(s.events.map((e) => e.data?.data.id)).not.toContain(theirs);
    expect(neighbour.events.map((e) => e.data?.data.id)).not.toContain(mine);
  });

  it('sends running renders\' progress from any process, at most one figure per render each 500 ms', async () => {
    const s = await open({ 'x-api-key': a.liveKey });
    const feed = publisher.get(RenderFeed);
    const sent = [];
    for (const p of [0.1, 0.2, 0.3]) sent.push(await feed.progress(a.workspaceId, 'rnd_progress1', 'live', p));
    expect(sent).toEqual([true, false, false]);
    await new Promise((r) => setTimeout(r, PROGRESS_EVERY_MS + 50));
    expect(await feed.progress(a.workspaceId, 'rnd_progress1', 'live', 0.5)).toBe(true);
    // Another render has its own budget.
    expect(await feed.progress(a.workspaceId, 'rnd_progress2', 'live', 0.7)).toBe(true);
    await until(async () => s.of('render.progress').length >= 3, 'three progress figures', 5_000);
    expect(s.of('render.progress').map((e) => [e.data?.data.id, e.data?.data.progress])).toEqual([['rnd_progress1', 0.1], ['rnd_progress1', 0.5], ['rnd_progress2', 0.7]]);
    expect(s.of('render.progress')[0].id).toBeUndefined();
    // B's figures stay in B.
    await feed.progress(b.workspaceId, 'rnd_progressb', 'live', 0.2);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.events.map((e) => e.data?.data.id)).not.toContain('rnd_progressb');
  });

  it('resumes after Last-Event-ID: the render events missed while away come first, once', async () => {
    const first = await open({ 'x-api-key': a.liveKey });
    const r1 = await render(a.liveKey, 'one');
    await until(async () => first.of('render.completed').find((e) => e.data?.data.id === r1), 'the first render', 10_000);
    const last = first.of('render.completed').find((e) => e.data?.data.id === r1)!.id!;
    await first.close();
    const r2 = await render(a.liveKey, 'two');
    const r3 = await render(a.liveKey, 'three');
    // Both announced by the dispatcher (the resume reads announced events only) before resuming.
    const outbox = forWorkspace(publisher.get(ORM), a.workspaceId);
    await until(async () => (await outbox.count(OutboxEvent, { id: { $gt: last }, dispatchedAt: { $ne: null } })) >= 2, 'the two events dispatched', 10_000);
    const resumed = await open({ 'x-api-key': a.liveKey, 'last-event-id': last });
    await until(async () => resumed.of('render.completed').length >= 2, 'the missed events', 10_000);
    expect(resumed.of('render.completed').map((e) => e.data?.data.id)).toEqual([r2, r3]);
    const bad = await open({ 'x-api-key': a.liveKey, 'last-event-id': 'yesterday' });
    expect([bad.status, bad.events[0].data]).toEqual([422, expect.objectContaining({ code: 'VALIDATION_FAILED', errors: { 'headers.last-event-id': [expect.any(String)] } })]);
  });

  it('a stream ends after its longest life, so a revoked key stops receiving: its reconnect is refused', async () => {
    const streamsOf = api.app.get(RenderEventStreams);
    const made = (await api.cli('key:create', '--workspace', a.workspaceId, '--mode', 'live', '--scopes', 'renders:read')).json as { id: string; key: string };
    const before = streamsOf.maxLifetimeMs;
    streamsOf.maxLifetimeMs = 300;
    const s = await open({ 'x-api-key': made.key });
    streamsOf.maxLifetimeMs = before;
    expect(s.status).toBe(200);
    expect((await api.cli('key:revoke', '--id', made.id)).code).toBe(0);
    await s.ended;
    const again = await open({ 'x-api-key': made.key });
    expect([again.status, again.events[0]?.data]).toEqual([401, expect.objectContaining({ code: 'INVALID_API_KEY' })]);
  });

  it('heartbeats, and a client hanging up leaves no listener behind (in the process and in Redis)', async () => {
    const streamsOf = api.app.get(RenderEventStreams);
    const feed = api.app.get(RenderFeed);
    const before = streamsOf.heartbeatMs;
    streamsOf.heartbeatMs = 150;
    const others = feed.listenerCount();
    const s = await open({ 'x-api-key': b.liveKey });
    streamsOf.heartbeatMs = before;
    await until(async () => s.comments.filter((c) => c === 'heartbeat').length >= 2, 'two heartbeats', 5_000);
    expect(s.comments[0]).toBe('connected');
    expect(feed.listenerCount()).toBe(others + 1);
    await s.close();
    await until(async () => feed.listenerCount() === others, 'the listener dropped', 5_000);
    // B's only other stream (the first test's) is closed too: the channel is left in Redis.
    await neighbour?.close();
    await until(async () => (await numsub(b.workspaceId)) === 0, 'unsubscribed from B\'s channel', 5_000);
    expect(await numsub(a.workspaceId)).toBeGreaterThan(0);
  });
});
