import type { IncomingMessage, ServerResponse } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { getFlowProducerToken } from '@nestjs/bullmq';
import type { FlowProducer } from 'bullmq';
import { WORKFLOW_FLOWS } from '#libs/queue';
import { openAppDatabase } from '#libs/app';
import { newId } from '#libs/core';
import { CreditsService } from '#libs/credits';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { MessagingMessage } from '#libs/messaging';
import { Render } from '#libs/renders';
import { WorkflowRow, WorkflowRun, type WorkflowDefinition } from '#libs/workflows';
import { LoopbackServer } from '#testing/integrations';
import { decodeMail, SmtpFake, UNDELIVERABLE_NUMBER, WhatsAppFake } from '#testing/messaging';
import { startGoogleFake, type GoogleFake } from '#testing/suite';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { secondApi, startApi, type TestApi } from './harness.js';
import { publishedCardTemplate, until } from './render-helpers.js';

// Workflows (issue 17 "Workflows", docs/workflows.md): contract §7 (402 FEATURE_WORKFLOWSENABLED,
// LIMIT_WORKFLOWRUNS, LIMIT_WORKFLOWMAXSTEPS; 404/409/422), §8 (plan ceilings of workflow runs and
// steps), §4.5 (the sheets, storage and messaging rows a workflow calls), §6 (events), §5 (scopes).

type Json = Record<string, unknown>;
type Ws = { workspaceId: string; liveKey: string };
const BASE = '/v1/workflows';
const ROWS = 200;

describe('workflows', () => {
  let api: TestApi;
  let worker: INestApplicationContext;
  let orm: Orm;
  let google: GoogleFake;
  let wa: WhatsAppFake;
  let smtp: SmtpFake;
  let ws: Ws;
  let templateId: string;
  /** Serves the API's stored files on a real port (PUBLIC_URL): the upload step downloads the render's URL as Drive would be handed it. */
  const files = new LoopbackServer((req: IncomingMessage, res: ServerResponse) => {
    void api.app.inject({ method: 'GET', url: req.url ?? '/' }).then((r) => res.writeHead(r.statusCode, { 'content-type': String(r.headers['content-type'] ?? 'application/octet-stream') }).end(r.rawPayload));
  });

  beforeAll(async () => {
    [google, wa, smtp] = await Promise.all([startGoogleFake(), new WhatsAppFake().start(), new SmtpFake().start()]);
    const publicUrl = await files.start();
    api = await startApi({ GOOGLE_CLIENT_ID: google.clientId, GOOGLE_CLIENT_SECRET: google.clientSecret, PUBLIC_URL: publicUrl, WORKFLOW_CONCURRENCY: '8' });
    worker = await createWorkerApp(api.config);
    orm = await openAppDatabase(api.config.database, { migrate: false });
    ws = await create();
    templateId = await publishedTemplate(ws);
  }, 120_000);
  afterAll(async () => {
    await orm.close(true);
    await worker.close();
    await api.close();
    await Promise.all([google.close(), wa.close(), smtp.close(), files.close()]);
  });

  const create = async (plan = 'pro') => {
    const w = (await api.cli('workspace:create', '--name', 'Workflows', '--plan', plan)).json as Ws;
    const suite = await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'workspace-suite', '--access-token', google.accessToken,
      '--refresh-token', google.refreshToken, '--expires-at', new Date(Date.now() + 3600_000).toISOString(), '--base-url', google.baseUrl);
    const chat = await api.cli('integration:connect', '--workspace', w.workspaceId, '--provider', 'messaging-provider', '--channel', 'primary_chat', '--access-token', wa.accessToken,
      '--phone-number-id', wa.phoneNumberId, '--waba-id', wa.wabaId, '--base-url', wa.baseUrl);
    if (plan !== 'free') expect([suite.code, chat.code]).toEqual([0, 0]);
    return w;
  };
  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: unknown) =>
    api.app.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload !== undefined ? { payload: payload as Json } : {}) });
  const errorsOf = (res: { json(): unknown }) => Object.keys((res.json() as { errors?: Record<string, string[]> }).errors ?? {}).sort();
  const publishedTemplate = (w: Ws) => publishedCardTemplate(api, w.liveKey);
  const renders = (w: Ws) => allWorkspaces(orm).fork().count(Render, { workspaceId: w.workspaceId });
  const messages = (w: Ws) => allWorkspaces(orm).fork().count(MessagingMessage, { workspaceId: w.workspaceId, status: 'sent' });
  const define = async (w: Ws, body: Json) => {
    const res = await inject('POST', BASE, w.liveKey, body);
    expect([res.statusCode, res.json().code]).toEqual([201, undefined]);
    return res.json().data.id as string;
  };
  const settled = (w: Ws, id: string, runId: string, ms = 180_000) => until(async () => {
    const run = (await inject('GET', `${BASE}/${id}/runs/${runId}`, w.liveKey)).json().data as Json;
    return ['completed', 'cancelled'].includes(run.status as string) && run;
  }, `run ${runId} to settle`, ms);
  const allRows = async (w: Ws, id: string, runId: string) => {
    const out: Json[] = [];
    for (let page = 1; ; page++) {
      const res = (await inject('GET', `${BASE}/${id}/runs/${runId}/rows?limit=100&page=${page}`, w.liveKey)).json();
      out.push(...(res.data as Json[]));
      if (page >= res.pagination.totalPages) return out;
    }
  };
  const phone = (i: number) => `+44 7700 9${String(i).padStart(5, '0')}`;
  const sheet = (rows: number, header = ['Name', 'Phone', 'Code', 'Link']) =>
    google.seed(`People ${newId('workflow')}`, [{ title: 'Contacts', rows: [header, ...Array.from({ length: rows }, (_, i) => [`Person ${i}`, phone(i), `C${i}`, ''])] }]);
  const sheetWorkflow = (spreadsheetId: string, over: Json = {}): Json => ({
    name: 'Spring cards', source: { type: 'sheet', spreadsheetId, tab: 'Contacts' }, templateId, mapping: { NAME: 'Name' },
    steps: [{ type: 'writeBack', column: 'Link' }, { type: 'message', channel: 'primary_chat', to: 'Phone', templateName: 'spring_sale', languageCode: 'en_US', variables: { 1: 'Name', 2: 'Code' } }],
    ...over,
  });

  it(`a ${ROWS}-row sheet end to end: ${ROWS} renders, ${ROWS} cells written back, ${ROWS} messages; events; then a rerun whose records were lost repeats nothing`, async () => {
    const spreadsheetId = sheet(ROWS);
    const id = await define(ws, sheetWorkflow(spreadsheetId));
    const [rendersBefore, sentBefore] = [await renders(ws), wa.sent.length];
    const started = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey);
    expect(started.statusCode).toBe(202);
    expect(started.json().data).toMatchObject({ status: 'queued', totalRows: ROWS, round: 1, mode: 'live', progress: { pending: ROWS, done: 0 } });
    const runId = started.json().data.id as string;
    const run = await settled(ws, id, runId);
    expect(run).toMatchObject({ status: 'completed', progress: { done: ROWS, failed: 0, cancelled: 0, pending: 0, running: 0 } });

    expect(await renders(ws) - rendersBefore).toBe(ROWS);
    const rows = await allRows(ws, id, runId);
    expect(rows).toHaveLength(ROWS);
    const grid = google.grid(spreadsheetId, 'Contacts');
    const sent = wa.sent.slice(sentBefore);
    expect(sent).toHaveLength(ROWS);
    for (const [i, row] of rows.entries()) {
      expect(row).toMatchObject({ position: i, sheetRow: i + 2, status: 'done', renderId: expect.stringMatching(/^rnd_/), error: null });
      expect(row.steps).toEqual([
        { type: 'writeBack', status: 'done', result: { range: expect.stringMatching(new RegExp(`^'?Contacts'?!D${i + 2}(:D${i + 2})?$`)) } },
        { type: 'message', status: 'done', result: { messageId: expect.stringMatching(/^msg_/), status: 'sent' } },
      ]);
      // The cell of the row's own line holds the render's URL, which is the render's own.
      expect(grid[i + 1]![3]).toBe(row.outputUrl);
    }
    const byNumber = new Map(sent.map((m) => [m.to as string, m]));
    expect(byNumber.size).toBe(ROWS);
    const tpl = byNumber.get(`4477009${'7'.padStart(5, '0')}`)!.template as { name: string; components: { type: string; parameters: Json[] }[] };
    expect(tpl.name).toBe('spring_sale');
    expect(JSON.stringify(tpl.components)).toContain('Person 7');
    expect(JSON.stringify(tpl.components)).toContain(String(rows[7]!.outputUrl));
    const renderRows = await forWorkspace(orm, ws.workspaceId).find(Render, { id: { $in: rows.map((r) => r.renderId as string) } });
    expect(renderRows.filter((r) => r.status === 'done' && r.templateId === templateId)).toHaveLength(ROWS);
    // §6: the run's start and end, to subscribers (new event names).
    const events = (await forWorkspace(orm, ws.workspaceId).find(OutboxEvent, { type: { $in: ['workflow.run.started', 'workflow.run.completed'] } })).filter((e) => e.data.id === runId);
    expect(events.map((e) => e.type).sort()).toEqual(['workflow.run.completed', 'workflow.run.started']);
    expect(events.find((e) => e.type === 'workflow.run.completed')!.data).toMatchObject({ id: runId, workflowId: id, status: 'completed', progress: { done: ROWS, failed: 0 } });
    // Credits: one image credit captured per render, nothing left held.
    expect((await new CreditsService(orm).balance(ws.workspaceId, 'pro')).credits.image.held).toBe(0);

    // A rerun of rows whose results were lost (a worker died after its side effects, before recording
    // them): the keys find the renders and the messages; the write-back writes the same URL again.
    await forWorkspace(orm, ws.workspaceId).nativeUpdate(WorkflowRow, { runId }, { status: 'failed', renderId: null, outputUrl: null, steps: [] });
    const writesBefore = google.apiCalls.filter((c) => c.method === 'PUT').length;
    const rerun = await inject('POST', `${BASE}/${id}/runs/${runId}/rerun`, ws.liveKey);
    expect([rerun.statusCode, rerun.json().data.round, rerun.json().data.status]).toEqual([202, 2, 'queued']);
    expect(await settled(ws, id, runId)).toMatchObject({ status: 'completed', round: 2, progress: { done: ROWS, failed: 0 } });
    expect(await renders(ws) - rendersBefore).toBe(ROWS);
    expect(wa.sent.length - sentBefore).toBe(ROWS);
    expect(await messages(ws)).toBe(ROWS);
    expect(google.apiCalls.filter((c) => c.method === 'PUT').length - writesBefore).toBe(ROWS);
    const again = await allRows(ws, id, runId);
    expect(again.map((r) => r.renderId)).toEqual(rows.map((r) => r.renderId));
    expect(google.grid(spreadsheetId, 'Contacts').slice(1).map((r) => r[3])).toEqual(rows.map((r) => r.outputUrl));
    // Nothing failed or cancelled is left: a rerun now runs nothing.
    const idle = await inject('POST', `${BASE}/${id}/runs/${runId}/rerun`, ws.liveKey);
    expect([idle.statusCode, idle.json().message, idle.json().data.round]).toEqual([202, 'Every row is done; nothing to run again', 2]);
  }, 400_000);

  it('an outage mid-row (Sheets answering 500 to every try of a write-back) runs the row\'s job again: one render, one message, the cell written', async () => {
    const spreadsheetId = sheet(1);
    const id = await define(ws, sheetWorkflow(spreadsheetId));
    const [before, sent] = [await renders(ws), wa.sent.length];
    // The write-back's three tries (SheetsService's own retries) fail: 503 PROVIDER_UNAVAILABLE, the job runs again 2 s later.
    google.failOn = (r) => r.method === 'PUT';
    google.failure = 'server-error';
    google.failTimes = 3;
    try {
      const runId = (await inject('POST', `${BASE}/${id}/runs`, ws.liveKey)).json().data.id as string;
      expect(await settled(ws, id, runId, 60_000)).toMatchObject({ status: 'completed', progress: { done: 1, failed: 0 } });
      const [row] = await allRows(ws, id, runId);
      expect(row).toMatchObject({ status: 'done', attempts: 2, steps: [{ type: 'writeBack', status: 'done' }, { type: 'message', status: 'done' }] });
      expect([await renders(ws) - before, wa.sent.length - sent]).toEqual([1, 1]);
      expect(google.grid(spreadsheetId, 'Contacts')[1]![3]).toBe(row!.outputUrl);
    } finally {
      google.failOn = null;
      google.failure = null;
      google.failTimes = Infinity;
    }
  }, 90_000);

  it('Redis lost before the flow is added: 503 DEPENDENCY_UNAVAILABLE; no run left behind (the month\'s count unspent), a rerun undone', async () => {
    const id = await define(ws, { name: 'Outage', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [] });
    const healthy = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: 'A' }, { Name: null }] });
    expect(healthy.statusCode).toBe(202);
    const runId = healthy.json().data.id as string;
    expect(await settled(ws, id, runId, 30_000)).toMatchObject({ status: 'completed', round: 1, progress: { done: 1, failed: 1 } });
    const other = await secondApi(api);
    try {
      await other.get<FlowProducer>(getFlowProducerToken(WORKFLOW_FLOWS)).disconnect();
      const post = (url: string, payload?: Json) => other.inject({ method: 'POST', url: `/api${url}`, headers: { 'x-api-key': ws.liveKey }, ...(payload ? { payload } : {}) });
      for (const res of [await post(`${BASE}/${id}/runs`, { rows: [{ Name: 'B' }] }), await post(`${BASE}/${id}/runs/${runId}/rerun`)]) {
        expect([res.statusCode, res.json().code, res.headers['retry-after']]).toEqual([503, 'DEPENDENCY_UNAVAILABLE', '5']);
      }
      expect(await forWorkspace(orm, ws.workspaceId).count(WorkflowRun, { workflowId: id })).toBe(1);
      const run = (await inject('GET', `${BASE}/${id}/runs/${runId}`, ws.liveKey)).json().data;
      expect(run).toMatchObject({ status: 'completed', round: 1, progress: { done: 1, failed: 1, pending: 0 } });
    } finally {
      await other.close();
    }
  });

  it('a column the mapping names missing from the live sheet: the run is refused (422 by path) before anything is rendered', async () => {
    const spreadsheetId = sheet(3);
    const id = await define(ws, sheetWorkflow(spreadsheetId));
    // Someone renames a column after the workflow was defined.
    const renamed = await inject('POST', `/v1/integrations/workspace-suite/sheets/spreadsheets/${spreadsheetId}/values`, ws.liveKey, { range: 'Contacts!A1:B1', values: [['Full name', 'Mobile']], mode: 'overwrite' });
    expect(renamed.statusCode).toBe(200);
    const [before, sent] = [await renders(ws), wa.sent.length];
    const res = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey);
    expect([res.statusCode, res.json().code, errorsOf(res)]).toEqual([422, 'VALIDATION_FAILED', ['mapping.NAME', 'steps[1].to', 'steps[1].variables.1']]);
    expect(res.json().errors['mapping.NAME'][0]).toMatch(/column "Name" is not in the header row \(row 1\) of Contacts/);
    expect([await renders(ws), wa.sent.length]).toEqual([before, sent]);
    expect(await forWorkspace(orm, ws.workspaceId).count(WorkflowRun, { workflowId: id })).toBe(0);
    // A sheet workflow reads its rows: posted ones are refused.
    const posted = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: 'A' }] });
    expect([posted.statusCode, errorsOf(posted)]).toEqual([422, ['rows']]);
  });

  it('definitions: every rule answers 422 by path, the template 404/409, accounts 409; list, get, patch, delete; another workspace sees nothing', async () => {
    const spreadsheetId = sheet(1);
    const bad = async (body: Json, paths: string[]) => {
      const res = await inject('POST', BASE, ws.liveKey, body);
      expect([res.statusCode, res.json().code, errorsOf(res)]).toEqual([422, 'VALIDATION_FAILED', paths]);
    };
    await bad(sheetWorkflow(spreadsheetId, { mapping: { NAME: 'Name', COLOUR: 'Name' } }), ['mapping.COLOUR']);
    await bad(sheetWorkflow(spreadsheetId, { mapping: {} }), ['mapping.NAME']);
    await bad(sheetWorkflow(spreadsheetId, { mapping: { NAME: 'Nom' } }), ['mapping.NAME']);
    await bad(sheetWorkflow(spreadsheetId, { steps: [{ type: 'message', channel: 'primary_chat', to: 'Phone' }] }), ['steps[0].templateName']);
    await bad(sheetWorkflow(spreadsheetId, { steps: [{ type: 'fax' }, { type: 'message', channel: 'pigeon', to: 'Phone' }] }), ['steps[0].type', 'steps[1].channel']);
    await bad(sheetWorkflow(spreadsheetId, { steps: [{ type: 'writeBack', column: 'Link', folderId: 'abc' }] }), ['steps[0].folderId']);
    await bad({ name: 'x', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [{ type: 'writeBack', column: 'Link' }], extra: 1 }, ['extra']);
    await bad({ name: 'x', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [{ type: 'writeBack', column: 'Link' }] }, ['steps[0].type']);
    await bad({ name: 'x', source: { type: 'sheet', headerRow: 0 }, templateId, mapping: { NAME: 'Name' }, steps: [] }, ['source.headerRow', 'source.spreadsheetId']);
    const missing = await inject('POST', BASE, ws.liveKey, sheetWorkflow(spreadsheetId, { templateId: 'tpl_nope' }));
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'TEMPLATE_NOT_FOUND']);
    const draft = (await inject('POST', '/v1/templates/import', ws.liveKey, { name: 'Draft', edit: { timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: '{{ NAME }}' }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 50, height: 50 } } } })).json().data.id as string;
    const unpublished = await inject('POST', BASE, ws.liveKey, sheetWorkflow(spreadsheetId, { templateId: draft }));
    expect([unpublished.statusCode, unpublished.json().code]).toEqual([409, 'TEMPLATE_NOT_PUBLISHED']);
    const noSheet = await inject('POST', BASE, ws.liveKey, sheetWorkflow('nosuchsheet'));
    expect([noSheet.statusCode, noSheet.json().code]).toEqual([404, 'SPREADSHEET_NOT_FOUND']);
    const noTab = await inject('POST', BASE, ws.liveKey, sheetWorkflow(spreadsheetId, { source: { type: 'sheet', spreadsheetId, tab: 'Elsewhere' } }));
    expect([noTab.statusCode, errorsOf(noTab)]).toEqual([422, ['source.tab']]);
    const sms = await inject('POST', BASE, ws.liveKey, { name: 'x', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [{ type: 'message', channel: 'sms', to: 'Phone' }] });
    expect([sms.statusCode, sms.json().code]).toEqual([409, 'MESSAGING_CHANNEL_NOT_CONNECTED']);
    const bare = (await api.cli('workspace:create', '--name', 'Bare', '--plan', 'pro')).json as Ws;
    const tpl = await publishedTemplate(bare);
    const notConnected = await inject('POST', BASE, bare.liveKey, { ...sheetWorkflow(spreadsheetId), templateId: tpl });
    expect([notConnected.statusCode, notConnected.json().code]).toEqual([409, 'INTEGRATION_NOT_CONNECTED']);

    const id = await define(ws, sheetWorkflow(spreadsheetId, { name: 'Listed one' }));
    const got = await inject('GET', `${BASE}/${id}`, ws.liveKey);
    expect(got.json().data).toMatchObject({ id, name: 'Listed one', source: { type: 'sheet', spreadsheetId, tab: 'Contacts', headerRow: 1 }, templateId, mapping: { NAME: 'Name' } });
    const listed = await inject('GET', `${BASE}?search=Listed&limit=5`, ws.liveKey);
    expect(listed.json()).toMatchObject({ data: [{ id }], pagination: { total: 1, page: 1, limit: 5 } });
    expect((await inject('GET', `${BASE}?sort=colour`, ws.liveKey)).json().code).toBe('INVALID_LIST_QUERY');
    const patched = await inject('PATCH', `${BASE}/${id}`, ws.liveKey, { name: 'Renamed', steps: [{ type: 'writeBack', column: 'Link' }] });
    expect([patched.statusCode, patched.json().data.name, patched.json().data.steps]).toEqual([200, 'Renamed', [{ type: 'writeBack', column: 'Link' }]]);
    const badPatch = await inject('PATCH', `${BASE}/${id}`, ws.liveKey, { mapping: { NAME: 'Nom' } });
    expect([badPatch.statusCode, errorsOf(badPatch)]).toEqual([422, ['mapping.NAME']]);
    // Another workspace's ids are unknown (never 403).
    for (const [method, path] of [['GET', `${BASE}/${id}`], ['PATCH', `${BASE}/${id}`], ['DELETE', `${BASE}/${id}`], ['POST', `${BASE}/${id}/runs`], ['GET', `${BASE}/${id}/runs`]] as const) {
      const res = await inject(method, path, bare.liveKey, method === 'PATCH' ? { name: 'x' } : undefined);
      expect([method, path, res.statusCode, res.json().code]).toEqual([method, path, 404, 'WORKFLOW_NOT_FOUND']);
    }
    // §6: the new event names can be subscribed to.
    const hook = await inject('POST', '/v1/webhooks', ws.liveKey, { url: 'http://127.0.0.1:9/hook', events: ['workflow.run.started', 'workflow.run.completed'] });
    expect([hook.statusCode, hook.json().data.events]).toEqual([201, ['workflow.run.started', 'workflow.run.completed']]);
    const deleted = await inject('DELETE', `${BASE}/${id}`, ws.liveKey);
    expect([deleted.statusCode, deleted.json().data]).toEqual([200, null]);
    expect((await inject('GET', `${BASE}/${id}`, ws.liveKey)).json().code).toBe('WORKFLOW_NOT_FOUND');
  });

  it('§7 plan gates: 402 FEATURE_WORKFLOWSENABLED, LIMIT_WORKFLOWMAXSTEPS, LIMIT_WORKFLOWRUNS (monthly); §5 scopes', async () => {
    const free = await create('free');
    for (const [method, path] of [['GET', BASE], ['POST', BASE], ['POST', `${BASE}/wfl_x/runs`]] as const) {
      const res = await inject(method, path, free.liveKey, method === 'POST' ? { name: 'x' } : undefined);
      expect([method, path, res.statusCode, res.json().code]).toEqual([method, path, 402, 'FEATURE_WORKFLOWSENABLED']);
    }
    // Pro allows 20 steps: the render and 19 more.
    const steps = (n: number) => Array.from({ length: n }, () => ({ type: 'message', channel: 'primary_chat', to: 'Phone', templateName: 'thanks_note', variables: { 1: 'Name' } }));
    const rowsWorkflow = (n: number) => ({ name: 'Steps', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: steps(n) });
    const over = await inject('POST', BASE, ws.liveKey, rowsWorkflow(20));
    expect([over.statusCode, over.json().code]).toEqual([402, 'LIMIT_WORKFLOWMAXSTEPS']);
    const id = await define(ws, rowsWorkflow(19));
    // The plan changes after the workflow was defined: its runs are refused.
    const team = await create('pro');
    const teamTpl = await publishedTemplate(team);
    const teamId = await define(team, { ...rowsWorkflow(19), templateId: teamTpl });
    expect((await api.cli('workspace:plan', '--workspace', team.workspaceId, '--plan', 'starter')).code).toBe(0);
    const downgraded = await inject('POST', `${BASE}/${teamId}/runs`, team.liveKey, { rows: [{ Name: 'A', Phone: phone(1) }] });
    expect([downgraded.statusCode, downgraded.json().code]).toEqual([402, 'FEATURE_WORKFLOWSENABLED']);

    // Runs this month: the plan's 10,000 used up (stored as the service stores them) → 402, nothing queued.
    const em = forWorkspace(orm, ws.workspaceId);
    const def: WorkflowDefinition = { source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [] };
    const now = new Date();
    const existing = await em.count(WorkflowRun, {});
    for (let start = existing; start < 10_000; start += 500) {
      await em.insertMany(WorkflowRun, Array.from({ length: Math.min(500, 10_000 - start) }, () => ({
        id: newId('workflowRun'), workspaceId: ws.workspaceId, workflowId: 'wfl_old', status: 'completed' as const, definition: def, mode: 'live' as const, planCode: 'pro',
        headers: null, totalRows: 0, round: 1, cancelRequested: false, createdAt: now, startedAt: now, completedAt: now,
      })));
    }
    const before = await renders(ws);
    const used = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: 'A', Phone: phone(1) }] });
    expect([used.statusCode, used.json().code]).toEqual([402, 'LIMIT_WORKFLOWRUNS']);
    expect(await em.count(WorkflowRun, {})).toBe(10_000);
    expect(await renders(ws)).toBe(before);
    await em.nativeDelete(WorkflowRun, { workflowId: 'wfl_old' });

    // Parallel starts at the last two allowed runs (a workspace of its own): exactly two start, the rest 402.
    const racing = await create('pro');
    const racingId = await define(racing, { name: 'Race', source: { type: 'rows' }, templateId: await publishedTemplate(racing), mapping: { NAME: 'Name' }, steps: [] });
    const racingEm = forWorkspace(orm, racing.workspaceId);
    for (let start = 0; start < 9_998; start += 500) {
      await racingEm.insertMany(WorkflowRun, Array.from({ length: Math.min(500, 9_998 - start) }, () => ({
        id: newId('workflowRun'), workspaceId: racing.workspaceId, workflowId: 'wfl_old', status: 'completed' as const, definition: def, mode: 'live' as const, planCode: 'pro',
        headers: null, totalRows: 0, round: 1, cancelRequested: false, createdAt: now, startedAt: now, completedAt: now,
      })));
    }
    const raced = await Promise.all(Array.from({ length: 5 }, () => inject('POST', `${BASE}/${racingId}/runs`, racing.liveKey, { rows: [{ Name: 'A' }] })));
    expect(raced.map((r) => r.statusCode).sort()).toEqual([202, 202, 402, 402, 402]);
    expect(await racingEm.count(WorkflowRun, {})).toBe(10_000);

    // Deleting a workflow gives no runs back: this month's run records stay (what the allowance counts), older ones go.
    const doomed = await define(ws, rowsWorkflow(1));
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 86_400_000);
    await em.insertMany(WorkflowRun, [now, lastMonth].map((at) => ({
      id: newId('workflowRun'), workspaceId: ws.workspaceId, workflowId: doomed, status: 'completed' as const, definition: def, mode: 'live' as const, planCode: 'pro',
      headers: null, totalRows: 0, round: 1, cancelRequested: false, createdAt: at, startedAt: at, completedAt: at,
    })));
    expect((await inject('DELETE', `${BASE}/${doomed}`, ws.liveKey)).statusCode).toBe(200);
    expect((await em.find(WorkflowRun, { workflowId: doomed })).map((r) => r.createdAt.getTime())).toEqual([now.getTime()]);
    await em.nativeDelete(WorkflowRun, { workflowId: doomed });

    // §5: reads need renders:read; changes and runs renders:write and integrations:write.
    const reader = (await api.cli('key:create', '--workspace', ws.workspaceId, '--mode', 'live', '--scopes', 'renders:read,renders:write')).json.key as string;
    expect((await inject('GET', `${BASE}/${id}`, reader)).statusCode).toBe(200);
    for (const [method, path] of [['POST', BASE], ['POST', `${BASE}/${id}/runs`], ['DELETE', `${BASE}/${id}`]] as const) {
      const res = await inject(method, path, reader, method === 'POST' ? {} : undefined);
      expect([method, path, res.statusCode, res.json().code]).toEqual([method, path, 403, 'INSUFFICIENT_SCOPE']);
    }
  }, 120_000);

  it('posted rows: a row\'s own failures are recorded per step (the others go on); a rerun repeats no render and no message; runs list', async () => {
    const id = await define(ws, {
      name: 'Posted', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' },
      steps: [{ type: 'message', channel: 'primary_chat', to: 'Phone', templateName: 'spring_sale', languageCode: 'en_US', variables: { 1: 'Name', 2: 'Code' } }],
    });
    const noRows = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, {});
    expect([noRows.statusCode, errorsOf(noRows)]).toEqual([422, ['rows']]);
    const missingColumn = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: 'A', Phone: phone(1) }] });
    expect([missingColumn.statusCode, errorsOf(missingColumn)]).toEqual([422, ['steps[0].variables.2']]);
    const badCells = await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: { nested: true } }] });
    expect([badCells.statusCode, errorsOf(badCells)]).toEqual([422, ['rows']]);

    const [before, sent] = [await renders(ws), wa.sent.length];
    const rows = [
      { Name: 'Ada', Phone: phone(101), Code: 'A1' },
      { Name: null, Phone: phone(102), Code: 'B2' },
      { Name: 'Cy', Phone: UNDELIVERABLE_NUMBER, Code: 'C3' },
      { Name: 'Di', Phone: phone(104), Code: 'D4' },
    ];
    const runId = (await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows })).json().data.id as string;
    expect(await settled(ws, id, runId, 60_000)).toMatchObject({ status: 'completed', progress: { done: 2, failed: 2 } });
    const results = await allRows(ws, id, runId);
    expect(results.map((r) => r.status)).toEqual(['done', 'failed', 'failed', 'done']);
    // Row 2: its required field is empty, so its render is refused; its steps never ran.
    expect(results[1]).toMatchObject({ renderId: null, error: { code: 'TEMPLATE_VALIDATION_FAILED', step: 'render' }, steps: [{ type: 'message', status: 'skipped' }] });
    // Row 3: rendered, then WhatsApp refused the number.
    expect(results[2]).toMatchObject({ renderId: expect.stringMatching(/^rnd_/), error: { code: 'MESSAGE_REJECTED', step: 'steps[0]' }, steps: [{ type: 'message', status: 'failed', error: { code: 'MESSAGE_REJECTED' } }] });
    expect([await renders(ws) - before, wa.sent.length - sent]).toEqual([3, 3]);
    const failedOnly = await inject('GET', `${BASE}/${id}/runs/${runId}/rows?status=failed`, ws.liveKey);
    expect(failedOnly.json().data.map((r: Json) => r.position)).toEqual([1, 2]);

    const rerun = await inject('POST', `${BASE}/${id}/runs/${runId}/rerun`, ws.liveKey);
    expect([rerun.statusCode, rerun.json().message]).toEqual([202, 'Running 2 row(s) again']);
    expect(await settled(ws, id, runId, 60_000)).toMatchObject({ status: 'completed', round: 2, progress: { done: 2, failed: 2 } });
    // The refused message is tried again (nothing was sent); no render is made again.
    expect([await renders(ws) - before, wa.sent.length - sent]).toEqual([3, 4]);
    expect((await allRows(ws, id, runId))[2]!.renderId).toBe(results[2]!.renderId);

    const list = await inject('GET', `${BASE}/${id}/runs?status=completed`, ws.liveKey);
    expect(list.json()).toMatchObject({ data: [{ id: runId, status: 'completed', totalRows: 4 }], pagination: { total: 1 } });
    expect((await inject('GET', `${BASE}/${id}/runs/wfr_nope`, ws.liveKey)).json().code).toBe('WORKFLOW_RUN_NOT_FOUND');
  }, 120_000);

  it('cancel: no new row starts, the running ones finish, every render settles with its credit; a settled run answers 409', async () => {
    const id = await define(ws, { name: 'Cancel me', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [] });
    const n = 120;
    const runId = (await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: Array.from({ length: n }, (_, i) => ({ Name: `P${i}` })) })).json().data.id as string;
    const active = await Promise.all([inject('DELETE', `${BASE}/${id}`, ws.liveKey), inject('POST', `${BASE}/${id}/runs/${runId}/rerun`, ws.liveKey)]);
    expect(active.map((r) => [r.statusCode, r.json().code])).toEqual([[409, 'WORKFLOW_RUN_ACTIVE'], [409, 'WORKFLOW_RUN_ACTIVE']]);
    const cancel = await inject('POST', `${BASE}/${id}/runs/${runId}/cancel`, ws.liveKey);
    expect([cancel.statusCode, cancel.json().data.cancelRequested]).toEqual([202, true]);
    const run = await settled(ws, id, runId, 60_000) as { status: string; progress: Record<string, number> };
    expect(run.status).toBe('cancelled');
    expect(run.progress.cancelled).toBeGreaterThan(0);
    expect(run.progress.done + run.progress.cancelled).toBe(n);
    expect(run.progress.failed).toBe(0);
    const rows = await allRows(ws, id, runId);
    const rendered = rows.filter((r) => r.renderId).map((r) => r.renderId as string);
    expect(rendered).toHaveLength(run.progress.done);
    const renderRows = await forWorkspace(orm, ws.workspaceId).find(Render, { id: { $in: rendered } });
    expect(renderRows.every((r) => r.status === 'done')).toBe(true);
    expect((await new CreditsService(orm).balance(ws.workspaceId, 'pro')).credits.image.held).toBe(0);
    const again = await inject('POST', `${BASE}/${id}/runs/${runId}/cancel`, ws.liveKey);
    expect([again.statusCode, again.json().code]).toEqual([409, 'ALREADY_SETTLED']);
    const events = await forWorkspace(orm, ws.workspaceId).find(OutboxEvent, { type: 'workflow.run.completed' });
    expect(events.find((e) => e.data.id === runId)?.data).toMatchObject({ status: 'cancelled' });
  }, 120_000);

  it('an email step: each row\'s render by email to the address in its column, with the subject (the one send path, libs/messaging)', async () => {
    const email = await api.cli('integration:connect', '--workspace', ws.workspaceId, '--provider', 'messaging-provider', '--channel', 'email', '--smtp-host', '127.0.0.1',
      '--smtp-port', String(smtp.port), '--smtp-secure', 'false', '--smtp-user', smtp.user, '--smtp-password', smtp.password, '--from', 'Cards <cards@shop.test>');
    expect(email.code).toBe(0);
    const id = await define(ws, { name: 'Mail', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [{ type: 'message', channel: 'email', to: 'Email', subject: 'Your card' }] });
    const before = smtp.received.length;
    const runId = (await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: 'Ada', Email: 'ada@example.com' }, { Name: 'Bo', Email: 'not-an-address' }] })).json().data.id as string;
    expect(await settled(ws, id, runId, 60_000)).toMatchObject({ status: 'completed', progress: { done: 1, failed: 1 } });
    const [ada, bo] = await allRows(ws, id, runId);
    expect(bo).toMatchObject({ status: 'failed', error: { code: 'VALIDATION_FAILED', step: 'steps[0]' } });
    const mails = smtp.received.slice(before);
    expect(mails.map((m) => m.to)).toEqual([['ada@example.com']]);
    expect(decodeMail(mails[0]!.raw)).toContain('Subject: Your card');
    expect(decodeMail(mails[0]!.raw)).toContain(String(ada!.outputUrl));
  }, 60_000);

  it('upload step: each render into the Drive folder, named by its render; a rerun of an upload begun before finds its file', async () => {
    const folder = (await inject('POST', '/v1/integrations/workspace-suite/drive/folders', ws.liveKey, { name: 'Cards' })).json().data.id as string;
    const id = await define(ws, { name: 'Uploads', source: { type: 'rows' }, templateId, mapping: { NAME: 'Name' }, steps: [{ type: 'upload', folderId: folder }] });
    const runId = (await inject('POST', `${BASE}/${id}/runs`, ws.liveKey, { rows: [{ Name: 'One' }, { Name: 'Two' }] })).json().data.id as string;
    expect(await settled(ws, id, runId, 60_000)).toMatchObject({ status: 'completed', progress: { done: 2 } });
    const rows = await allRows(ws, id, runId);
    const inFolder = () => [...google.drive.values()].filter((f) => f.parents.includes(folder));
    expect(inFolder().map((f) => f.name).sort()).toEqual(rows.map((r) => `${r.renderId}.png`).sort());
    for (const row of rows) {
      const file = inFolder().find((f) => f.name === `${row.renderId}.png`)!;
      expect((row.steps as Json[])[0]).toEqual({ type: 'upload', status: 'done', result: { fileId: file.id, name: file.name } });
      expect(file.content?.subarray(1, 4).toString()).toBe('PNG');
    }
    // A worker died after the upload and before recording it: the step is `started`.
    await forWorkspace(orm, ws.workspaceId).nativeUpdate(WorkflowRow, { runId }, { status: 'failed', steps: [{ type: 'upload', status: 'started', result: { name: 'x' } }] });
    expect((await inject('POST', `${BASE}/${id}/runs/${runId}/rerun`, ws.liveKey)).statusCode).toBe(202);
    expect(await settled(ws, id, runId, 60_000)).toMatchObject({ status: 'completed', progress: { done: 2 } });
    expect(inFolder()).toHaveLength(2);
  }, 120_000);
});
