import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { Asset } from '#libs/assets';
import { type ApiError } from '#libs/core';
import { PLANS } from '#libs/workspaces';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { createStorage } from '#libs/storage';
import { Template, TemplatesService } from '#libs/templates';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { lastCode, multipart, startApi, storedKey, type TestApi } from './harness.js';
import { until } from './render-helpers.js';

// Contract §2 (Template), §3 (Template status), §4.2, §4.7, §6 (template.published), §7, §8, §9;
// decisions.md "Template import", "done in the dashboard"; issue 5 (Templates module).

type Ws = { workspaceId: string; liveKey: string };
/** A decoded JSON answer (inject().json() is untyped). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded answers, read field by field in assertions
type Json = Record<string, any>;

describe('templates', () => {
  let api: TestApi;
  let orm: Orm;
  let svc: TemplatesService;
  let media: Server;
  let mediaBase: string;
  let a: Ws;
  let b: Ws;
  let small: Ws;
  let sessionA: Record<string, string>;
  let sessionB: Record<string, string>;

  const key = (ws: Ws) => ({ 'x-api-key': ws.liveKey });
  const req = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: unknown) =>
    api.app.inject({ method, url: `/api${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function signIn(phone: string, ws: Ws): Promise<Record<string, string>> {
    expect((await api.cli('user:create', '--phone', phone, '--workspace', ws.workspaceId, '--role', 'owner')).code).toBe(0);
    expect((await req('POST', '/auth/send-otp', {}, { phone })).statusCode).toBe(200);
    const res = await req('POST', '/auth/verify-otp', {}, { phone, otp: await lastCode(api, phone) });
    expect(res.statusCode).toBe(200);
    return { authorization: `Bearer ${res.json().data.token}`, 'x-service-org': ws.workspaceId };
  }

  /** A small valid template body: a text field, an image field with a default served by the loopback media server. */
  function design(over: Json = {}): Json {
    return {
      name: 'Launch card',
      description: 'Card for product launches',
      tags: ['Launch', 'card'],
      categoryId: 'social-media',
      subcategoryId: 'post',
      edit: {
        timeline: {
          background: '#101010',
          tracks: [
            { clips: [{ asset: { type: 'rich-text', text: 'Hello {{ NAME }}' }, start: 0, length: 5, width: 800, height: 200 }] },
            { clips: [{ asset: { type: 'image', src: '{{ PHOTO }}' }, start: 0, length: 5 }] },
          ],
        },
        output: { format: 'png', size: { width: 1200, height: 630 } },
      },
      fields: [
        { key: 'NAME', label: 'Name', type: 'text', required: true, config: { maxLength: 20 } },
        { key: 'PHOTO', type: 'image', defaultValue: `${mediaBase}/ok.png`, config: { aspectRatio: '40:21' } },
      ],
      ...over,
    };
  }

  async function createOwn(session: Record<string, string>, over: Json = {}): Promise<Json> {
    const res = await req('POST', '/organization/templates', session, design(over));
    expect(res.statusCode).toBe(201);
    return res.json().data;
  }

  async function errorOf(promise: Promise<unknown>): Promise<ApiError> {
    try {
      await promise;
    } catch (err) {
      return err as ApiError;
    }
    throw new Error('expected an error');
  }

  beforeAll(async () => {
    media = createServer((r, res) => {
      if (r.url === '/ok.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
    mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
    api = await startApi();
    orm = await openAppDatabase(api.config.database, { migrate: false });
    svc = new TemplatesService(orm, { policy: 'development', storage: createStorage(api.config) });
    a = (await api.cli('workspace:create', '--name', 'Alpha')).json as unknown as Ws;
    b = (await api.cli('workspace:create', '--name', 'Beta')).json as unknown as Ws;
    small = (await api.cli('workspace:create', '--name', 'Small', '--plan', 'free')).json as unknown as Ws;
    sessionA = await signIn('+4915100000101', a);
    sessionB = await signIn('+4915100000102', b);
  });
  afterAll(async () => {
    await orm.close(true);
    await api.close();
    media.closeAllConnections();
    media.close();
  });

  it('§4.2 list: the seeded library (8+ images, 6+ videos) with canRender false, isOwn false, inLibrary true', async () => {
    const res = await req('GET', '/v1/templates?scope=library&limit=100', key(a));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toMatchObject({ page: 1, limit: 100 });
    const items: Json[] = body.data;
    expect(items.filter((t) => t.kind === 'image').length).toBeGreaterThanOrEqual(8);
    expect(items.filter((t) => t.kind === 'video').length).toBeGreaterThanOrEqual(6);
    const og = items.find((t) => t.id === 'tpl_lib_og_image');
    expect(og).toMatchObject({
      name: expect.any(String), kind: 'image', width: 1200, height: 630, aspectRatio: '40:21', version: 1, status: 'published', visibility: 'public',
      canRender: false, isOwn: false, inLibrary: true, categoryId: 'web', subcategoryId: 'og-image', usageCount: 0,
    });
    expect(og?.fieldGroups).toEqual(expect.arrayContaining(['Text']));
    expect(og?.fields[0]).toEqual(expect.objectContaining({ key: 'TITLE', label: 'Title', type: 'text', group: 'Text', required: true, config: { maxLength: 90 } }));
    expect(og).not.toHaveProperty('edit');
    const cert = items.find((t) => t.id === 'tpl_lib_certificate');
    expect(cert).toMatchObject({ kind: 'image', width: 1123, height: 794 });
    const detail = (await req('GET', '/v1/templates/tpl_lib_certificate', key(a))).json().data;
    expect(detail.edit.output.format).toBe('pdf');
    // Its pictures are stock assets named by id (no URL stored; the template library e2e renders them).
    expect(JSON.stringify(detail.edit)).toContain('"src":"ast_lib_seal_gold"');
    expect((await req('GET', '/v1/templates', key(a))).json().pagination.limit).toBe(20);
    // Every library template has a preview picture, served from storage.
    expect(items.every((t) => typeof t.previewUrl === 'string')).toBe(true);
    const preview = await api.app.inject({ method: 'GET', url: new URL(og?.previewUrl as string).pathname });
    expect([preview.statusCode, preview.headers['content-type']]).toEqual([200, 'image/jpeg']);
    expect(preview.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  });

  it('§4.2 list filters (kind, categoryId, search over name/tags/description), sorts and pages', async () => {
    const ids = async (query: string) => {
      const res = await req('GET', `/v1/templates?${query}`, key(a));
      expect(res.statusCode).toBe(200);
      return (res.json().data as Json[]).map((t) => t.id as string);
    };
    expect(await ids('scope=library&kind=video&limit=100')).toHaveLength(6);
    expect(await ids('kind=image,video&scope=library&limit=100')).toHaveLength((await ids('scope=library&limit=100')).length);
    expect(await ids('scope=library&categoryId=documents')).toEqual(['tpl_lib_certificate']);
    expect(await ids('search=youtube%20THUMB')).toEqual(['tpl_lib_youtube_thumbnail']); // name, any case
    expect(await ids('search=ken%20burns')).toEqual(['tpl_lib_video_slideshow']); // a tag
    expect(await ids('search=printable')).toEqual(['tpl_lib_certificate']); // the description

    const byName = await ids('scope=library&sort=name&limit=100');
    expect(byName[0]).toBe('tpl_lib_social_post'); // "Bold social post"
    expect(byName.at(-1)).toBe('tpl_lib_youtube_thumbnail');
    expect(await ids('scope=library&sort=name&order=desc&limit=100')).toEqual([...byName].reverse());

    // Own templates: newest / oldest / popular (usage recorded by renders through recordUsage).
    const first = await createOwn(sessionA, { name: 'Sort one' });
    await new Promise((r) => setTimeout(r, 5));
    const second = await createOwn(sessionA, { name: 'Sort two: 50% off' });
    expect(await ids('scope=mine&search=50%25%20OFF')).toEqual([second.id]); // LIKE wildcards in a search are plain characters
    const mine = (await ids('scope=mine&sort=newest&limit=100')).filter((id) => id === first.id || id === second.id);
    expect(mine).toEqual([second.id, first.id]);
    expect((await ids('scope=mine&sort=oldest&limit=100')).filter((id) => id === first.id || id === second.id)).toEqual([first.id, second.id]);
    await svc.recordUsage(first.id);
    await svc.recordUsage(first.id);
    expect((await ids('scope=mine&sort=popular'))[0]).toBe(first.id);
    expect((await req('GET', `/v1/templates/${first.id}`, key(a))).json().data.usageCount).toBe(2);

    // Pages walk every row once.
    const all = await ids('limit=100');
    const total = (await req('GET', '/v1/templates?limit=7', key(a))).json().pagination;
    expect(total).toEqual({ page: 1, limit: 7, total: all.length, totalPages: Math.ceil(all.length / 7) });
    const walked: string[] = [];
    for (let page = 1; page <= total.totalPages; page++) walked.push(...(await ids(`limit=7&page=${page}`)));
    expect(walked).toEqual(all);

    for (const bad of ['sort=trending', 'scope=everything', 'kind=audio', 'status=deleted', 'categoryId=nope', 'limit=101', `search=${'x'.repeat(129)}`, 'colour=red']) {
      const res = await req('GET', `/v1/templates?${bad}`, key(a));
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('INVALID_LIST_QUERY');
    }
  });

  it('§4.2 status applies to own templates only; archived ones show only when asked for', async () => {
    const t = await createOwn(sessionA, { name: 'To archive' });
    const arch = await req('POST', `/organization/templates/${t.id}/archive`, sessionA);
    expect(arch.statusCode).toBe(200);
    expect(arch.json().data).toMatchObject({ id: t.id, status: 'archived' });
    const ids = async (q: string) => ((await req('GET', `/v1/templates?${q}&limit=100`, key(a))).json().data as Json[]).map((x) => x.id);
    expect(await ids('scope=mine')).not.toContain(t.id);
    expect(await ids('scope=mine&status=archived')).toEqual([t.id]);
    const withLibrary = await ids('status=archived');
    expect(withLibrary).toContain(t.id);
    expect(withLibrary).toContain('tpl_lib_social_post');
  });

  it('§4.2 retrieve: another workspace\'s private template is 404 TEMPLATE_NOT_FOUND everywhere; a public published one is in the library', async () => {
    const secret = await createOwn(sessionB, { name: 'Beta secret' });
    for (const res of [
      await req('GET', `/v1/templates/${secret.id}`, key(a)),
      await req('POST', `/v1/templates/${secret.id}/duplicate`, key(a)),
      await req('GET', `/organization/templates/${secret.id}`, sessionA),
      await req('PATCH', `/organization/templates/${secret.id}`, sessionA, { version: 1, name: 'mine now' }),
      await req('POST', `/organization/templates/${secret.id}/publish`, sessionA),
      await req('POST', `/organization/templates/${secret.id}/archive`, sessionA),
      await req('GET', '/v1/templates/tpl_01NOSUCHTEMPLATE00000000000', key(a)),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('TEMPLATE_NOT_FOUND');
    }
    expect(((await req('GET', '/v1/templates?limit=100', key(a))).json().data as Json[]).map((t) => t.id)).not.toContain(secret.id);
    expect((await errorOf(svc.findForRender(a.workspaceId, secret.id))).code).toBe('TEMPLATE_NOT_FOUND');
    // B still sees it, unchanged.
    expect((await req('GET', `/v1/templates/${secret.id}`, key(b))).json().data).toMatchObject({ name: 'Beta secret', isOwn: true, version: 1 });

    // Shared: public and published → in A's library, copyable, not renderable by A.
    const shared = await createOwn(sessionB, { name: 'Beta shared', visibility: 'public' });
    expect((await req('GET', `/v1/templates/${shared.id}`, key(a))).statusCode).toBe(404); // still a draft
    expect((await req('POST', `/organization/templates/${shared.id}/publish`, sessionB)).statusCode).toBe(200);
    const seen = ((await req('GET', '/v1/templates?scope=library&search=beta%20shared', key(a))).json().data as Json[])[0];
    expect(seen).toMatchObject({ id: shared.id, isOwn: false, inLibrary: true, canRender: false, visibility: 'public' });
    expect((await errorOf(svc.findForRender(a.workspaceId, shared.id))).code).toBe('TEMPLATE_NOT_OWNED');
    expect((await req('POST', `/v1/templates/${shared.id}/duplicate`, key(a))).statusCode).toBe(201);
  });

  it('§3 duplicate: a private draft at version 1, usage cleared, 201 with {id, name, status, visibility, version}', async () => {
    const res = await req('POST', '/v1/templates/tpl_lib_social_post/duplicate', key(a));
    expect(res.statusCode).toBe(201);
    expect(res.json().message).toEqual(expect.any(String));
    const data = res.json().data;
    expect(Object.keys(data).sort()).toEqual(['id', 'name', 'status', 'version', 'visibility']);
    expect(data).toEqual({ id: expect.stringMatching(/^tpl_[0-9A-Z]{26}$/), name: 'Bold social post', status: 'draft', visibility: 'private', version: 1 });
    const copy = (await req('GET', `/v1/templates/${data.id}`, key(a))).json().data;
    const original = (await req('GET', '/v1/templates/tpl_lib_social_post', key(a))).json().data;
    expect(copy).toMatchObject({ isOwn: true, inLibrary: false, canRender: false, usageCount: 0, publishedAt: null, categoryId: 'social-media' });
    expect(copy.fields).toEqual(original.fields);
    expect(copy.edit).toEqual(original.edit);
    expect(storedKey(api.config, copy.previewUrl)).toBe('library/previews/tpl_lib_social_post.jpg');
    // Duplicating an own template names the copy.
    const again = await req('POST', `/v1/templates/${data.id}/duplicate`, key(a));
    expect(again.json().data.name).toBe('Bold social post (copy)');
    // The other workspace does not see A's copy.
    expect((await req('GET', `/v1/templates/${data.id}`, key(b))).statusCode).toBe(404);
    // Scope: templates:write.
    const reader = (await api.cli('key:create', '--workspace', a.workspaceId, '--scopes', 'templates:read')).json as { key: string };
    const refused = await req('POST', '/v1/templates/tpl_lib_social_post/duplicate', { 'x-api-key': reader.key });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });

  it('§8 template count: 402 LIMIT_TEMPLATES past the plan\'s allowance (free: 10); archiving frees a place', async () => {
    const copies: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await req('POST', '/v1/templates/tpl_lib_quote_card/duplicate', key(small));
      expect(res.statusCode).toBe(201);
      copies.push(res.json().data.id);
    }
    const over = await req('POST', '/v1/templates/tpl_lib_quote_card/duplicate', key(small));
    expect(over.statusCode).toBe(402);
    expect(over.json().code).toBe('LIMIT_TEMPLATES');
    const imported = await req('POST', '/v1/templates/import', key(small), { name: 'x', edit: design().edit, fields: design().fields });
    expect(imported.json().code).toBe('LIMIT_TEMPLATES');
    expect((await api.cli('template:archive', '--id', copies[0]!)).json).toEqual({ id: copies[0], status: 'archived', version: 1 });
    expect((await req('POST', '/v1/templates/tpl_lib_quote_card/duplicate', key(small))).statusCode).toBe(201);
  });

  it('§8 template count holds under concurrent copies and imports: 14 at once on a free workspace → exactly 10', async () => {
    const ws = (await api.cli('workspace:create', '--name', 'Racing', '--plan', 'free')).json as { workspaceId: string };
    const templates = svc;
    const results = await Promise.allSettled(Array.from({ length: 14 }, (_, i) => (i % 2
      ? templates.duplicate(ws.workspaceId, PLANS.free, 'tpl_lib_quote_card')
      : templates.import(ws.workspaceId, PLANS.free, { name: `race ${i}`, edit: design().edit, fields: design().fields }))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(new Set(results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : [])))).toEqual(new Set(['LIMIT_TEMPLATES']));
    expect(await forWorkspace(orm, ws.workspaceId).count(Template, { workspaceId: ws.workspaceId })).toBe(10);
  });

  it('decisions.md import: fields derived from the placeholders (media kinds from src, defaults from merge); 201 private draft', async () => {
    const edit = {
      timeline: {
        tracks: [
          { clips: [{ asset: { type: 'rich-text', text: '{{ HEADLINE }} by {{author_name}}' }, start: 0, length: 4 }] },
          { clips: [{ asset: { type: 'image', src: '{{ PHOTO }}' }, start: 0, length: 4 }] },
        ],
      },
      output: { format: 'jpg', resolution: 'hd', aspectRatio: '9:16' },
      merge: [{ find: 'HEADLINE', replace: 'Hello' }],
    };
    const res = await req('POST', '/v1/templates/import', key(a), { name: 'Imported story', tags: ['Story'], categoryId: 'social-media', edit });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toEqual({ id: expect.stringMatching(/^tpl_/), name: 'Imported story', status: 'draft', visibility: 'private', version: 1 });
    const t = (await req('GET', `/v1/templates/${res.json().data.id}`, key(a))).json().data;
    expect(t).toMatchObject({ kind: 'image', width: 720, height: 1280, aspectRatio: '9:16', tags: ['story'], fieldGroups: ['Content', 'Media'] });
    expect(t.fields).toEqual([
      { key: 'HEADLINE', label: 'Headline', type: 'text', group: 'Content', required: false, defaultValue: 'Hello', config: {} },
      { key: 'author_name', label: 'Author name', type: 'text', group: 'Content', required: false, defaultValue: null, config: {} },
      { key: 'PHOTO', label: 'Photo', type: 'image', group: 'Media', required: true, defaultValue: null, config: {} },
    ]);
    expect(t.edit).toEqual(edit); // stored as written, placeholders kept
  });

  it('import refusals: 422 TEMPLATE_VALIDATION_FAILED with path-named errors, EMPTY_TIMELINE, INVALID_CATEGORY; 422 VALIDATION_FAILED for the body\'s shape, 400 for a malformed body (§7)', async () => {
    const imp = (body: Json) => req('POST', '/v1/templates/import', key(a), body);
    const bad = await imp({
      name: 'Broken',
      kind: 'video',
      edit: {
        timeline: { tracks: [{ clips: [{ asset: { type: 'rich-text', text: 'x' }, start: 0, length: -2, postion: 'top' }] }] },
        output: { format: 'png' },
      },
      fields: [{ key: 'x', type: 'picture' }],
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().code).toBe('TEMPLATE_VALIDATION_FAILED');
    expect(bad.json().errors).toEqual({
      'fields[0].type': ['must be one of text, image, video, audio, color, number, boolean, select, got "picture"'],
      'edit.timeline.tracks[0].clips[0].length': ['must be greater than 0, got -2'],
      'edit.timeline.tracks[0].clips[0].postion': ['unknown field "postion" (did you mean "position"?)'],
    });
    const kind = await imp({ name: 'Kind', kind: 'video', edit: design().edit, fields: design().fields });
    expect(kind.json().errors).toEqual({ kind: ['is video, but edit.output.format "png" makes an image'] });
    const empty = await imp({ name: 'Empty', edit: { timeline: { tracks: [{ clips: [] }] }, output: { format: 'png' } } });
    expect([empty.statusCode, empty.json().code]).toEqual([422, 'EMPTY_TIMELINE']);
    const cat = await imp({ name: 'Cat', categoryId: 'web', subcategoryId: 'intro', edit: design().edit, fields: design().fields });
    expect([cat.statusCode, cat.json().code]).toEqual([422, 'INVALID_CATEGORY']);
    expect(cat.json().errors.subcategoryId[0]).toContain('not in category "web"');
    const shape = await imp({ edit: 'nope', colour: 'red', visibility: 'public', tags: ['ok', ' '], name: ' ' });
    expect(shape.statusCode).toBe(422);
    expect(shape.json().code).toBe('VALIDATION_FAILED');
    expect(Object.keys(shape.json().errors).sort()).toEqual(['colour', 'edit', 'name', 'tags', 'visibility']);
    expect(shape.json().errors.visibility).toEqual(['Unknown field "visibility"']);
    const array = await req('POST', '/v1/templates/import', key(a), [{ name: 'A', edit: design().edit }]);
    expect([array.statusCode, array.json().code]).toEqual([400, 'INVALID_REQUEST']);
  });

  it('§9 saving with a stale version answers 409 TEMPLATE_STALE; a successful save bumps the version', async () => {
    const t = await createOwn(sessionA);
    expect(t).toMatchObject({ version: 1, status: 'draft', visibility: 'private', isOwn: true });
    const saved = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 1, name: 'Renamed', tags: ['x'] });
    expect(saved.statusCode).toBe(200);
    expect(saved.json().data).toMatchObject({ name: 'Renamed', version: 2, tags: ['x'] });
    const stale = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 1, name: 'Lost update' });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ code: 'TEMPLATE_STALE', data: { id: t.id, version: 2 } });
    const missing = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { name: 'no version' });
    expect([missing.statusCode, missing.json().code, Object.keys(missing.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['version']]);
    // Two saves from the same version at once: one wins, the other is told it is stale.
    const racing = await Promise.all([1, 2].map((i) => req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 2, name: `Race ${i}` })));
    expect(racing.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect((await req('GET', `/organization/templates/${t.id}`, sessionA)).json().data.version).toBe(3);
    // Editing the edit re-derives the geometry.
    const resized = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 3, edit: { ...design().edit, output: { format: 'mp4', size: { width: 1920, height: 1080 } } } });
    expect(resized.json().data).toMatchObject({ version: 4, kind: 'video', width: 1920, height: 1080, aspectRatio: '16:9' });
  });

  it('publish review: 422 NOT_PUBLISHABLE with checks naming each problem; the template stays a draft', async () => {
    const t = await createOwn(sessionA, {
      edit: {
        timeline: {
          tracks: [
            { clips: [{ asset: { type: 'rich-text', text: '{{ NAME }} and {{ GHOST }}' }, start: 0, length: 5 }] },
            { clips: [{ asset: { type: 'image', src: `${mediaBase}/missing.png` }, start: 0, length: 5 }] },
          ],
        },
        output: { format: 'png' },
      },
      fields: [{ key: 'NAME' }, { key: 'UNUSED' }],
    });
    const res = await req('POST', `/organization/templates/${t.id}/publish`, sessionA);
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body.code).toBe('NOT_PUBLISHABLE');
    expect(body.checks.map((c: Json) => c.name)).toEqual(['category', 'edit-valid', 'timeline-not-empty', 'placeholders-defined', 'fields-referenced', 'media-reachable']);
    const failed = Object.fromEntries((body.checks as Json[]).filter((c) => !c.passed).map((c) => [c.name, c.message]));
    expect(failed).toEqual({
      'placeholders-defined': 'Placeholders with no field: {{GHOST}}',
      'fields-referenced': 'Fields no placeholder uses: UNUSED',
      'media-reachable': `Unreachable media: ${mediaBase}/missing.png (HTTP 404)`,
    });
    for (const c of body.checks as Json[]) expect(c).toEqual({ name: expect.any(String), passed: expect.any(Boolean), message: expect.any(String) });
    expect((await req('GET', `/organization/templates/${t.id}`, sessionA)).json().data).toMatchObject({ status: 'draft', canRender: false });
    expect((await errorOf(svc.findForRender(a.workspaceId, t.id))).code).toBe('TEMPLATE_NOT_PUBLISHED');
  });

  it('INVALID_CATEGORY: no main category at publish, a subcategory outside its category, an unknown category', async () => {
    const t = await createOwn(sessionA, { categoryId: null, subcategoryId: null });
    const res = await req('POST', `/organization/templates/${t.id}/publish`, sessionA);
    expect([res.statusCode, res.json().code]).toEqual([422, 'INVALID_CATEGORY']);
    expect((res.json().checks as Json[]).find((c) => c.name === 'category')).toMatchObject({ passed: false, message: 'a main category (categoryId) is required to publish' });
    const sub = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 1, categoryId: 'web', subcategoryId: 'intro' });
    expect([sub.statusCode, sub.json().code]).toEqual([422, 'INVALID_CATEGORY']);
    const unknown = await req('POST', '/organization/templates', sessionA, design({ categoryId: 'astrology' }));
    expect([unknown.statusCode, unknown.json().code]).toEqual([422, 'INVALID_CATEGORY']);
    const cats = await req('GET', '/organization/template-categories', sessionA);
    expect(cats.json().data.find((c: Json) => c.id === 'web').subcategories.map((s: Json) => s.id)).toContain('og-image');
    expect((await req('GET', '/v1/templates/categories', key(a))).json().data).toEqual(cats.json().data);
  });

  it('§3/§6 publish: template.published {id, name, version} in the outbox; the template can be rendered; publishing again changes nothing', async () => {
    const t = await createOwn(sessionA, { name: 'Ready card' });
    const badVersion = await req('POST', `/organization/templates/${t.id}/publish`, sessionA, { version: 'one', force: true });
    expect([badVersion.statusCode, badVersion.json().code, Object.keys(badVersion.json().errors).sort()]).toEqual([422, 'VALIDATION_FAILED', ['force', 'version']]);
    const stale = await req('POST', `/organization/templates/${t.id}/publish`, sessionA, { version: 7 });
    expect([stale.statusCode, stale.json().code]).toEqual([409, 'TEMPLATE_STALE']);
    const res = await req('POST', `/organization/templates/${t.id}/publish`, sessionA, { version: 1 });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: t.id, status: 'published', version: 1, publishedAt: expect.any(String) });
    expect((res.json().data.checks as Json[]).every((c) => c.passed)).toBe(true);
    const events = await forWorkspace(orm, a.workspaceId).find(OutboxEvent, { type: 'template.published' });
    expect(events.filter((e) => e.data.id === t.id).map((e) => e.data)).toEqual([{ id: t.id, name: 'Ready card', version: 1 }]);
    // The body is optional: none, or an empty one sent as JSON (what many clients do), is no version.
    const again = await api.app.inject({ method: 'POST', url: `/api/organization/templates/${t.id}/publish`, headers: { ...sessionA, 'content-type': 'application/json' }, payload: '' });
    expect(again.statusCode).toBe(200);
    expect((await req('POST', `/organization/templates/${t.id}/publish`, sessionA)).statusCode).toBe(200);
    expect((await forWorkspace(orm, a.workspaceId).find(OutboxEvent, { type: 'template.published' })).filter((e) => e.data.id === t.id)).toHaveLength(1);
    const listed = ((await req('GET', '/v1/templates?scope=mine&limit=100', key(a))).json().data as Json[]).find((x) => x.id === t.id);
    expect(listed).toMatchObject({ status: 'published', canRender: true, isOwn: true, inLibrary: false });
    const renderable = await svc.findForRender(a.workspaceId, t.id);
    expect(renderable.fields.map((f) => f.key)).toEqual(['NAME', 'PHOTO']);
    expect(renderable.edit).toEqual(design().edit);
    // Library templates are not the workspace's: copy first.
    expect((await errorOf(svc.findForRender(a.workspaceId, 'tpl_lib_social_post'))).code).toBe('TEMPLATE_NOT_OWNED');

    // A published template stays publishable: a save that breaks its review is refused, a good one is kept published.
    const broken = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 1, fields: [...design().fields, { key: 'EXTRA' }] });
    expect([broken.statusCode, broken.json().code]).toEqual([422, 'NOT_PUBLISHABLE']);
    const fine = await req('PATCH', `/organization/templates/${t.id}`, sessionA, { version: 1, name: 'Ready card v2' });
    expect(fine.json().data).toMatchObject({ status: 'published', version: 2, name: 'Ready card v2' });

    // Archive: no longer renderable; publishing brings it back through the review.
    expect((await req('POST', `/organization/templates/${t.id}/archive`, sessionA)).json().data).toMatchObject({ status: 'archived', version: 2 });
    expect((await errorOf(svc.findForRender(a.workspaceId, t.id))).code).toBe('TEMPLATE_NOT_PUBLISHED');
    expect((await req('POST', `/organization/templates/${t.id}/publish`, sessionA)).json().data.status).toBe('published');
  });

  it('decisions.md CLI: template:publish and template:archive print {id, status, version}', async () => {
    const t = await createOwn(sessionB, { name: 'From the CLI' });
    expect(await api.cli('template:publish', '--id', t.id)).toEqual({ code: 0, json: { id: t.id, status: 'published', version: 1 } });
    const events = await forWorkspace(orm, b.workspaceId).find(OutboxEvent, { type: 'template.published' });
    expect(events.some((e) => e.data.id === t.id)).toBe(true);
    expect(await api.cli('template:archive', '--id', t.id)).toEqual({ code: 0, json: { id: t.id, status: 'archived', version: 1 } });
    const failing = await createOwn(sessionB, { fields: [...design().fields, { key: 'EXTRA' }] });
    const refused = await api.cli('template:publish', '--id', failing.id);
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ error: { code: 'NOT_PUBLISHABLE', message: expect.stringContaining('Fields no placeholder uses: EXTRA') } });
    expect((await api.cli('template:archive', '--id', 'tpl_01NOSUCHTEMPLATE00000000000')).json).toMatchObject({ error: { code: 'TEMPLATE_NOT_FOUND' } });
    expect((await api.cli('template:publish')).json).toMatchObject({ error: { code: 'INVALID_REQUEST', message: '--id is required' } });
  });

  it('issue 14: a template names media assets by id (a src, an image default); it publishes once they are ready, and renders them', async () => {
    // An upload stays `processing` until a worker takes it: none runs in this file yet.
    const upload = async (ws: Ws, colour: string) => {
      const file = await sharp({ create: { width: 400, height: 210, channels: 3, background: colour } }).png().toBuffer();
      const body = multipart([{ name: 'file', file, filename: 'picture.png' }]);
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { ...key(ws), ...body.headers }, payload: body.payload });
      expect(res.statusCode).toBe(201);
      return res.json().data.id as string;
    };
    const corner = await upload(a, '#ff0000');
    const photo = await upload(a, '#0000ff');
    const theirs = await upload(b, '#00ff00');
    const edit = (src: string) => ({
      timeline: {
        tracks: [
          { clips: [{ asset: { type: 'image', src }, start: 0, length: 5, width: 100, height: 50, position: 'topLeft' }] },
          { clips: [{ asset: { type: 'image', src: '{{PHOTO}}' }, start: 0, length: 5 }] },
        ],
      },
      output: { format: 'png', size: { width: 400, height: 210 } },
    });
    const fields = [{ key: 'PHOTO', type: 'image', defaultValue: photo, config: { aspectRatio: '40:21' } }];
    const imported = await req('POST', '/v1/templates/import', key(a), { name: 'By asset id', edit: edit(corner), fields, categoryId: 'web', subcategoryId: 'og-image' });
    expect(imported.statusCode).toBe(201);
    const id = imported.json().data.id as string;
    expect((await req('GET', `/v1/templates/${id}`, key(a))).json().data.edit.timeline.tracks[0].clips[0].asset.src).toBe(corner);
    // Another workspace's asset saves too (it is only an id), and is named by the review.
    const created = await createOwn(sessionA, { name: 'Someone else\'s picture', edit: edit(theirs), fields });
    const saved = await req('PATCH', `/organization/templates/${created.id}`, sessionA, { version: 1, name: 'Their picture', edit: edit(theirs) });
    expect(saved.statusCode).toBe(200);

    const reviewOf = async (templateId: string) => {
      const res = await req('POST', `/organization/templates/${templateId}/publish`, sessionA);
      return { status: res.statusCode, code: res.json().code, media: (res.json().checks as Json[] | undefined)?.find((c) => c.name === 'media-reachable') };
    };
    expect(await reviewOf(id)).toEqual({
      status: 422, code: 'NOT_PUBLISHABLE',
      media: { name: 'media-reachable', passed: false, message: `Assets that cannot be used: ${corner} (is processing; publish once it is ready (asset.ready)); ${photo} (is processing; publish once it is ready (asset.ready))` },
    });
    const others = await reviewOf(created.id);
    expect([others.status, others.media?.message]).toEqual([422, expect.stringContaining(`${theirs} (no asset of this workspace or the stock library has this id)`)]);

    const worker = await createWorkerApp(api.config);
    try {
      await until(async () => (await allWorkspaces(orm).fork().find(Asset, { id: { $in: [corner, photo] }, status: 'ready' })).length === 2, 'the uploads to be ready', 60_000);
      const published = await req('POST', `/organization/templates/${id}/publish`, sessionA);
      expect(published.statusCode).toBe(200);
      expect((published.json().data.checks as Json[]).find((c) => c.name === 'media-reachable')?.message).toBe('Every media file answered (0); every asset is ready (2)');
      // Rendered with the pictures: the fixed one in the corner over the field's default.
      const res = await req('POST', '/v1/render?format=binary', key(a), { templateId: id });
      expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/png']);
      const { data, info } = await sharp(res.rawPayload).raw().toBuffer({ resolveWithObject: true });
      const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
      expect([info.width, info.height, pixel(10, 10), pixel(300, 150)]).toEqual([400, 210, [255, 0, 0], [0, 0, 255]]);
    } finally {
      await worker.close();
    }
  });
});
