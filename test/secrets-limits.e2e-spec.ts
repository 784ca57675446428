import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openAppDatabase } from '#libs/app';
import { LedgerEntry } from '#libs/credits';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { createRedis, RedisKeys } from '#libs/redis';
import { Render } from '#libs/renders';
import { WebhookEndpoint } from '#libs/webhooks';
import { startApi, userSession, type TestApi } from './harness.js';

// Issue 28 "Stored secrets and limits": webhook header values sealed and masked (§2 Webhook endpoint,
// §4.6, §4.7, §6), the public template library an owner's (§4.2, decisions.md "Templates"), the queue
// depth held under parallel requests (§8, §7 LIMIT_QUEUE_DEPTH). Signatures: secrets-limits-signatures.e2e-spec.ts.

const TOKEN = 'Bearer sk_live_51HxQwErTy9876zZ1a2b';

describe('issue 28: stored secrets and limits', () => {
  let api: TestApi;
  let orm: Orm;
  let receiver: Server;
  let base: string;
  const hits: { path: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits.push({ path: req.url ?? '', headers: req.headers });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    // Twelve parallel renders and their reads on the free plan's 20 a minute: the rate is not under test here.
    api = await startApi({ RATE_LIMIT_MULTIPLIER: '20' });
    orm = await openAppDatabase(api.config.database, { migrate: false });
  }, 60_000);
  afterAll(async () => {
    await orm.close(true);
    await api.close();
    receiver.closeAllConnections();
    receiver.close();
  });

  describe('webhook header values are sealed at rest and shown masked', () => {
    let ws: { workspaceId: string; liveKey: string };
    let owner: string;
    const key = () => ({ 'x-api-key': ws.liveKey });
    const session = () => ({ authorization: `Bearer ${owner}`, 'x-service-org': ws.workspaceId });
    /** The row as stored, every column as text (what a database dump or backup holds). */
    const stored = async (id: string) => JSON.stringify(await allWorkspaces(orm).fork().findOneOrFail(WebhookEndpoint, { id }));
    const test = async (id: string) => {
      hits.length = 0;
      const res = await api.app.inject({ method: 'POST', url: `/api/v1/webhooks/${id}/test`, headers: key() });
      expect([res.statusCode, res.json().data.ok]).toEqual([200, true]);
      return hits.at(-1)!.headers;
    };

    beforeAll(async () => {
      ws = (await api.cli('workspace:create', '--name', 'Sealed')).json as typeof ws;
      owner = await userSession(api, ws.workspaceId, '+4915100028001', 'owner');
    }, 60_000);

    it('§4.6: registering answers the names with masked values; no route reads a value back; the stored row holds none in clear', async () => {
      const headers = [{ key: 'Authorization', value: TOKEN }, { key: 'X-Tenant', value: 'tenant-{{org.id}}' }, { key: 'X-Short', value: 'hunter2' }];
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: key(), payload: { url: `${base}/sealed`, headers } });
      expect(res.statusCode).toBe(201);
      const { id } = res.json().data;
      const masked = [{ key: 'Authorization', value: 'Bearer ••••1a2b' }, { key: 'X-Tenant', value: '••••id}}' }, { key: 'X-Short', value: '••••' }];
      expect(res.json().data.headers).toEqual(masked);
      const reads = [
        await api.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}`, headers: key() }),
        await api.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: key() }),
        await api.app.inject({ method: 'GET', url: '/api/organization/webhooks', headers: session() }),
        await api.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries`, headers: key() }),
      ];
      for (const read of reads) {
        expect(read.statusCode).toBe(200);
        expect(read.body).not.toContain('sk_live_51HxQwErTy9876z');
        expect(read.body).not.toContain('hunter2');
      }
      expect(reads[0]!.json().data.headers).toEqual(masked);
      expect(reads[2]!.json().data.find((e: { id: string }) => e.id === id).headers).toEqual(masked);
      const row = await stored(id);
      expect(row).not.toContain('sk_live_51HxQwErTy9876z');
      expect(row).not.toContain('hunter2');
      expect(row).not.toContain('tenant-');

      // §6: a delivery sends the real values, variables resolved.
      const sent = await test(id);
      expect([sent.authorization, sent['x-tenant'], sent['x-short']]).toEqual([TOKEN, `tenant-${ws.workspaceId}`, 'hunter2']);
    });

    it('§4.6 update: the list as read, sent back, keeps every value; a new value replaces one; a mask that stands for nothing is 422', async () => {
      const created = await api.app.inject({ method: 'POST', url: '/api/organization/webhooks', headers: session(), payload: { url: `${base}/dash`, events: ['render.completed'], headers: [{ key: 'Authorization', value: TOKEN }] } });
      expect(created.statusCode).toBe(201);
      const { id, headers: shown } = created.json().data;
      expect(shown).toEqual([{ key: 'Authorization', value: 'Bearer ••••1a2b' }]);
      // The dashboard's edit form sends every field back, the headers as shown.
      const same = await api.app.inject({ method: 'PATCH', url: `/api/organization/webhooks/${id}`, headers: session(), payload: { description: 'renamed', headers: [...shown, { key: 'X-Added', value: 'added-value' }] } });
      expect(same.statusCode).toBe(200);
      expect((await test(id)).authorization).toBe(TOKEN);
      // A PATCH without headers leaves them.
      expect((await api.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, headers: key(), payload: { description: 'again' } })).statusCode).toBe(200);
      expect((await test(id))['x-added']).toBe('added-value');
      // A new value replaces the stored one, and is shown masked at once.
      const replaced = await api.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, headers: key(), payload: { headers: [{ key: 'Authorization', value: 'Bearer rotated-token-0000-9z9z' }] } });
      expect(replaced.json().data.headers).toEqual([{ key: 'Authorization', value: 'Bearer ••••9z9z' }]);
      expect((await test(id)).authorization).toBe('Bearer rotated-token-0000-9z9z');
      expect(await stored(id)).not.toContain('rotated-token');
      // A masked value under another name, or an old mask, cannot stand for a value: nothing changes.
      for (const headers of [[{ key: 'X-Copy', value: 'Bearer ••••9z9z' }], [{ key: 'Authorization', value: 'Bearer ••••1a2b' }]]) {
        const refused = await api.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, headers: key(), payload: { headers } });
        expect([refused.statusCode, refused.json().code, Object.keys(refused.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['headers[0].value']]);
      }
      const onCreate = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: key(), payload: { url: `${base}/x`, headers: [{ key: 'Authorization', value: 'Bearer ••••9z9z' }] } });
      expect([onCreate.statusCode, Object.keys(onCreate.json().errors)]).toEqual([422, ['headers[0].value']]);
      expect((await test(id)).authorization).toBe('Bearer rotated-token-0000-9z9z');
    });

    it('values stored in clear before this change are sealed when a process opens the database, and still delivered', async () => {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: key(), payload: { url: `${base}/legacy` } });
      const { id } = res.json().data;
      // A row as the previous version wrote it: the value in clear.
      await forWorkspace(orm, ws.workspaceId).nativeUpdate(WebhookEndpoint, { id }, { headers: [{ key: 'Authorization', value: TOKEN }] });
      expect(await stored(id)).toContain('sk_live_51HxQwErTy9876z');
      // Shown masked and sent as it is meanwhile.
      expect((await api.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}`, headers: key() })).json().data.headers).toEqual([{ key: 'Authorization', value: 'Bearer ••••1a2b' }]);
      expect((await test(id)).authorization).toBe(TOKEN);
      // The next process to open the database seals it (here the operator's CLI, a process of its own, as after a deploy).
      expect((await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'test', '--scopes', 'renders:read')).code).toBe(0);
      expect(await stored(id)).not.toContain('sk_live_51HxQwErTy9876z');
      expect((await test(id)).authorization).toBe(TOKEN);
    });
  });

  describe('the public template library is an owner\'s', () => {
    let ws: { workspaceId: string; liveKey: string };
    let other: { workspaceId: string; liveKey: string };
    let owner: string;
    let member: string;
    const as = (token: string) => ({ authorization: `Bearer ${token}`, 'x-service-org': ws.workspaceId });
    const design = (name: string, over: Record<string, unknown> = {}) => ({
      name, categoryId: 'social-media', subcategoryId: 'post',
      edit: {
        timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'Hello {{NAME}}', font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 5 }] }] },
        output: { format: 'png', size: { width: 400, height: 300 } },
      },
      ...over,
    });
    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: object) =>
      api.app.inject({ method, url: `/api${url}`, headers, ...(payload ? { payload } : {}) });
    /** Ids another workspace sees in the library. */
    const library = async () => (await call('GET', '/v1/templates?scope=library&limit=100', { 'x-api-key': other.liveKey })).json().data.map((t: { id: string }) => t.id) as string[];
    const published = async () => (await forWorkspace(orm, ws.workspaceId).find(OutboxEvent, { type: 'template.published' })).map((e) => e.data.id);
    const refused = (res: { statusCode: number; json(): { code: string } }) => expect([res.statusCode, res.json().code]).toEqual([403, 'ROLE_REQUIRED']);

    beforeAll(async () => {
      ws = (await api.cli('workspace:create', '--name', 'Library')).json as typeof ws;
      other = (await api.cli('workspace:create', '--name', 'Elsewhere')).json as typeof other;
      owner = await userSession(api, ws.workspaceId, '+4915100028011', 'owner');
      member = await userSession(api, ws.workspaceId, '+4915100028012', 'member');
    }, 60_000);

    it('a member may not create, make public, save or publish a public template (403 ROLE_REQUIRED): nothing reaches the library', async () => {
      refused(await call('POST', '/organization/templates', as(member), design('Member public', { visibility: 'public' })));
      // A private template: the member's to write and publish (decisions.md "Templates").
      const mine = (await call('POST', '/organization/templates', as(member), design('Member private'))).json().data;
      expect(mine).toMatchObject({ visibility: 'private', status: 'draft' });
      const pub = await call('POST', `/organization/templates/${mine.id}/publish`, as(member));
      expect([pub.statusCode, pub.json().data.status]).toEqual([200, 'published']);
      refused(await call('PATCH', `/organization/templates/${mine.id}`, as(member), { version: mine.version, visibility: 'public' }));
      // An owner's public draft: the member may not save it nor publish it into the library.
      const shared = (await call('POST', '/organization/templates', as(owner), design('Owner public', { visibility: 'public' }))).json().data;
      expect(shared.visibility).toBe('public');
      refused(await call('PATCH', `/organization/templates/${shared.id}`, as(member), { version: shared.version, name: 'Renamed by a member' }));
      refused(await call('POST', `/organization/templates/${shared.id}/publish`, as(member)));
      expect(await library()).not.toContain(mine.id);
      expect(await library()).not.toContain(shared.id);
      expect(await published()).toEqual([mine.id]);
      // The owner publishes it: in the library, seen from another workspace.
      expect((await call('POST', `/organization/templates/${shared.id}/publish`, as(owner))).json().data).toMatchObject({ status: 'published', visibility: 'public' });
      expect(await library()).toContain(shared.id);
      expect(await published()).toEqual([mine.id, shared.id]);
      // Taking a template out of the library is anyone's: the member makes it private.
      const current = (await call('GET', `/organization/templates/${shared.id}`, as(owner))).json().data;
      const hidden = await call('PATCH', `/organization/templates/${shared.id}`, as(member), { version: current.version, visibility: 'private' });
      expect([hidden.statusCode, hidden.json().data.visibility]).toEqual([200, 'private']);
      expect(await library()).not.toContain(shared.id);
    });

    it('§5.4 templates:write: a key (no role) puts nothing in the library: import and duplicate make private drafts, no route publishes', async () => {
      const key = { 'x-api-key': ws.liveKey };
      const withVisibility = await call('POST', '/v1/templates/import', key, design('Key public', { visibility: 'public' }));
      expect([withVisibility.statusCode, withVisibility.json().code, Object.keys(withVisibility.json().errors)]).toEqual([422, 'VALIDATION_FAILED', ['visibility']]);
      const imported = await call('POST', '/v1/templates/import', key, design('Key import'));
      expect(imported.json().data).toMatchObject({ status: 'draft', visibility: 'private' });
      for (const [method, url] of [['POST', `/v1/templates/${imported.json().data.id}/publish`], ['PATCH', `/v1/templates/${imported.json().data.id}`]] as const) {
        expect((await call(method, url, key, { visibility: 'public' })).statusCode).toBe(404);
      }
      // A member's session on the key route is held to the same shape.
      expect((await call('POST', '/v1/templates/import', as(member), design('Member key route', { visibility: 'public' }))).statusCode).toBe(422);
      expect(await library()).not.toContain(imported.json().data.id);
    });
  });

  describe('§8 queue depth holds under parallel requests', () => {
    const video = { timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi', font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1 }] }] }, output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 } };

    beforeAll(async () => {
      // The API takes videos while a worker's engine beats in Redis; no worker runs here, so queued renders stay queued.
      const redis = createRedis(api.config, 'test');
      await redis.set(new RedisKeys(api.config.redisPrefix).videoEngine(), 'test');
      redis.disconnect();
    });

    it('§7 LIMIT_QUEUE_DEPTH: 12 parallel videos on the free plan (depth 5) queue exactly 5; at the last place of 6 parallel, exactly 1 passes; holds and events exact', async () => {
      const ws = (await api.cli('workspace:create', '--name', 'Queue', '--plan', 'free', '--video-credits', '50')).json as { workspaceId: string; liveKey: string };
      const post = () => api.app.inject({ method: 'POST', url: '/api/v1/render', headers: { 'x-api-key': ws.liveKey }, payload: { edit: video } });
      const burst = async (n: number) => {
        const answers = await Promise.all(Array.from({ length: n }, post));
        return {
          passed: answers.filter((a) => a.statusCode === 202).map((a) => a.json().data.id as string),
          refused: answers.filter((a) => a.statusCode === 402 && a.json().code === 'LIMIT_QUEUE_DEPTH').length,
        };
      };
      const queued = () => forWorkspace(orm, ws.workspaceId).count(Render, { status: 'queued' });
      const holds = () => forWorkspace(orm, ws.workspaceId).count(LedgerEntry, { reason: 'hold' });
      const queuedEvents = () => forWorkspace(orm, ws.workspaceId).count(OutboxEvent, { type: 'render.queued' });

      const first = await burst(12);
      expect([first.passed.length, first.refused]).toEqual([5, 7]);
      expect([await queued(), await holds(), await queuedEvents()]).toEqual([5, 5, 5]);
      expect(await forWorkspace(orm, ws.workspaceId).count(Render, {})).toBe(5);

      // One place frees (a cancel); six ask for it at once.
      const cancelled = await api.app.inject({ method: 'POST', url: `/api/v1/render/${first.passed[0]}/cancel`, headers: { 'x-api-key': ws.liveKey } });
      expect(cancelled.json().data.status).toBe('cancelled');
      const last = await burst(6);
      expect([last.passed.length, last.refused]).toEqual([1, 5]);
      expect([await queued(), await holds(), await queuedEvents()]).toEqual([5, 6, 6]);
      expect((await api.app.inject({ method: 'GET', url: `/api/v1/render/${last.passed[0]}`, headers: { 'x-api-key': ws.liveKey } })).json().data.status).toBe('queued');
    }, 60_000);
  });
});
