import type { INestApplicationContext } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import sharp from 'sharp';
import { openAppDatabase } from '#libs/app';
import type { Orm } from '#libs/db';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { secondApi, startApi, userSession, type TestApi } from './harness.js';
import { eventsOf, ledgerOf } from './render-helpers.js';

// Issue 33 ("A still's trip through the API"): the API keeps a published template's edit and fields per
// version (decisions.md "Speed (issue 33): still-hop"). What a caller renders must follow every change
// of the template at once, whichever API process made it.

type Json = Record<string, unknown>;

/** A 200×100 card: a background and one text field, NAME. */
const edit = (background: string) => ({
  timeline: { background, tracks: [{ clips: [{ asset: { type: 'text', text: '{{NAME}}', font: { family: 'Open Sans', size: 24, color: '#ffffff' } }, start: 0, length: 1, width: 120, height: 40 }] }] },
  output: { format: 'png', size: { width: 200, height: 100 } },
});
const NAME = { key: 'NAME', label: 'Name', type: 'text', required: true, config: { maxLength: 40 } };

describe('still hop (issue 33): the template kept per version follows every change', () => {
  let api: TestApi;
  let other: NestFastifyApplication;
  let worker: INestApplicationContext;
  let orm: Orm;
  let ws: { workspaceId: string; liveKey: string };
  let owner: Record<string, string>;
  let templateId: string;

  const call = (app: NestFastifyApplication, method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) =>
    app.inject({ method, url: `/api${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const render = (values: Json) => call(api.app, 'POST', '/v1/render?format=binary', { 'x-api-key': ws.liveKey }, { templateId, values });
  const used = async () => (await call(api.app, 'GET', '/credits', owner)).json().data.credits.image as { available: number; used: number; held: number };
  /** The corner pixel of a PNG answer, as #rrggbb. */
  const corner = async (png: Buffer) => {
    const { data } = await sharp(png).extract({ left: 2, top: 2, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
    return `#${[data[0], data[1], data[2]].map((v) => v!.toString(16).padStart(2, '0')).join('')}`;
  };

  beforeAll(async () => {
    api = await startApi();
    other = await secondApi(api);
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = (await api.cli('workspace:create', '--name', 'Hop', '--plan', 'pro')).json as typeof ws;
    owner = { authorization: `Bearer ${await userSession(api, ws.workspaceId, '+4915100033001', 'owner')}`, 'x-service-org': ws.workspaceId };
    const imported = await call(api.app, 'POST', '/v1/templates/import', { 'x-api-key': ws.liveKey }, { name: 'Hop card', categoryId: 'social-media', subcategoryId: 'post', edit: edit('#ff0000'), fields: [NAME] });
    expect(imported.statusCode).toBe(201);
    templateId = imported.json().data.id;
    expect((await api.cli('template:publish', '--id', templateId)).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await worker?.close();
    await other?.close();
    await orm?.close(true);
    await api?.close();
  });

  it('§9 a save (new version) made through another API process: the next still draws the new edit, checks the new fields; archiving refuses at once (409 TEMPLATE_NOT_PUBLISHED); credits and events exact', async () => {
    const before = await used();
    const first = await render({ NAME: 'One' });
    expect([first.statusCode, first.headers['content-type']]).toEqual([200, 'image/png']);
    expect(await corner(first.rawPayload)).toBe('#ff0000');
    expect((await render({ NAME: 'Two' })).statusCode).toBe(200); // the kept copy in use

    // The dashboard's save, through the other process: a blue background and a second required field.
    const saved = await call(other, 'PATCH', `/organization/templates/${templateId}`, owner, {
      version: 1, edit: { ...edit('#0000ff'), timeline: { ...edit('#0000ff').timeline, tracks: [...edit('#0000ff').timeline.tracks, { clips: [{ asset: { type: 'text', text: '{{CITY}}' }, start: 0, length: 1, width: 80, height: 30, position: 'bottom' }] }] } },
      fields: [NAME, { key: 'CITY', label: 'City', type: 'text', required: true, config: { maxLength: 40 } }],
    });
    expect(saved.statusCode).toBe(200);
    expect(saved.json().data).toMatchObject({ version: 2, status: 'published' });

    // The new fields are checked (422 by path, nothing held), and the new edit drawn.
    const missing = await render({ NAME: 'Three' });
    expect(missing.statusCode).toBe(422);
    expect([missing.statusCode, missing.json().code, missing.json().errors]).toEqual([422, 'TEMPLATE_VALIDATION_FAILED', { 'values.CITY': expect.any(Array) }]);
    const second = await render({ NAME: 'Four', CITY: 'Rome' });
    expect(second.statusCode).toBe(200);
    expect(await corner(second.rawPayload)).toBe('#0000ff');
    const record = (await call(api.app, 'GET', `/v1/render/${second.headers['x-render-id'] as string}`, { 'x-api-key': ws.liveKey })).json().data;
    expect(record).toMatchObject({ status: 'done', templateId, templateVersion: 2 });

    // Archived by the CLI (a third process): refused on the next request.
    expect((await api.cli('template:archive', '--id', templateId)).code).toBe(0);
    const archived = await render({ NAME: 'Five', CITY: 'Rome' });
    expect([archived.statusCode, archived.json().code]).toEqual([409, 'TEMPLATE_NOT_PUBLISHED']);

    // Three stills drawn, each one credit captured; one render.completed each.
    const after = await used();
    expect([after.used - before.used, after.held]).toEqual([3, 0]);
    const id = record.id as string;
    expect(await ledgerOf(orm, id)).toEqual(['hold', 'capture']);
    expect(await eventsOf(orm, ws.workspaceId, id)).toEqual(['render.completed']);
  }, 60_000);
});
