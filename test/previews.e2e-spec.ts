import { get, createServer, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import { JobQueues } from '#libs/queue';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { fetchStored, queueEvents, startApi, userSession, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Issue 28 ("The dashboard's previews while a template form is filled are not renders of the workspace's
// history"): POST /organization/templates/{id}/preview; decisions.md "Test mode (issue 28): dashboard previews".

type Json = Record<string, unknown>;
interface Received { path: string; id: string; type: string; renderId: string }

/** A published image template whose one field is drawn as text (a preview of each value typed). */
const CARD = {
  name: 'Preview card', categoryId: 'social-media', subcategoryId: 'post',
  edit: {
    timeline: { background: '#0b1f3a', tracks: [{ clips: [{ asset: { type: 'text', text: '{{HEADLINE}}', font: { family: 'Open Sans', size: 40, color: '#ffffff' } }, start: 0, length: 1 }] }] },
    output: { format: 'png', size: { width: 320, height: 180 } },
  },
  fields: [{ key: 'HEADLINE', label: 'Headline', type: 'text', defaultValue: 'Hello' }],
};

/** The render event stream (GET /v1/renders/events) over real HTTP: the render ids of its events, in order. */
function openStream(url: string, headers: Record<string, string>): Promise<{ events: { type: string; renderId: string }[]; close: () => void }> {
  return new Promise((resolve, reject) => {
    const events: { type: string; renderId: string }[] = [];
    let req: ClientRequest | undefined = undefined;
    req = get(url, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`the stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer.slice(0, end).split('\n').find((l) => l.startsWith('data: '));
          buffer = buffer.slice(end + 2);
          if (data) {
            const e = JSON.parse(data.slice(6)) as { type: string; data: { id: string } };
            events.push({ type: e.type, renderId: e.data.id });
          }
        }
      });
      resolve({ events, close: () => req?.destroy() });
    });
    req.on('error', () => undefined);
  });
}

describe('dashboard form previews (issue 28): not renders of the workspace\'s history', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let base: string;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  let ws: { workspaceId: string; liveKey: string; testKey: string };
  let owner: Record<string, string>;
  let templateId: string;
  let endpointId: string;

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) =>
    api.app.inject({ method, url: `/api${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  /** The dashboard's form preview of the template with `values`, as the dashboard asks for it. */
  const preview = (values: Json, headers: Record<string, string> = owner) => call('POST', `/organization/templates/${templateId}/preview`, headers, { values });
  const balance = async () => (await call('GET', '/credits', owner)).json().data.credits.image as { available: number; used: number; held: number };

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const event = JSON.parse(body) as { id: string; type: string; data: { id: string } };
        received.push({ path: req.url ?? '', id: event.id, type: event.type, renderId: event.data.id });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    api = await startApi();
    worker = await createWorkerApp(api.config);
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}/api`;
    ws = (await api.cli('workspace:create', '--name', 'Previews', '--plan', 'pro')).json as typeof ws;
    owner = { authorization: `Bearer ${await userSession(api, ws.workspaceId, '+4915100028001', 'owner')}`, 'x-service-org': ws.workspaceId };
    const imported = await call('POST', '/v1/templates/import', { 'x-api-key': ws.liveKey }, CARD);
    expect(imported.statusCode).toBe(201);
    templateId = imported.json().data.id;
    expect((await call('POST', `/organization/templates/${templateId}/publish`, owner, {})).statusCode).toBe(200);
    // Every render event to an endpoint, and the settle events to the workspace's default callback URL.
    const hook = await call('POST', '/v1/webhooks', { 'x-api-key': ws.liveKey }, { url: `${receiverUrl}/hooks`, events: ['render.queued', 'render.started', 'render.completed', 'render.failed', 'render.cancelled'] });
    expect(hook.statusCode).toBe(201);
    endpointId = hook.json().data.id;
    expect((await call('PATCH', '/organization/callback', owner, { defaultCallbackUrl: `${receiverUrl}/callback` })).statusCode).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await worker?.close();
    await api?.close();
    receiver?.close();
  });

  it('a form preview fires nothing (no webhook, no callback, no stream event, §6), costs nothing; the test render made after it does fire', async () => {
    const stream = await openStream(`${base}/v1/renders/events`, { 'x-api-key': ws.testKey });
    const before = await balance();
    const shown = await preview({ HEADLINE: 'Spring sale' });
    expect(shown.statusCode).toBe(200);
    const p = shown.json().data;
    expect(p).toMatchObject({ status: 'done', kind: 'image', templateId, mode: 'test', credits: 0, watermarked: true });
    // A normal test render after it: its events arrive, so the preview's, written before, would have by then.
    const made = await call('POST', '/v1/render', { 'x-api-key': ws.testKey }, { templateId, values: { HEADLINE: 'Spring sale' } });
    expect(made.statusCode).toBe(200);
    const normal = made.json().data.id as string;
    await until(() => received.some((r) => r.renderId === normal && r.path === '/hooks') && received.some((r) => r.renderId === normal && r.path === '/callback'), 'the test render\'s render.completed at the endpoint and the callback', 20_000);
    await until(() => stream.events.some((e) => e.renderId === normal && e.type === 'render.completed'), 'the test render\'s render.completed on the stream', 20_000);
    // Every delivery the endpoint was given has been made (none pending).
    await until(async () => {
      const log = (await call('GET', `/v1/webhooks/${endpointId}/deliveries`, { 'x-api-key': ws.liveKey })).json().data as { state: string }[];
      return log.length > 0 && log.every((d) => d.state !== 'pending');
    }, 'the endpoint\'s deliveries to settle', 20_000);
    stream.close();
    expect(received.filter((r) => r.renderId === p.id)).toEqual([]);
    expect(stream.events.filter((e) => e.renderId === p.id)).toEqual([]);
    // Its history is empty; the test render's has its event, delivered to the endpoint and the callback.
    expect((await call('GET', `/v1/render/${p.id}/events`, owner)).json().data).toEqual([]);
    const history = (await call('GET', `/v1/render/${normal}/events`, owner)).json().data as { type: string; deliveries: { state: string }[] }[];
    expect(history.map((e) => [e.type, e.deliveries.map((d) => d.state)])).toEqual([['render.completed', ['succeeded', 'succeeded']]]);
    // Test mode: no credit held or spent, for either.
    expect(await balance()).toEqual(before);
  }, 60_000);

  it('is absent from the renders list (GET /v1/render, session or key) but readable by id, with its watermarked image', async () => {
    const p = (await preview({ HEADLINE: 'Listed?' })).json().data;
    const made = (await call('POST', '/v1/render', { ...owner, 'x-service-mode': 'test' }, { templateId, values: { HEADLINE: 'Listed' } })).json().data;
    for (const headers of [owner, { 'x-api-key': ws.liveKey }, { 'x-api-key': ws.testKey }]) {
      const list = (await call('GET', '/v1/render?limit=100', headers)).json();
      const ids = (list.data as { id: string }[]).map((r) => r.id);
      expect(ids).toContain(made.id);
      expect(ids).not.toContain(p.id);
      expect(list.pagination.total).toBe(ids.length);
    }
    const read = await call('GET', `/v1/render/${p.id}`, owner);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toMatchObject({ id: p.id, status: 'done', mode: 'test', watermarked: true, url: p.url });
    const file = await fetchStored(api, p.url);
    expect([file.status, file.type]).toEqual([200, 'image/png']);
    expect(await sharp(file.body).metadata()).toMatchObject({ width: 320, height: 180 });
  });

  it('is marked preview: true, and a normal render preview: false', async () => {
    const p = (await preview({ HEADLINE: 'Marked' })).json().data;
    expect(p.preview).toBe(true);
    const made = (await call('POST', '/v1/render', { 'x-api-key': ws.testKey }, { templateId, values: { HEADLINE: 'Marked' } })).json().data;
    expect(made.preview).toBe(false);
  });

  it('is free and watermarked in either mode of the dashboard (X-Service-Mode: live too), and does not count as a use of the template', async () => {
    const uses = async () => (await call('GET', `/organization/templates/${templateId}`, owner)).json().data.usageCount as number;
    const [credits, used] = [await balance(), await uses()];
    const live = await preview({ HEADLINE: 'Live switch' }, { ...owner, 'x-service-mode': 'live' });
    expect(live.statusCode).toBe(200);
    expect(live.json().data).toMatchObject({ mode: 'test', credits: 0, watermarked: true });
    expect(await balance()).toEqual(credits);
    expect(await uses()).toBe(used);
  });

  it('is a session\'s: an API key is 401 SESSION_REQUIRED; values are checked as a render\'s (422); the worker still answers afterwards', async () => {
    const keyed = await call('POST', `/organization/templates/${templateId}/preview`, { 'x-api-key': ws.testKey }, { values: {} });
    expect([keyed.statusCode, keyed.json().code]).toEqual([401, 'SESSION_REQUIRED']);
    const unknown = await call('POST', `/organization/templates/${templateId}/preview`, owner, { values: {}, callback: `${receiverUrl}/elsewhere` });
    expect([unknown.statusCode, unknown.json().code, Object.keys(unknown.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['callback']]);
    const wrong = await preview({ HEADLINE: { text: 'not a string' } });
    expect([wrong.statusCode, wrong.json().code, Object.keys(wrong.json().errors)]).toEqual([422, 'TEMPLATE_VALIDATION_FAILED', ['values.HEADLINE']]);
    expect((await call('POST', '/organization/templates/tpl_nothing/preview', owner, { values: {} })).json().code).toBe('TEMPLATE_NOT_FOUND');
    expect((await preview({ HEADLINE: 'After' })).json().data.status).toBe('done');
  });

  it('issue 29: a draft is previewed before it is published (a render of it stays 409 TEMPLATE_NOT_PUBLISHED); another workspace\'s private template stays 404', async () => {
    const draft = await call('POST', '/v1/templates/import', { 'x-api-key': ws.liveKey }, { ...CARD, name: 'Draft card' });
    const id = draft.json().data.id as string;
    expect(draft.json().data.status).toBe('draft');
    const res = await call('POST', `/organization/templates/${id}/preview`, owner, { values: { HEADLINE: 'Draft look' } });
    expect([res.statusCode, res.json().data.status, res.json().data.preview, res.json().data.watermarked]).toEqual([200, 'done', true, true]);
    const stored = await fetchStored(api, res.json().data.url as string);
    expect([stored.status, (await sharp(stored.body).metadata()).width]).toEqual([200, 320]);
    const rendered = await call('POST', '/v1/render', { 'x-api-key': ws.testKey }, { templateId: id });
    expect([rendered.statusCode, rendered.json().code]).toEqual([409, 'TEMPLATE_NOT_PUBLISHED']);
    const other = (await api.cli('workspace:create', '--name', 'Elsewhere', '--plan', 'pro')).json as { liveKey: string };
    const theirs = await call('POST', '/v1/templates/import', { 'x-api-key': other.liveKey }, { ...CARD, name: 'Their card' });
    const stranger = await call('POST', `/organization/templates/${theirs.json().data.id as string}/preview`, owner, { values: {} });
    expect([stranger.statusCode, stranger.json().code]).toEqual([404, 'TEMPLATE_NOT_FOUND']);
  });

  it('issue 29 (the designer): an unsaved edit of an own template is drawn, its 422 named edit.…; a template not the workspace\'s own is 404', async () => {
    const edit = { ...CARD.edit, timeline: { ...CARD.edit.timeline, background: '#ff0000' } };
    const res = await call('POST', `/organization/templates/${templateId}/preview`, owner, { edit, values: { HEADLINE: 'Unsaved' } });
    expect([res.statusCode, res.json().data.status, res.json().data.preview, res.json().data.templateId]).toEqual([200, 'done', true, null]);
    const stored = await fetchStored(api, res.json().data.url as string);
    const { data } = await sharp(stored.body).extract({ left: 2, top: 170, width: 1, height: 1 }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect(data[0]).toBeGreaterThan(data[2]! + 60); // the unsaved red, not the saved navy
    const bad = await call('POST', `/organization/templates/${templateId}/preview`, owner, { edit: { ...edit, output: { format: 'png', size: { width: -1, height: 10 } } } });
    expect([bad.statusCode, Object.keys(bad.json().errors ?? {})]).toEqual([422, ['edit.output.size.width']]);
    const library = (await call('GET', '/v1/templates?scope=library&kind=image&limit=1', { 'x-api-key': ws.liveKey })).json().data[0] as { id: string } | undefined;
    for (const id of ['tpl_nothing', ...(library ? [library.id] : [])]) {
      const other = await call('POST', `/organization/templates/${id}/preview`, owner, { edit });
      expect([id, other.statusCode, other.json().code]).toEqual([id, 404, 'TEMPLATE_NOT_FOUND']);
    }
  });

  it('a video template is 422 VALIDATION_FAILED at templateId: a preview is a still', async () => {
    const video = await call('POST', '/v1/templates/import', { 'x-api-key': ws.liveKey }, { ...CARD, name: 'Video card', edit: { ...CARD.edit, output: { format: 'mp4', size: { width: 320, height: 180 }, fps: 12 } } });
    const id = video.json().data.id as string;
    expect((await call('POST', `/organization/templates/${id}/publish`, owner, {})).statusCode).toBe(200);
    const res = await call('POST', `/organization/templates/${id}/preview`, owner, { values: {} });
    expect([res.statusCode, res.json().code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(res.json().errors.templateId[0]).toMatch(/video template.*a preview is a still/);
  });

  it('retention: the output and the record go an hour after (renders.purge); a test render keeps its record', async () => {
    const p = (await preview({ HEADLINE: 'Short-lived' })).json().data;
    const made = (await call('POST', '/v1/render', { 'x-api-key': ws.testKey }, { templateId, values: { HEADLINE: 'Kept' } })).json().data;
    expect(Date.parse(p.expiresAt) - Date.parse(p.completedAt)).toBe(3_600_000);
    const queues = worker.get(JobQueues);
    const events = await queueEvents(queues, 'system');
    const purge = async (minutes: number) => (await queues.add('renders.purge', { now: new Date(Date.now() + minutes * 60_000).toISOString() })).waitUntilFinished(events, 20_000);
    await purge(59);
    expect((await call('GET', `/v1/render/${p.id}`, owner)).statusCode).toBe(200);
    await purge(61);
    await events.close();
    const gone = await call('GET', `/v1/render/${p.id}`, owner);
    expect([gone.statusCode, gone.json().code]).toEqual([404, 'RENDER_NOT_FOUND']);
    expect((await fetchStored(api, p.url)).status).toBe(404);
    expect((await call('GET', `/v1/render/${made.id}`, owner)).json().data).toMatchObject({ status: 'done', url: made.url });
  });
});
