import type { INestApplicationContext } from '@nestjs/common';
import { openAppDatabase } from '#libs/app';
import type { Orm } from '#libs/db';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { startApi, userSession, type TestApi } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';
import { eventsOf, until } from './render-helpers.js';

// Issue 18 (the dashboard's render page): GET /v1/render/{id}/events and GET /v1/render/{id}/edit;
// §4.1, §6 (events, deliveries), §7 (RENDER_NOT_FOUND); decisions.md "Dashboard".

const still = (text: string) => ({
  timeline: { background: '#1d3557', tracks: [{ clips: [{ asset: { type: 'text', text, font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1 }] }] },
  output: { format: 'png', size: { width: 160, height: 100 } },
});

interface EventView {
  id: string;
  type: string;
  created: string;
  deliveries: { id: string; endpointId: string; redelivery: boolean; state: string; attempts: number; lastStatus: number | null; completedAt: string | null }[];
}

describe('a render\'s events and request (GET /v1/render/{id}/events, /edit)', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let receiver: Receiver;
  let hookBase: string;
  let a: { workspaceId: string; liveKey: string };
  let b: { workspaceId: string; liveKey: string };
  let memberToken: string;

  const get = (url: string, headers: Record<string, string>) => api.app.inject({ method: 'GET', url: `/api${url}`, headers });
  const render = async (key: string, body: unknown) => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': key }, payload: body as object });
    expect(res.statusCode).toBe(200);
    return res.json().data as { id: string; status: string; width: number; height: number };
  };

  beforeAll(async () => {
    // The endpoint's receiver: /ok answers 200, /bad 400 (a delivery that fails for good, §6).
    receiver = await startReceiver((hit) => (hit.path === '/bad' ? 400 : 200));
    hookBase = receiver.base;
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    a = (await api.cli('workspace:create', '--name', 'History', '--plan', 'pro')).json as typeof a;
    b = (await api.cli('workspace:create', '--name', 'Neighbour', '--plan', 'pro')).json as typeof b;
    memberToken = await userSession(api, a.workspaceId, '+4915100005077', 'member');
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
    await receiver.close();
  });

  it('lists a render\'s events in order, each with its webhook deliveries (endpoint, state, attempts, last status); by key or a member\'s session', async () => {
    const ok = (await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { 'x-api-key': a.liveKey }, payload: { url: `${hookBase}/ok` } })).json().data as { id: string };
    const bad = (await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { 'x-api-key': a.liveKey }, payload: { url: `${hookBase}/bad` } })).json().data as { id: string };
    expect([ok.id, bad.id]).toEqual([expect.stringMatching(/^whk_/), expect.stringMatching(/^whk_/)]);
    const first = await render(a.liveKey, { edit: still('first') });
    const second = await render(a.liveKey, { edit: still('second') });

    // Once the dispatcher and the deliverer are through: both deliveries of render.completed settled.
    const events = await until(async () => {
      const res = await get(`/v1/render/${first.id}/events`, { 'x-api-key': a.liveKey });
      expect(res.statusCode).toBe(200);
      const data = res.json().data as EventView[];
      const done = data.find((e) => e.type === 'render.completed');
      return done && done.deliveries.length === 2 && done.deliveries.every((d) => d.completedAt) && data;
    }, 'the render.completed deliveries', 30_000);

    // The render's own events, as the outbox holds them, oldest first; the other render's are not among them.
    expect(events.map((e) => e.type)).toEqual(await eventsOf(orm, a.workspaceId, first.id));
    expect(events.at(-1)?.type).toBe('render.completed');
    expect(events.map((e) => e.id)).toEqual(events.map((e) => e.id).sort());
    expect(events.every((e) => /^evt_/.test(e.id) && !Number.isNaN(Date.parse(e.created)))).toBe(true);
    const completed = events.at(-1)!;
    const byEndpoint = Object.fromEntries(completed.deliveries.map((d) => [d.endpointId, d]));
    expect(byEndpoint[ok.id]).toMatchObject({ state: 'succeeded', attempts: 1, lastStatus: 200, redelivery: false });
    // §6: a 4xx other than 429 is not retried (the delivery log's state: refused).
    expect(byEndpoint[bad.id]).toMatchObject({ state: 'refused', attempts: 1, lastStatus: 400, redelivery: false });
    const secondEvents = (await get(`/v1/render/${second.id}/events`, { 'x-api-key': a.liveKey })).json().data as EventView[];
    expect(secondEvents.map((e) => e.type)).toEqual(await eventsOf(orm, a.workspaceId, second.id));
    expect(secondEvents.some((e) => events.some((f) => f.id === e.id))).toBe(false);

    // A dashboard session of a member (renders:read through the role) reads the same list.
    const bySession = await get(`/v1/render/${first.id}/events`, { authorization: `Bearer ${memberToken}`, 'x-service-org': a.workspaceId });
    expect(bySession.statusCode).toBe(200);
    expect((bySession.json().data as EventView[]).map((e) => e.id)).toEqual(events.map((e) => e.id));
  }, 60_000);

  it('answers the normalised edit the render was made from, as a POST /v1/render body that renders the same image again', async () => {
    const made = await render(a.liveKey, { edit: still('again') });
    const res = await get(`/v1/render/${made.id}/edit`, { 'x-api-key': a.liveKey });
    expect(res.statusCode).toBe(200);
    const body = res.json().data as { edit: ReturnType<typeof still> };
    expect(Object.keys(body)).toEqual(['edit']);
    expect(body.edit.output).toMatchObject({ format: 'png', size: { width: 160, height: 100 } });
    expect(JSON.stringify(body.edit.timeline)).toContain('"again"');
    // §4.2: the render record itself does not carry the edit.
    expect((await get(`/v1/render/${made.id}`, { 'x-api-key': a.liveKey })).json().data).not.toHaveProperty('edit');
    const again = await render(a.liveKey, body);
    expect(again).toMatchObject({ status: 'done', width: 160, height: 100 });
    expect(again.id).not.toBe(made.id);
  }, 60_000);

  it('§7: another workspace\'s render, or none, is 404 RENDER_NOT_FOUND on both routes', async () => {
    const mine = await render(a.liveKey, { edit: still('private') });
    for (const path of ['events', 'edit']) {
      for (const url of [`/v1/render/${mine.id}/${path}`, `/v1/render/rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P/${path}`, `/v1/render/nope/${path}`]) {
        const res = await get(url, { 'x-api-key': b.liveKey });
        expect([url, res.statusCode, res.json().code, res.json().success]).toEqual([url, 404, 'RENDER_NOT_FOUND', false]);
      }
      expect(JSON.stringify((await get(`/v1/render/${mine.id}/${path}`, { 'x-api-key': b.liveKey })).json())).not.toContain('private');
      const anonymous = await get(`/v1/render/${mine.id}/${path}`, {});
      expect(anonymous.statusCode).toBe(401);
    }
  }, 60_000);
});
