import type { INestApplicationContext } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { CreditsService, LedgerEntry } from '#libs/credits';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { JobQueues } from '#libs/queue';
import { Render, RenderSweeps } from '#libs/renders';
import { createStorage } from '#libs/storage';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { fetchStored, queueEvents, startApi, storedKey, type TestApi } from './harness.js';
import { seedStockItems } from './render-helpers.js';

// Contract §1.4 (idempotency), §2 Render and Cost estimate, §3 Render status, §4.1, §7, §8;
// decisions.md "Render record", "Idempotency", "Still engine".

const text = (t: string, extra: Record<string, unknown> = {}) => ({ asset: { type: 'text', text: t, font: { family: 'Open Sans', size: 40, color: '#ffffff' } }, start: 0, length: 3, ...extra });
const still = (format = 'png', clips: unknown[] = [text('Hello')], output: Record<string, unknown> = {}) => ({
  timeline: { background: '#1d3557', tracks: [{ clips }] },
  output: { format, size: { width: 320, height: 200 }, ...output },
});

describe('renders: synchronous stills end to end', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let live: string;
  let test: string;
  let workspaceId: string;

  const post = (key: string, body: unknown, query = '', headers: Record<string, string> = {}) =>
    api.app.inject({ method: 'POST', url: `/api/v1/render${query}`, headers: { 'x-api-key': key, ...headers }, payload: body as object });
  const get = (key: string, url: string) => api.app.inject({ method: 'GET', url: `/api${url}`, headers: { 'x-api-key': key } });
  const newWorkspace = async (plan = 'pro', ...flags: string[]) => {
    const { json } = await api.cli('workspace:create', '--name', `ws-${plan}`, '--plan', plan, ...flags);
    return json as { workspaceId: string; liveKey: string; testKey: string };
  };
  const imageCredits = async (ws: string) => (await new CreditsService(orm).balance(ws, 'pro')).credits.image;
  const fileOf = (url: string) => fetchStored(api, url);
  const keyOf = (url: string | null | undefined) => storedKey(api.config, url);

  beforeAll(async () => {
    api = await startApi();
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    const ws = await newWorkspace('pro');
    ({ liveKey: live, testKey: test, workspaceId } = ws);
    // The library's quote card draws a stock picture (by asset id); a landscape one for a wrong shape.
    await seedStockItems(orm, createStorage(api.config), api.app.get(JobQueues), ['avatar-portrait', 'photo-mountains']);
  }, 120_000);
  afterAll(async () => {
    await orm.close(true);
    await worker.close();
    await api.close();
  });

  it('§4.1: a png still answers done synchronously with a url serving the image, and holds then captures one credit', async () => {
    const before = await imageCredits(workspaceId);
    const res = await post(live, { edit: still(), metadata: { order: 42 } });
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toMatchObject({
      id: expect.stringMatching(/^rnd_/), status: 'done', kind: 'image', format: 'png', width: 320, height: 200, credits: 1,
      watermarked: false, mode: 'live', progress: 1, metadata: { order: 42 }, error: null, templateId: null,
    });
    expect(data.fileSizeBytes).toBeGreaterThan(100);
    expect(typeof data.renderTime).toBe('number');
    expect(new Date(data.expiresAt).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const file = await fileOf(data.url);
    expect([file.status, file.type]).toEqual([200, 'image/png']);
    const meta = await sharp(file.body).metadata();
    expect([meta.width, meta.height, file.body.length]).toEqual([320, 200, data.fileSizeBytes]);
    const after = await imageCredits(workspaceId);
    expect(after.used - before.used).toBe(1);
    expect(after.held).toBe(0);
    const ledger = await forWorkspace(orm, workspaceId).find(LedgerEntry, { renderId: data.id }, { orderBy: { id: 'asc' } });
    expect(ledger.map((e) => e.reason)).toEqual(['hold', 'capture']);
    const event = await forWorkspace(orm, workspaceId).findOne(OutboxEvent, { type: 'render.completed' }, { orderBy: { id: 'desc' } });
    expect(event?.data).toMatchObject({ id: data.id, status: 'done', credits: 1, width: 320, height: 200 });
    expect(keyOf(event?.data.url as string)).toBe(keyOf(data.url));
    expect(keyOf(data.url)).toMatch(new RegExp(`^r/${data.id}/[A-Za-z0-9_-]{22}\\.png$`));
  });

  it('§4.1: format=binary answers the raw bytes of png, jpeg and pdf with their content type; type and scale apply', async () => {
    const png = await post(live, { edit: still() }, '?format=binary&scale=2');
    expect(png.statusCode).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.headers['x-render-id']).toMatch(/^rnd_/);
    expect(await sharp(png.rawPayload).metadata()).toMatchObject({ width: 640, height: 400 });
    const jpeg = await post(live, { edit: still() }, '?format=binary&type=jpg');
    expect(jpeg.headers['content-type']).toBe('image/jpeg');
    expect((await sharp(jpeg.rawPayload).metadata()).format).toBe('jpeg');
    const pdf = await post(live, { edit: still('pdf') }, '?format=binary');
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('§4.1 pdf (issue 21): the page is the frame at 150 dpi or output.pdf\'s, read by poppler with the text clip\'s words; a bad page is 422 by path', async () => {
    const pdfinfo = async (bytes: Buffer, tool = 'pdfinfo') => {
      const dir = mkdtempSync(join(tmpdir(), 'renders-pdf-'));
      try {
        writeFileSync(join(dir, 'r.pdf'), bytes);
        return execFileSync(tool, [join(dir, 'r.pdf'), ...(tool === 'pdftotext' ? ['-'] : [])], { encoding: 'utf8' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    const a4 = await post(live, { edit: still('pdf', [text('Invoice 42')], { size: { width: 1240, height: 1754 } }) }, '?format=binary');
    expect(a4.statusCode).toBe(200);
    expect(await pdfinfo(a4.rawPayload)).toMatch(/^Page size:\s+595\.2 x 841\.92 pts \(A4\)$/m);
    expect(await pdfinfo(a4.rawPayload, 'pdftotext')).toContain('Invoice 42');
    const letter = await post(live, { edit: still('pdf', [text('Invoice 43')]), output: { pdf: { pageSize: 'letter' } } }, '?format=binary');
    expect(await pdfinfo(letter.rawPayload)).toMatch(/^Page size:\s+792 x 612 pts \(letter\)$/m); // a landscape frame turns the page
    const dpi = await post(live, { edit: still('pdf', [text('x')], { pdf: { dpi: 72 } }) }, '?format=binary');
    expect(await pdfinfo(dpi.rawPayload)).toMatch(/^Page size:\s+320 x 200 pts$/m);

    const bad = await post(live, { edit: still('pdf', [text('x')], { pdf: { dpi: 2, pageSize: { width: 10, height: 500 } } }) });
    expect([bad.statusCode, bad.json().code]).toEqual([422, 'TEMPLATE_VALIDATION_FAILED']);
    expect(bad.json().errors).toEqual({
      'edit.output.pdf.dpi': ['must be at least 36, got 2'],
      'edit.output.pdf.pageSize.width': ['must be at least 72, got 10'],
      'edit.output.pdf.pageSize': ['give dpi or pageSize, not both (a fixed page sets the resolution itself)'],
    });
  });

  it('§4.1, §7: a malformed body, or neither templateId nor edit, is 400 INVALID_REQUEST; never a render', async () => {
    const none = await post(live, {});
    expect([none.statusCode, none.json().code]).toEqual([400, 'INVALID_REQUEST']);
    const nothing = await post(live, undefined);
    expect([nothing.statusCode, nothing.json().code]).toEqual([400, 'INVALID_REQUEST']);
    const array = await post(live, [{ edit: still() }]);
    expect([array.statusCode, array.json().code]).toEqual([400, 'INVALID_REQUEST']);
    const malformed = await api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': live, 'content-type': 'application/json' }, payload: '{"edit": {' });
    expect([malformed.statusCode, malformed.json().code]).toEqual([400, 'INVALID_REQUEST']);
    const binaryVideo = await post(live, { edit: still('mp4') }, '?format=binary');
    expect([binaryVideo.statusCode, binaryVideo.json().code, binaryVideo.json().errors['query.format']]).toEqual([422, 'VALIDATION_FAILED', ['binary is for png, jpeg and pdf']]);
    expect(await allWorkspaces(orm).count(Render, { workspaceId, status: { $ne: 'done' } })).toBe(0);
  });

  it('§7, decisions.md "Envelope and errors": values that break a rule are 422 VALIDATION_FAILED by path; never a render', async () => {
    const before = await allWorkspaces(orm).count(Render, { workspaceId });
    const refused = async (body: unknown, query = '', headers: Record<string, string> = {}) => {
      const res = await post(live, body, query, headers);
      expect([res.statusCode, res.json().code]).toEqual([422, 'VALIDATION_FAILED']);
      return res.json().errors as Record<string, string[]>;
    };
    expect(await refused({ edit: still(), colour: 'red' })).toEqual({ colour: ['Unknown field "colour"'] });
    expect(Object.keys(await refused({ edit: still() }, '?scale=5'))).toEqual(['query.scale']);
    expect(Object.keys(await refused({ edit: still() }, '?scale=two&type=webp&resolution=8k&format=raw&templateId=x')).sort())
      .toEqual(['query.format', 'query.resolution', 'query.scale', 'query.templateId', 'query.type']);
    expect(Object.keys(await refused({ templateId: 'tpl_x', edit: still() }))).toEqual(['edit']);
    expect(Object.keys(await refused({ edit: 'a picture', output: [], metadata: { big: 'x'.repeat(9000) }, callback: 7 })).sort()).toEqual(['callback', 'edit', 'metadata', 'output']);
    expect(Object.keys(await refused({ edit: still(), merge: [{ find: '', replace: 1 }, { find: 'A' }] })).sort()).toEqual(['merge[0].find', 'merge[1].replace']);
    expect(Object.keys(await refused({ edit: still(), values: { A: 1 }, fields: { A: 2 } }))).toEqual(['fields']);
    expect(Object.keys(await refused({ edit: still(), idempotencyKey: 'a' }, '', { 'idempotency-key': 'b' }))).toEqual(['idempotencyKey']);
    expect(Object.keys(await refused({ edit: still() }, '', { 'idempotency-key': 'not visible ascii' }))).toEqual(['headers.idempotency-key']);
    expect(await allWorkspaces(orm).count(Render, { workspaceId })).toBe(before);
  });

  it('a bodiless POST sent with Content-Type: application/json and an empty body answers as without a body (not 400)', async () => {
    const id = (await post(live, { edit: still() })).json().data.id as string;
    const cancel = (headers: Record<string, string>) => api.app.inject({ method: 'POST', url: `/api/v1/render/${id}/cancel`, headers: { 'x-api-key': live, ...headers }, payload: '' });
    const bare = await cancel({});
    const json = await cancel({ 'content-type': 'application/json' });
    const charset = await cancel({ 'content-type': 'application/json; charset=utf-8' });
    expect([bare.statusCode, bare.json().code]).toEqual([409, 'ALREADY_SETTLED']);
    for (const res of [json, charset]) expect([res.statusCode, res.json().code]).toEqual([409, 'ALREADY_SETTLED']);
    const unknown = await api.app.inject({ method: 'POST', url: '/api/v1/render/rnd_nope/cancel', headers: { 'x-api-key': live, 'content-type': 'application/json' }, payload: '' });
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'RENDER_NOT_FOUND']);
  });

  it('§7: 422 TEMPLATE_VALIDATION_FAILED names the edit path; 422 EMPTY_TIMELINE; 404 TEMPLATE_NOT_FOUND; 503 for video', async () => {
    const invalid = await post(live, { edit: still('png', [text('x', { length: -2 })]) });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json()).toMatchObject({ code: 'TEMPLATE_VALIDATION_FAILED', errors: { 'edit.timeline.tracks[0].clips[0].length': [expect.any(String)] } });
    const empty = await post(live, { edit: { timeline: { tracks: [] }, output: { format: 'png' } } });
    expect([empty.statusCode, empty.json().code]).toEqual([422, 'EMPTY_TIMELINE']);
    const missing = await post(live, { templateId: 'tpl_does_not_exist' });
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'TEMPLATE_NOT_FOUND']);
    const video = await post(live, { edit: still('mp4') });
    expect([video.statusCode, video.json().code]).toEqual([503, 'ENGINE_NOT_CONFIGURED']);
  });

  it('§7: an asset the engine cannot use fails the render with its code, records it failed and releases the credit', async () => {
    const before = await imageCredits(workspaceId);
    const res = await post(live, { edit: still('png', [{ asset: { type: 'html', html: '<p>x</p>', width: 100, height: 50 }, start: 0, length: 2 }]) });
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body).toMatchObject({ code: 'UNSUPPORTED_ASSET', errors: { 'edit.timeline.tracks[0].clips[0].asset.type': [expect.any(String)] } });
    const id = body.data.id as string;
    const record = (await get(live, `/v1/render/${id}`)).json().data;
    expect(record).toMatchObject({ status: 'failed', credits: 0, url: null, error: { code: 'UNSUPPORTED_ASSET', stage: 'rendering' } });
    const ledger = await forWorkspace(orm, workspaceId).find(LedgerEntry, { renderId: id }, { orderBy: { id: 'asc' } });
    expect(ledger.map((e) => e.reason)).toEqual(['hold', 'release']);
    expect(await imageCredits(workspaceId)).toMatchObject({ used: before.used, held: 0 });
    const event = await forWorkspace(orm, workspaceId).findOne(OutboxEvent, { type: 'render.failed' });
    expect(event?.data).toMatchObject({ id, status: 'failed', error: { code: 'UNSUPPORTED_ASSET' } });
  });

  it('§7, §8: 402 LIMIT_IMAGE_SIZE beyond the plan and 402 INSUFFICIENT_CREDITS without credits, before anything is held', async () => {
    const free = await newWorkspace('free');
    const big = await post(free.liveKey, { edit: still('png', [text('x')], { size: { width: 1600, height: 1000 } }) }, '?scale=2');
    expect([big.statusCode, big.json().code]).toEqual([402, 'LIMIT_IMAGE_SIZE']);
    // The free plan grants 50 image credits; spend them through the ledger, then ask for one more.
    const credits = new CreditsService(orm);
    for (let i = 0; i < 50; i++) await credits.hold({ workspaceId: free.workspaceId, plan: 'free', kind: 'image', amount: 1, renderId: `rnd_spend_${i}`, mode: 'live' });
    const broke = await post(free.liveKey, { edit: still() });
    expect([broke.statusCode, broke.json().code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    expect(await allWorkspaces(orm).count(Render, { workspaceId: free.workspaceId })).toBe(0);
  });

  it('test keys render free and watermarked', async () => {
    const before = await imageCredits(workspaceId);
    const res = await post(test, { edit: still() });
    expect(res.json().data).toMatchObject({ status: 'done', mode: 'test', watermarked: true, credits: 0 });
    expect(new Date(res.json().data.expiresAt).getTime() - Date.now()).toBeLessThan(8 * 86_400_000);
    expect(await imageCredits(workspaceId)).toMatchObject({ used: before.used, held: 0 });
    const live1 = await fileOf((await post(live, { edit: still() })).json().data.url);
    const test1 = await fileOf(res.json().data.url);
    expect(live1.body.equals(test1.body)).toBe(false);
  });

  it('§1.4: 50 concurrent identical requests with one Idempotency-Key make one render and one charge', async () => {
    const before = await imageCredits(workspaceId);
    const body = { edit: still('png', [text('Once only')]) };
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(live, body, '', { 'idempotency-key': 'order-7731' })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(50).fill(200));
    const ids = new Set(answers.map((a) => a.json().data.id));
    expect(ids.size).toBe(1);
    expect(answers.every((a) => a.json().data.status === 'done')).toBe(true);
    expect(await allWorkspaces(orm).count(Render, { workspaceId, idempotencyKey: 'order-7731' })).toBe(1);
    expect((await imageCredits(workspaceId)).used - before.used).toBe(1);
    // A later retry (body field form) returns the original, bills nothing.
    const retry = await post(live, { ...body, idempotencyKey: 'order-7731' });
    expect(retry.json().data.id).toBe([...ids][0]);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect((await imageCredits(workspaceId)).used - before.used).toBe(1);
  });

  it('§1.4: the same key with another body answers 422 IDEMPOTENCY_KEY_REUSED; keys are per workspace', async () => {
    await post(live, { edit: still('png', [text('A')]) }, '', { 'idempotency-key': 'k-1' });
    const reused = await post(live, { edit: still('png', [text('B')]) }, '', { 'idempotency-key': 'k-1' });
    expect([reused.statusCode, reused.json().code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    const other = await newWorkspace('pro');
    const elsewhere = await post(other.liveKey, { edit: still('png', [text('B')]) }, '', { 'idempotency-key': 'k-1' });
    expect(elsewhere.json().data.status).toBe('done');
  });

  it('§4.1: retrieve and list renders of the own workspace only, with filters and sorts', async () => {
    const first = (await post(live, { edit: still() })).json().data;
    const again = (await get(live, `/v1/render/${first.id}`)).json().data;
    expect(again).toMatchObject({ id: first.id, status: 'done' });
    expect(keyOf(again.url)).toBe(keyOf(first.url));
    const other = await newWorkspace('pro');
    const hidden = await get(other.liveKey, `/v1/render/${first.id}`);
    expect([hidden.statusCode, hidden.json().code]).toEqual([404, 'RENDER_NOT_FOUND']);
    expect((await get(other.liveKey, '/v1/render')).json().pagination.total).toBe(0);
    const list = (await get(live, '/v1/render?status=done,failed&kind=image&sort=fileSizeBytes&order=asc&limit=5')).json();
    expect(list.pagination).toMatchObject({ page: 1, limit: 5 });
    expect(list.data.length).toBeGreaterThan(0);
    const sizes = list.data.map((r: { fileSizeBytes: number | null }) => r.fileSizeBytes ?? 0);
    expect(sizes).toEqual([...sizes].sort((a: number, b: number) => a - b));
    const failed = (await get(live, '/v1/render?status=failed')).json().data;
    expect(failed.every((r: { status: string }) => r.status === 'failed')).toBe(true);
    const bad = await get(live, '/v1/render?sort=url');
    expect([bad.statusCode, bad.json().code]).toEqual([422, 'INVALID_LIST_QUERY']);
  });

  it('§2 Cost estimate: POST and GET forms, the same price the render charges', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/render/estimate', headers: { 'x-api-key': live }, payload: { edit: still('png', [text('x')], { size: { width: 2400, height: 2400 } }) } });
    expect(res.json().data).toEqual({ kind: 'image', credits: 2, durationSec: 0, size: { width: 2400, height: 2400 }, breakdown: { duration: '0:00', size: '2400x2400', fps: 0, format: 'png', codec: 'png' } });
    const getForm = await get(live, '/v1/render/estimate?templateId=tpl_nope');
    expect(getForm.json().code).toBe('TEMPLATE_NOT_FOUND');
    // §7: neither templateId nor edit is 400; a query value outside its rule is 422 by path.
    expect((await get(live, '/v1/render/estimate')).json().code).toBe('INVALID_REQUEST');
    const badQuery = await get(live, '/v1/render/estimate?templateId=tpl_nope&fps=fast&colour=red');
    expect([badQuery.statusCode, badQuery.json().code, Object.keys(badQuery.json().errors).sort()]).toEqual([422, 'VALIDATION_FAILED', ['query.colour', 'query.fps']]);
  });

  it('§3, §4.2, §7: library templates render only as a published copy; values are validated against the fields', async () => {
    const library = await post(live, { templateId: 'tpl_lib_quote_card', values: { QUOTE: 'Hi' } });
    expect([library.statusCode, library.json().code]).toEqual([403, 'TEMPLATE_NOT_OWNED']);
    const copy = await api.app.inject({ method: 'POST', url: '/api/v1/templates/tpl_lib_quote_card/duplicate', headers: { 'x-api-key': live } });
    expect(copy.statusCode).toBe(201);
    const templateId = copy.json().data.id as string;
    const draft = await post(live, { templateId, values: { QUOTE: 'Hi' } });
    expect([draft.statusCode, draft.json().code]).toEqual([409, 'TEMPLATE_NOT_PUBLISHED']);
    const published = await api.cli('template:publish', '--id', templateId);
    expect(published).toMatchObject({ code: 0, json: { id: templateId, status: 'published' } });

    const tooLong = await post(live, { templateId, values: { QUOTE: 'x'.repeat(221), COLOUR: '#fff' } });
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.json()).toMatchObject({ code: 'TEMPLATE_VALIDATION_FAILED', errors: { 'values.QUOTE': [expect.any(String)], 'values.COLOUR': [expect.any(String)] } });

    // AUTHOR_PHOTO asks for 1:1: a landscape picture (a stock asset, by id) is refused once read, naming the field.
    const wrongShape = await post(live, { templateId, values: { QUOTE: 'Hi', AUTHOR_PHOTO: 'ast_lib_photo_mountains' } });
    expect(wrongShape.statusCode).toBe(422);
    expect(wrongShape.json()).toMatchObject({ code: 'TEMPLATE_VALIDATION_FAILED', errors: { 'values.AUTHOR_PHOTO': [expect.stringMatching(/aspect ratio 1:1/)] }, data: { status: 'failed' } });

    // The merge-pair form, with the field's default photo (a stock asset by id, read from storage).
    const res = await post(live, { templateId, merge: [{ find: 'QUOTE', replace: 'Small steps, shipped daily.' }, { find: 'AUTHOR', replace: 'Jane Q.' }] }, '?format=binary');
    expect(res.statusCode).toBe(200);
    expect(await sharp(res.rawPayload).metadata()).toMatchObject({ format: 'png', width: 1080, height: 1350 });
    const record = (await get(live, `/v1/render/${res.headers['x-render-id']}`)).json().data;
    expect(record).toMatchObject({ status: 'done', templateId, templateVersion: published.json.version, credits: 1 });
  });

  it('§3: cancelling a settled render answers 409 ALREADY_SETTLED', async () => {
    const done = (await post(live, { edit: still() })).json().data;
    const res = await api.app.inject({ method: 'POST', url: `/api/v1/render/${done.id}/cancel`, headers: { 'x-api-key': live } });
    expect([res.statusCode, res.json().code]).toEqual([409, 'ALREADY_SETTLED']);
  });

  it('a still whose worker and API both died is failed WORKER_LOST by the maintenance job, its credit released', async () => {
    const id = 'rnd_lost_still_1';
    const em = orm.em.fork();
    const old = new Date(Date.now() - 10 * 60_000);
    em.create(Render, {
      id, workspaceId, status: 'rendering', kind: 'image', mode: 'live', templateId: null, templateVersion: null, format: 'png', width: 10, height: 10,
      duration: null, fps: null, scale: 1, fileSizeBytes: null, renderTime: null, credits: 1, watermarked: false, outputKey: null, posterKey: null,
      thumbnailKey: null, expiresAt: null, purgedAt: null, error: null, progress: 0, cancelRequested: false, metadata: null, callback: null, edit: still(),
      idempotencyKey: null, requestHash: null, attempts: 1, createdAt: old, updatedAt: old, startedAt: old, completedAt: null,
    });
    await em.flush();
    await new CreditsService(orm).hold({ workspaceId, plan: 'pro', kind: 'image', amount: 1, renderId: id, mode: 'live' });
    const queues = api.app.get(JobQueues);
    const events = await queueEvents(queues, 'system');
    const job = await queues.add('renders.purge', {});
    expect(await job.waitUntilFinished(events, 20_000)).toMatchObject({ lost: 1 });
    await events.close();
    expect((await get(live, `/v1/render/${id}`)).json().data).toMatchObject({ status: 'failed', error: { code: 'WORKER_LOST', stage: 'rendering' } });
    const ledger = await forWorkspace(orm, workspaceId).find(LedgerEntry, { renderId: id }, { orderBy: { id: 'asc' } });
    expect(ledger.map((e) => e.reason)).toEqual(['hold', 'release']);
  });

  it('decisions.md retention: expired outputs are deleted and the record says so', async () => {
    const done = (await post(live, { edit: still() })).json().data;
    expect((await fileOf(done.url)).status).toBe(200);
    const purged = await api.app.get(RenderSweeps).purgeExpired(new Date(Date.now() + 31 * 86_400_000));
    expect(purged).toContain(done.id);
    expect((await fileOf(done.url)).status).toBe(404);
    expect((await get(live, `/v1/render/${done.id}`)).json().data).toMatchObject({ status: 'done', url: null });
  });
});
