import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import * as Shotstack from 'shotstack-sdk';
import { openAppDatabase } from '#libs/app';
import { forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { fetchStored, startApi, type TestApi } from './harness.js';
import { ledgerOf, until } from './render-helpers.js';

// Issue 21 "A drop-in door for Shotstack clients": the real shotstack-sdk (npm), pointed at
// /api/compat/shotstack/v1 of a running service, submits renders and polls them unchanged. The same
// keys, scopes (§5), credits, idempotency (§1.4) and events (§6) as /v1/render (§4.1);
// decisions.md "Shotstack door".

describe('the Shotstack door with the real shotstack-sdk', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let base: string;
  let key: string;
  let workspaceId: string;

  const client = (apiKey: string, version = 'v1') => {
    const c = new Shotstack.ApiClient(`${base}/api/compat/shotstack/${version}`);
    c.authentications.DeveloperKey.apiKey = apiKey;
    return new Shotstack.EditApi(c);
  };
  /** A title over a background, as a Shotstack user builds it with the SDK's models. */
  const edit = (format: string, seconds: number, extra: (o: ReturnType<typeof output>) => void = () => undefined) => {
    const title = new Shotstack.TitleAsset().setText('{{ NAME }}').setStyle('minimal').setColor('#ffffff').setSize('large');
    const clip = new Shotstack.Clip().setAsset(title).setStart(0).setLength(seconds);
    const timeline = new Shotstack.Timeline().setBackground('#e63946').setTracks([new Shotstack.Track().setClips([clip])]);
    const out = output(format);
    extra(out);
    return new Shotstack.Edit().setTimeline(timeline).setOutput(out).setMerge([new Shotstack.MergeField().setFind('NAME').setReplace('Ada')]);
  };
  const output = (format: string) => new Shotstack.Output().setFormat(format).setSize(new Shotstack.Size().setWidth(320).setHeight(180));
  const poll = (id: string, apiKey = key) => until(async () => {
    const r = await client(apiKey).getRender(id);
    return ['done', 'failed'].includes(r.response.status) ? r : undefined;
  }, 'the render to settle', 180_000);

  beforeAll(async () => {
    api = await startApi({ VIDEO_ENGINE: 'on' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}`;
    ({ workspaceId, liveKey: key } = (await api.cli('workspace:create', '--name', 'Shotstack', '--plan', 'pro')).json as { workspaceId: string; liveKey: string });
    // The video engine starts in the background (bundle + browser); videos answer 503 until it is up.
    await until(async () => (await api.app.inject({ method: 'POST', url: '/api/v1/render/estimate', headers: { 'x-api-key': key }, payload: { edit: JSON.parse(JSON.stringify(edit('mp4', 1))) } })).statusCode !== 503, 'the video engine', 180_000);
  }, 240_000);
  afterAll(async () => {
    await orm.close(true);
    await worker.close();
    await api.close();
  });

  it('a still: postRender answers Shotstack\'s queued shape, getRender polls it to done with the url of the image (merge applied)', async () => {
    const queued = await client(key).postRender(edit('png', 2));
    expect(queued).toMatchObject({ success: true, message: 'Created', response: { message: 'Render Successfully Queued', id: expect.stringMatching(/^rnd_/) } });
    const { response } = await poll(queued.response.id);
    expect(response).toMatchObject({ id: queued.response.id, owner: workspaceId, plan: 'pro', status: 'done', url: expect.stringMatching(/^http/) });
    expect(typeof response.renderTime).toBe('number');
    expect(new Date(response.created).getTime()).toBeLessThanOrEqual(new Date(response.updated).getTime());
    const file = await fetchStored(api, response.url!);
    expect(file.status).toBe(200);
    const meta = await sharp(file.body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 320, 180]);
    // The same render on our own route: one record, one credit held and captured, its events.
    const ours = (await api.app.inject({ method: 'GET', url: `/api/v1/render/${response.id}`, headers: { 'x-api-key': key } })).json().data;
    expect(ours).toMatchObject({ status: 'done', kind: 'image', credits: 1 });
    expect(await ledgerOf(orm, response.id)).toEqual(['hold', 'capture']);
    const events = (await forWorkspace(orm, workspaceId).find(OutboxEvent, {})).filter((e) => e.data.id === response.id).map((e) => e.type);
    expect(events).toContain('render.completed');
    // data=true shows the edit as rendered, the merge field applied (over plain HTTP: the SDK's own
    // model cannot read back a title asset, Shotstack's or ours: its Asset oneOf matches several types).
    const withData = await (await fetch(`${base}/api/compat/shotstack/v1/render/${response.id}?data=true`, { headers: { 'x-api-key': key } })).json() as { response: { data: { timeline: unknown } } };
    expect(JSON.stringify(withData.response.data.timeline)).toContain('Ada');
    expect(JSON.stringify(withData.response.data)).not.toContain('{{');
    expect((await client(key).getRender(response.id)).response.data).toBeUndefined();
  });

  it('a video: queued, then done with the url of the mp4 and its poster; duration in seconds', async () => {
    const queued = await client(key, 'stage').postRender(edit('mp4', 1, (o) => {
      o.setFps(12);
      o.setPoster(new Shotstack.Poster().setCapture(0.5));
    }));
    const { response } = await poll(queued.response.id);
    expect(response).toMatchObject({ status: 'done', duration: 1, url: expect.stringMatching(/\.mp4/), poster: expect.stringMatching(/^http/) });
    const file = await fetchStored(api, response.url!);
    expect([file.status, file.body.subarray(4, 8).toString('latin1')]).toEqual([200, 'ftyp']);
  }, 240_000);

  it('an Idempotency-Key replays the first render; the same key with another body is refused (§1.4)', async () => {
    const send = (body: unknown, idem: string) => fetch(`${base}/api/compat/shotstack/v1/render`, {
      method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idem }, body: JSON.stringify(body),
    });
    const body = JSON.parse(JSON.stringify(edit('jpg', 2)));
    const a = await send(body, 'shotstack-idem-1');
    const b = await send(body, 'shotstack-idem-1');
    expect([a.status, b.status]).toEqual([201, 201]);
    type Queued = { response: { id: string } };
    expect(((await b.json()) as Queued).response.id).toBe(((await a.json()) as Queued).response.id);
    const c = await send({ ...body, merge: [{ find: 'NAME', replace: 'Grace' }] }, 'shotstack-idem-1');
    expect(c.status).toBe(422);
    expect(((await c.json()) as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('failures reach the SDK as errors with our codes: a bad key (401), a bad edit (422 by path), another workspace\'s render (404)', async () => {
    await expect(client('pk_live_nope').postRender(edit('png', 2))).rejects.toMatchObject({ status: 401 });
    const bad = await fetch(`${base}/api/compat/shotstack/v1/render`, {
      method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ timeline: { tracks: [{ clips: [{ asset: { type: 'title', text: 'x' }, start: -1, length: 2 }] }] }, output: { format: 'png', resolution: 'sd' } }),
    });
    expect(bad.status).toBe(422);
    const body = await bad.json() as { errors: Record<string, string[]> };
    expect(body).toMatchObject({ success: false, code: 'TEMPLATE_VALIDATION_FAILED' });
    expect(Object.keys(body.errors).join(' ')).toMatch(/timeline\.tracks\[0\]\.clips\[0\]\.start/);
    const other = (await api.cli('workspace:create', '--name', 'Other', '--plan', 'pro')).json as { liveKey: string };
    const mine = await client(key).postRender(edit('png', 2));
    await expect(client(other.liveKey).getRender(mine.response.id)).rejects.toMatchObject({ status: 404 });
  });
});
