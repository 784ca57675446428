import type { INestApplicationContext } from '@nestjs/common';
import sharp, { type OutputInfo } from 'sharp';
import { openAppDatabase } from '#libs/app';
import { STOCK_ITEMS, stockFilesDir } from '#libs/assets';
import { allWorkspaces, type Orm } from '#libs/db';
import { JobQueues } from '#libs/queue';
import { createStorage, type StorageDriver } from '#libs/storage';
import { STOCK_PICTURES, Template, TemplatesService } from '#libs/templates';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { fetchStored, secondApi, startApi, storedKey, type TestApi } from './harness.js';
import { seedStockItems } from './render-helpers.js';

// Issue 14, "the seeded templates use them": the shared template library names the stock library's
// pictures by asset id (one stored copy of each picture, no URL in a stored edit) and keeps its
// previews as storage keys, turned into URLs when shown. The jest project `s3` runs this file too:
// presigned URLs change every second, so nothing stored may hold one.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded answers, read field by field in assertions
type Json = Record<string, any>;

describe('the template library on the stock library', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let storage: StorageDriver;
  let live: string;

  const req = (method: 'GET' | 'POST', url: string, payload?: object) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': live }, ...(payload ? { payload } : {}) });
  const libraryRows = () => allWorkspaces(orm).fork().find(Template, { workspaceId: null }, { orderBy: { id: 'asc' } });

  /** A library template copied into the workspace and published (the review checks its stock pictures). */
  async function publishedCopy(id: string): Promise<string> {
    const copy = await req('POST', `/v1/templates/${id}/duplicate`);
    expect(copy.statusCode).toBe(201);
    const templateId = copy.json().data.id as string;
    expect(await api.cli('template:publish', '--id', templateId)).toMatchObject({ code: 0, json: { status: 'published' } });
    return templateId;
  }

  /** The pixels of `box` of a rendered picture (three channels a pixel). */
  const region = (image: { data: Buffer; info: OutputInfo }, box: { left: number; top: number; width: number; height: number }) =>
    sharp(image.data, { raw: image.info }).extract(box).raw().toBuffer();

  /** The PNG a render answers, as raw pixels. */
  async function rendered(body: object, query = ''): Promise<{ data: Buffer; info: OutputInfo }> {
    const res = await req('POST', `/v1/render?format=binary${query}`, body);
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/png']);
    return sharp(res.rawPayload).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  }

  beforeAll(async () => {
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    storage = createStorage(api.config);
    live = (await api.cli('workspace:create', '--name', 'Library', '--plan', 'pro')).json.liveKey as string;
    await seedStockItems(orm, storage, worker.get(JobQueues), STOCK_PICTURES);
  }, 180_000);
  afterAll(async () => {
    await worker.close();
    await orm.close(true);
    await api.close();
  });

  it('stores no URL: pictures are stock assets by id, previews are keys shown as URLs that serve the picture', async () => {
    const rows = await libraryRows();
    expect(rows.length).toBeGreaterThanOrEqual(14);
    for (const t of rows) {
      const urls = JSON.stringify([t.edit, t.fields]).match(/https?:\/\/[^"\\\s]+/g) ?? [];
      expect([t.id, urls.filter((u) => !u.startsWith('http://www.w3.org/'))]).toEqual([t.id, []]);
      expect(t.previewKey).toBe(`library/previews/${t.id}.jpg`);
    }
    const certificate = (await req('GET', '/v1/templates/tpl_lib_certificate')).json().data;
    expect(certificate.edit.timeline.tracks.map((tr: Json) => tr.clips[0].asset.src)).toContain('ast_lib_seal_gold');
    const quote = (await req('GET', '/v1/templates/tpl_lib_quote_card')).json().data;
    expect(quote.fields.find((f: Json) => f.key === 'AUTHOR_PHOTO').defaultValue).toBe('ast_lib_avatar_portrait');
    expect(storedKey(api.config, quote.previewUrl)).toBe('library/previews/tpl_lib_quote_card.jpg');
    const preview = await fetchStored(api, quote.previewUrl);
    expect([preview.status, preview.type, preview.body.subarray(0, 3)]).toEqual([200, 'image/jpeg', Buffer.from([0xff, 0xd8, 0xff])]);
    // One copy of each picture (the stock asset's): nothing but the previews under library/.
    const stored: string[] = [];
    for await (const o of storage.list('library/')) stored.push(o.key);
    expect(stored.sort()).toEqual(rows.map((t) => `library/previews/${t.id}.jpg`).sort());
  });

  it('a copy of a library template publishes and renders with the stock pictures: a field default and a fixed src', async () => {
    // Quote card: AUTHOR_PHOTO defaults to the stock portrait, drawn at (80, 1070), 170 px square.
    const quote = await rendered({ templateId: await publishedCopy('tpl_lib_quote_card'), values: { QUOTE: 'Small steps, shipped daily.' } });
    expect([quote.info.width, quote.info.height]).toEqual([1080, 1350]);
    const portrait = STOCK_ITEMS.find((i) => i.slug === 'avatar-portrait')?.file as { bundled: string };
    const expected = await sharp(`${stockFilesDir()}/${portrait.bundled}`).resize(170, 170).removeAlpha().raw().toBuffer();
    const drawn = await region(quote, { left: 80, top: 1070, width: 170, height: 170 });
    const meanDifference = drawn.reduce((sum, v, i) => sum + Math.abs(v - (expected[i] as number)), 0) / drawn.length;
    expect(meanDifference).toBeLessThan(8);

    // Certificate: the gold seal is a fixed src of the edit (476, 510, 170 px), on an off-white page.
    const certificate = await rendered({ templateId: await publishedCopy('tpl_lib_certificate'), values: { RECIPIENT_NAME: 'Jordan Lee', COURSE_NAME: 'Motion' } }, '&type=png');
    const seal = await region(certificate, { left: 476, top: 510, width: 170, height: 170 });
    const mean = (channel: number) => seal.filter((_, i) => i % 3 === channel).reduce((sum, v) => sum + v, 0) / (seal.length / 3);
    expect(mean(0) - mean(2)).toBeGreaterThan(60); // gold; the page around it is #fffdf7
  });

  it('a second API start changes no library template (version, content, preview); a changed seed bumps only its own version', async () => {
    const snapshot = async () => (await libraryRows()).map((t) => [t.id, t.version, t.updatedAt.toISOString(), JSON.stringify(t.edit), t.previewKey]);
    const before = await snapshot();
    // A presigned URL names the second it was signed in: a start one second later would sign anew.
    await new Promise((r) => setTimeout(r, 1100));
    const other = await secondApi(api);
    try {
      expect(await snapshot()).toEqual(before);
    } finally {
      await other.close();
    }
    // A changed seed is updated in place with its version bumped; usage is kept; a new preview alone bumps nothing.
    const svc = new TemplatesService(orm, { policy: 'development', storage });
    await svc.recordUsage('tpl_lib_og_image');
    const rows = await libraryRows();
    const seeds = rows.map((t) => ({
      id: t.id, name: t.id === 'tpl_lib_og_image' ? 'Open Graph (new look)' : t.name, description: t.description ?? '', categoryId: t.categoryId ?? '',
      subcategoryId: t.subcategoryId ?? '', tags: t.tags, edit: t.edit, fields: t.fields, fieldGroups: t.fieldGroups,
      previewKey: t.id === 'tpl_lib_social_post' ? 'library/previews/tpl_lib_quote_card.jpg' : t.previewKey,
    }));
    expect(await svc.seedLibrary(seeds)).toEqual({ inserted: 0, updated: 1 });
    const og = (await req('GET', '/v1/templates/tpl_lib_og_image')).json().data;
    expect(og).toMatchObject({ name: 'Open Graph (new look)', version: 2, usageCount: 1 });
    const post = (await req('GET', '/v1/templates/tpl_lib_social_post')).json().data;
    expect([post.version, storedKey(api.config, post.previewUrl)]).toEqual([1, 'library/previews/tpl_lib_quote_card.jpg']);
  });
});
