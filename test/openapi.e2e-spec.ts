import { readFileSync } from 'node:fs';
import type { INestApplicationContext } from '@nestjs/common';
import { Ajv, type ValidateFunction } from 'ajv';
import sharp from 'sharp';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { lastCode, multipart, startApi, type TestApi } from './harness.js';

// Issue 21: openapi.json is the contract a generated client is built from (§1 envelope, §2 shapes,
// decisions.md "OpenAPI"). The real answers of the main routes are checked against the committed
// document's schemas, closed (no field the document does not name), so that a field added, dropped,
// renamed or made nullable in a view without its DTO fails here.

type Json = Record<string, unknown>;
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json }> }> }>>; components: Json };

/** Every object schema that lists its properties gets additionalProperties: false (unless it says otherwise). */
function closed<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(closed) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'example' || k === 'examples' ? v : closed(v)])) as Json;
  if (out.properties && out.additionalProperties === undefined && !out.allOf) out.additionalProperties = false;
  return out as T;
}

describe('the answers of the main routes match openapi.json (issue 21)', () => {
  const doc = JSON.parse(readFileSync('openapi.json', 'utf8')) as Doc;
  const components = closed(doc.components);
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const validators = new Map<string, ValidateFunction>();
  let api: TestApi;
  let worker: INestApplicationContext;
  let key: string;
  let workspaceId: string;
  let session: Record<string, string>;

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, opts: { headers?: Record<string, string>; payload?: unknown } = {}) =>
    api.app.inject({ method, url: `/api${url}`, headers: opts.headers ?? { 'x-api-key': key }, ...(opts.payload === undefined ? {} : { payload: opts.payload as string }) });

  /** Calls a route and checks the answer against the document's schema of its path, method and status. */
  async function conforms(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, path: string, status: number, opts: { headers?: Record<string, string>; payload?: unknown } = {}): Promise<Json> {
    const res = await inject(method, url, opts);
    expect([url, res.statusCode]).toEqual([url, status]);
    const schema = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)]?.content?.['application/json']?.schema;
    expect([`${method} ${path} ${status}`, schema === undefined]).toEqual([`${method} ${path} ${status}`, false]);
    const id = `${method} ${path} ${status}`;
    if (!validators.has(id)) validators.set(id, ajv.compile({ ...closed(schema!), components }));
    const validate = validators.get(id)!;
    const body = res.json<Json>();
    validate(body);
    expect([id, validate.errors ?? []]).toEqual([id, []]);
    return body;
  }

  beforeAll(async () => {
    api = await startApi();
    // Stills are drawn by the worker (the API waits for them).
    worker = await createWorkerApp(api.config);
    const ws = (await api.cli('workspace:create', '--name', 'Contract')).json as { workspaceId: string; liveKey: string };
    ({ workspaceId, liveKey: key } = ws);
    const phone = '+4915112340021';
    expect((await api.cli('user:create', '--phone', phone, '--workspace', workspaceId, '--role', 'owner')).code).toBe(0);
    await inject('POST', '/auth/send-otp', { headers: {}, payload: { phone } });
    const otp = await lastCode(api, phone);
    const signedIn = await conforms('POST', '/auth/verify-otp', '/auth/verify-otp', 200, { headers: {}, payload: { phone, otp } });
    session = { authorization: `Bearer ${(signedIn.data as Json).token as string}`, 'x-service-org': workspaceId };
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
  });

  it('renders: create (a still, done with its url), get, its edit and events, list, estimate, cancel refused', async () => {
    const edit = {
      timeline: { background: '#0B1F3A', tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 20 } }, start: 0, length: 1 }] }] },
      output: { format: 'png', size: { width: 64, height: 64 } },
    };
    const created = await conforms('POST', '/v1/render', '/v1/render', 200, { payload: { edit, metadata: { order: 7 } } });
    const render = created.data as Json;
    expect([render.status, typeof render.url]).toEqual(['done', 'string']);
    expect((await conforms('GET', `/v1/render/${render.id as string}`, '/v1/render/{id}', 200)).data).toEqual(render);
    expect((await conforms('GET', `/v1/render/${render.id as string}/edit`, '/v1/render/{id}/edit', 200)).data).toMatchObject({ edit: { output: { format: 'png' } } });
    const events = (await conforms('GET', `/v1/render/${render.id as string}/events`, '/v1/render/{id}/events', 200)).data as Json[];
    expect(events.at(-1)?.type).toBe('render.completed');
    const list = await conforms('GET', '/v1/render?limit=5', '/v1/render', 200);
    expect(list.pagination).toEqual({ page: 1, limit: 5, total: 1, totalPages: 1 });
    await conforms('POST', '/v1/render/estimate', '/v1/render/estimate', 200, { payload: { edit } });
    expect((await inject('POST', `/v1/render/${render.id as string}/cancel`)).json()).toMatchObject({ success: false, code: 'ALREADY_SETTLED' });
  });

  it('webhooks: create (with its secret once), get, list, deliveries (cursor), test, delete', async () => {
    const created = await conforms('POST', '/v1/webhooks', '/v1/webhooks', 201, { payload: { url: 'http://127.0.0.1:9/hook', description: 'contract', headers: [{ key: 'X-Team', value: 'media' }] } });
    const id = (created.data as Json).id as string;
    expect(typeof (created.data as Json).secret).toBe('string');
    await conforms('GET', `/v1/webhooks/${id}`, '/v1/webhooks/{id}', 200);
    await conforms('GET', '/v1/webhooks', '/v1/webhooks', 200);
    await conforms('PATCH', `/v1/webhooks/${id}`, '/v1/webhooks/{id}', 200, { payload: { description: 'renamed' } });
    await conforms('POST', `/v1/webhooks/${id}/test`, '/v1/webhooks/{id}/test', 200);
    const deliveries = await conforms('GET', `/v1/webhooks/${id}/deliveries`, '/v1/webhooks/{id}/deliveries', 200);
    // The test delivery (the endpoint, subscribed to render events by default, may also get the render
    // the test before made, when the dispatcher announces it after the endpoint exists).
    expect([(deliveries.data as Json[]).filter((d) => d.test).length, deliveries.nextPageToken]).toEqual([1, null]);
    await conforms('DELETE', `/v1/webhooks/${id}`, '/v1/webhooks/{id}', 200);
  });

  it('the dashboard: credits and their history, members, API keys, callback settings, sign-out', async () => {
    const balance = await conforms('GET', '/credits', '/credits', 200, { headers: session });
    expect((balance.data as Json).planCode).toBeDefined();
    const history = await conforms('GET', '/credits/history?limit=2', '/credits/history', 200, { headers: session });
    expect((history.data as Json[]).length).toBeGreaterThan(0);
    await conforms('GET', '/organization/members', '/organization/members', 200, { headers: session });
    const key2 = await conforms('POST', '/organization/api-keys', '/organization/api-keys', 201, { headers: session, payload: { name: 'ci', scopes: ['renders:read'] } });
    await conforms('GET', '/organization/api-keys', '/organization/api-keys', 200, { headers: session });
    await conforms('DELETE', `/organization/api-keys/${(key2.data as Json).id as string}`, '/organization/api-keys/{id}', 200, { headers: session });
    await conforms('GET', '/organization/callback', '/organization/callback', 200, { headers: session });
    await conforms('POST', '/organization/callback/rotate-secret', '/organization/callback/rotate-secret', 200, { headers: session });
    await conforms('GET', '/v1/keys/current', '/v1/keys/current', 200);
    await conforms('POST', '/auth/sign-out', '/auth/sign-out', 200, { headers: { authorization: session.authorization } });
  });

  it('templates and assets: import and get a template, upload and get an asset', async () => {
    const edit = {
      timeline: { tracks: [{ clips: [{ asset: { type: 'rich-text', text: '{{ HEADLINE }}' }, start: 0, length: 4 }] }] },
      output: { format: 'png', size: { width: 320, height: 200 } },
    };
    const imported = await conforms('POST', '/v1/templates/import', '/v1/templates/import', 201, { payload: { name: 'Contract', edit } });
    await conforms('GET', `/v1/templates/${(imported.data as Json).id as string}`, '/v1/templates/{id}', 200);
    await conforms('GET', '/v1/templates', '/v1/templates', 200);
    const png = await sharp({ create: { width: 32, height: 20, channels: 3, background: '#e76f51' } }).png().toBuffer();
    const body = multipart([{ name: 'file', file: png, filename: 'dot.png', type: 'image/png' }]);
    const uploaded = await conforms('POST', '/v1/assets', '/v1/assets', 201, { headers: { 'x-api-key': key, ...body.headers }, payload: body.payload });
    await conforms('GET', `/v1/assets/${(uploaded.data as Json).id as string}`, '/v1/assets/{id}', 200);
    await conforms('GET', '/v1/assets?scope=all', '/v1/assets', 200);
    await conforms('GET', '/v1/templates/categories', '/v1/templates/categories', 200);
    await conforms('DELETE', `/v1/assets/${(uploaded.data as Json).id as string}`, '/v1/assets/{id}', 200);
  });

  it('the Shotstack door answers in its documented shapes; captions and integrations list theirs', async () => {
    const edit = {
      timeline: { tracks: [{ clips: [{ asset: { type: 'shape', shape: 'circle', circle: { radius: 20 } }, start: 0, length: 1 }] }] },
      output: { format: 'png', size: { width: 64, height: 64 } },
    };
    const queued = await conforms('POST', '/compat/shotstack/v1/render', '/compat/shotstack/v1/render', 201, { payload: edit });
    const id = (queued.response as Json).id as string;
    await conforms('GET', `/compat/shotstack/v1/render/${id}?data=true`, '/compat/shotstack/v1/render/{id}', 200);
    await conforms('GET', '/v1/integrations', '/v1/integrations', 200);
    await conforms('GET', '/v1/captions/providers', '/v1/captions/providers', 200);
    await conforms('GET', '/v1/transcriptions', '/v1/transcriptions', 200);
    await conforms('GET', '/health/ready', '/health/ready', 200, { headers: {} });
  });

  it('workflows: define, get, list, patch, run posted rows, its runs and rows, rerun, cancel refused, delete (docs/workflows.md)', async () => {
    const edit = { timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: '{{ NAME }}' }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 64, height: 32 } } };
    const imported = await inject('POST', '/v1/templates/import', { payload: { name: 'Flow', categoryId: 'social-media', edit, fields: [{ key: 'NAME', type: 'text', required: true }] } });
    const templateId = imported.json().data.id as string;
    expect((await api.cli('template:publish', '--id', templateId)).code).toBe(0);
    const created = await conforms('POST', '/v1/workflows', '/v1/workflows', 201, { payload: { name: 'Flow', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [] } });
    const id = (created.data as Json).id as string;
    await conforms('GET', `/v1/workflows/${id}`, '/v1/workflows/{id}', 200);
    await conforms('GET', '/v1/workflows', '/v1/workflows', 200);
    await conforms('PATCH', `/v1/workflows/${id}`, '/v1/workflows/{id}', 200, { payload: { name: 'Flow 2' } });
    const run = (await conforms('POST', `/v1/workflows/${id}/runs`, '/v1/workflows/{id}/runs', 202, { payload: { rows: [{ Name: 'Ada' }, { Name: null }] } })).data as Json;
    const runPath = `/v1/workflows/${id}/runs/${run.id as string}`;
    for (let i = 0; i < 300 && ((await inject('GET', runPath)).json().data as Json).status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 100));
    await conforms('GET', runPath, '/v1/workflows/{id}/runs/{runId}', 200);
    await conforms('GET', `/v1/workflows/${id}/runs`, '/v1/workflows/{id}/runs', 200);
    const rows = await conforms('GET', `${runPath}/rows`, '/v1/workflows/{id}/runs/{runId}/rows', 200);
    expect((rows.data as Json[]).map((r) => r.status)).toEqual(['done', 'failed']);
    expect((await inject('POST', `${runPath}/cancel`)).json()).toMatchObject({ success: false, code: 'ALREADY_SETTLED' });
    await conforms('POST', `${runPath}/rerun`, '/v1/workflows/{id}/runs/{runId}/rerun', 202);
    for (let i = 0; i < 300 && ((await inject('GET', runPath)).json().data as Json).status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 100));
    await conforms('DELETE', `/v1/workflows/${id}`, '/v1/workflows/{id}', 200);
  });
});
