import type { EntityName } from '@mikro-orm/core';
import { openAppDatabase } from '#libs/app';
import { Asset } from '#libs/assets';
import { Membership } from '#libs/auth';
import { SpeechRecognition, Transcription } from '#libs/captions';
import { newId } from '#libs/core';
import { CreditBalance, LedgerEntry } from '#libs/credits';
import { allWorkspaces, forWorkspace, isWorkspaceOwned, queries, type Orm, type Tables } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { IntegrationConnection } from '#libs/integrations';
import { ApiKey } from '#libs/keys';
import { CampaignRecipient, MessagingCampaign, MessagingContact, MessagingMessage } from '#libs/messaging';
import { Render } from '#libs/renders';
import { Template } from '#libs/templates';
import { WebhookDelivery, WebhookEndpoint } from '#libs/webhooks';
import { Workflow, WorkflowRow, WorkflowRun, type WorkflowDefinition } from '#libs/workflows';
import { testContext, type TestContext } from './harness.js';

// Workspace isolation by construction (docs/architecture.md "Workspace isolation"): a query on a
// workspace's entity that names no workspace throws instead of reading or changing other
// workspaces' rows; forWorkspace sees one workspace, allWorkspaces every one (the opt-out).

const at = new Date('2026-11-22T10:00:00.000Z');
const DEFINITION: WorkflowDefinition = { source: { type: 'rows' }, templateId: 'tpl_1', mapping: {}, steps: [] };

/** Per entity a workspace owns: a row of a workspace, and a change to make with nativeUpdate. */
interface Owned<T extends object> {
  entity: EntityName<T>;
  name: string;
  row(workspaceId: string): T;
  change: Partial<T>;
  changed(row: T): boolean;
}

const owned = <T extends object>(o: Owned<T>): Owned<object> => o as unknown as Owned<object>;

const OWNED: Owned<object>[] = [
  owned<ApiKey>({
    entity: ApiKey, name: 'ApiKey',
    row: (workspaceId) => ({
      id: newId('key'), workspaceId, mode: 'live', name: 'k', hash: newId('key').padEnd(64, '0'), hint: 'pk_live_…abcd', scopes: [], ipAllowlist: [],
      expiresAt: null, revokedAt: null, createdAt: at,
    }),
    change: { name: 'changed' }, changed: (r) => r.name === 'changed',
  }),
  owned<Membership>({
    entity: Membership, name: 'Membership',
    row: (workspaceId) => ({ id: newId('membership'), userId: newId('user'), workspaceId, role: 'member', createdAt: at }),
    change: { role: 'owner' }, changed: (r) => r.role === 'owner',
  }),
  owned<CreditBalance>({
    entity: CreditBalance, name: 'CreditBalance',
    row: (workspaceId) => ({
      id: `${workspaceId}:image`, workspaceId, kind: 'image', granted: 10, grantUsed: 0, topup: 0, held: 0, lowNotified: false,
      periodStart: at, periodEnd: at, updatedAt: at,
    }),
    change: { topup: 99 }, changed: (r) => r.topup === 99,
  }),
  owned<LedgerEntry>({
    entity: LedgerEntry, name: 'LedgerEntry',
    row: (workspaceId) => ({
      id: newId('ledger'), workspaceId, kind: 'image', reason: 'grant', amount: 10, credits: 10, renderId: null, phase: null, balanceAfter: 10, createdAt: at,
    }),
    change: { balanceAfter: 99 }, changed: (r) => r.balanceAfter === 99,
  }),
  owned<OutboxEvent>({
    entity: OutboxEvent, name: 'OutboxEvent',
    row: (workspaceId) => ({ id: newId('event'), workspaceId, type: 'credits.low', mode: 'live', data: {}, target: null, createdAt: at, dispatchedAt: null }),
    change: { dispatchedAt: at }, changed: (r) => r.dispatchedAt !== null,
  }),
  owned<WebhookEndpoint>({
    entity: WebhookEndpoint, name: 'WebhookEndpoint',
    row: (workspaceId) => ({
      id: newId('webhook'), workspaceId, kind: 'endpoint', url: 'https://example.com/hook', description: null, events: ['render.completed'], mode: 'live', modes: ['live', 'test'],
      method: 'POST', bodyFormat: 'json', payloadMode: 'default', payloadTemplate: null, headers: [], secretSealed: 'sealed', secretHint: 'whsec_...abcd',
      isActive: true, disabledAt: null, consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null, createdAt: at, updatedAt: at,
    }),
    change: { consecutiveFailures: 99 }, changed: (r) => r.consecutiveFailures === 99,
  }),
  owned<WebhookDelivery>({
    entity: WebhookDelivery, name: 'WebhookDelivery',
    row: (workspaceId) => ({
      id: newId('delivery'), workspaceId, endpointId: newId('webhook'), eventId: newId('event'), eventType: 'render.completed', mode: 'live', sequence: 0, test: false,
      event: {}, jobId: null, state: 'pending', attempts: 0, lastStatus: null, lastError: null, lastDurationMs: null, createdAt: at, completedAt: null,
    }),
    change: { state: 'cancelled' }, changed: (r) => r.state === 'cancelled',
  }),
  owned<Template>({
    entity: Template, name: 'Template',
    row: (workspaceId) => template(workspaceId, { visibility: 'private', status: 'draft' }),
    change: { usageCount: 99 }, changed: (r) => r.usageCount === 99,
  }),
  owned<Render>({
    entity: Render, name: 'Render',
    row: (workspaceId) => ({
      id: newId('render'), workspaceId, status: 'queued', kind: 'image', mode: 'live', preview: false, templateId: null, templateVersion: null, format: 'png',
      width: 10, height: 10, duration: null, fps: null, scale: 1, fileSizeBytes: null, renderTime: null, credits: 0, watermarked: false,
      outputKey: null, posterKey: null, thumbnailKey: null, expiresAt: null, purgedAt: null, error: null, progress: 0, cancelRequested: false,
      metadata: null, callback: null, edit: {}, idempotencyKey: null, requestHash: null, attempts: 1, createdAt: at, updatedAt: at, startedAt: null, completedAt: null,
    }),
    change: { progress: 0.5 }, changed: (r) => r.progress === 0.5,
  }),
  owned<Asset>({
    entity: Asset, name: 'Asset',
    row: (workspaceId) => ({
      id: newId('asset'), workspaceId, type: 'image', status: 'ready', mode: 'live', name: 'a.png', description: null, folder: null, tags: [], tagsText: ',', searchText: 'a.png',
      mimeType: 'image/png', sizeBytes: 10, width: 1, height: 1, durationSec: null, fileKey: `a/${newId('asset')}/x.png`, uploadKey: null, thumbnailKey: null,
      waveformKey: null, fontFamily: null, meta: null, error: null, source: null, licence: null, createdAt: at, updatedAt: at, readyAt: at,
    }),
    change: { name: 'changed.png' }, changed: (r) => r.name === 'changed.png',
  }),
  owned<IntegrationConnection>({
    entity: IntegrationConnection, name: 'IntegrationConnection',
    row: (workspaceId) => ({
      id: newId('connection'), workspaceId, provider: 'speech-alpha', status: 'connected', engine: 'local', baseUrl: null, accountEmail: null,
      accountName: null, credentialsSealed: 'sealed', connectedAt: at, lapsedAt: null, lapsedReason: null, updatedAt: at,
    }),
    change: { status: 'reauth_required' }, changed: (r) => r.status === 'reauth_required',
  }),
  owned<Transcription>({
    entity: Transcription, name: 'Transcription',
    row: (workspaceId) => ({
      id: newId('transcription'), workspaceId, status: 'queued', mode: 'live', route: 'captions', provider: 'speech-alpha', engine: 'local', sourceKind: 'assetId',
      sourceValue: newId('asset'), settings: {} as Transcription['settings'], cueOptions: {} as Transcription['cueOptions'], cacheMode: 'on', save: false,
      name: null, audioHash: null, audioSec: null, urlValidators: null, fromCache: false, recognitionId: null, languageCode: null, model: null, text: null, cues: null,
      vttKey: null, srtKey: null, error: null, attempts: 0, createdAt: at, updatedAt: at, completedAt: null,
    }),
    change: { attempts: 99 }, changed: (r) => r.attempts === 99,
  }),
  owned<SpeechRecognition>({
    entity: SpeechRecognition, name: 'SpeechRecognition',
    row: (workspaceId) => ({
      id: newId('recognition'), workspaceId, cacheKey: newId('recognition').padEnd(64, '0'), provider: 'speech-alpha', languageCode: 'en-US', model: 'm',
      words: [], audioSec: 1, createdAt: at,
    }),
    change: { audioSec: 99 }, changed: (r) => r.audioSec === 99,
  }),
  owned<MessagingMessage>({
    entity: MessagingMessage, name: 'MessagingMessage',
    row: (workspaceId) => ({
      id: newId('message'), workspaceId, channel: 'primary_chat', accountId: '1', recipient: '447700900123', type: 'text', templateName: null, languageCode: null,
      renderId: null, mediaUrl: null, status: 'sent', providerMessageId: 'wamid.1', idempotencyKey: null, createdAt: at, allowanceAt: at, sentAt: at, error: null, statusAt: null, mode: 'live',
    }),
    change: { providerMessageId: 'changed' }, changed: (r) => r.providerMessageId === 'changed',
  }),
  owned<MessagingContact>({
    entity: MessagingContact, name: 'MessagingContact',
    row: (workspaceId) => ({
      id: newId('contact'), workspaceId, waId: '447700900123', email: null, name: 'Ada', firstName: 'Ada', lastName: null, tagsText: ',,', optedIn: true, blocked: false,
      searchText: 'ada', lastMessagedAt: null, createdAt: at,
    }),
    change: { blocked: true }, changed: (r) => r.blocked,
  }),
  owned<Workflow>({
    entity: Workflow, name: 'Workflow',
    row: (workspaceId) => ({ id: newId('workflow'), workspaceId, name: 'w', searchText: 'w', definition: DEFINITION, createdAt: at, updatedAt: at, mode: 'live' }),
    change: { name: 'changed' }, changed: (r) => r.name === 'changed',
  }),
  owned<WorkflowRun>({
    entity: WorkflowRun, name: 'WorkflowRun',
    row: (workspaceId) => ({
      id: newId('workflowRun'), workspaceId, workflowId: newId('workflow'), status: 'queued', definition: DEFINITION, mode: 'live', planCode: 'pro', headers: null,
      totalRows: 1, round: 1, cancelRequested: false, createdAt: at, startedAt: null, completedAt: null,
    }),
    change: { cancelRequested: true }, changed: (r) => r.cancelRequested,
  }),
  owned<WorkflowRow>({
    entity: WorkflowRow, name: 'WorkflowRow',
    row: (workspaceId) => ({
      id: newId('workflowRow'), workspaceId, runId: newId('workflowRun'), position: 0, sheetRow: null, values: {}, status: 'pending', renderId: null, outputUrl: null,
      steps: [], error: null, attempts: 0, updatedAt: at,
    }),
    change: { attempts: 9 }, changed: (r) => r.attempts === 9,
  }),
  owned<MessagingCampaign>({
    entity: MessagingCampaign, name: 'MessagingCampaign',
    row: (workspaceId) => ({
      id: newId('campaign'), workspaceId, name: 'c', channel: 'primary_chat', templateName: 't', languageCode: null, renderId: null, mediaUrl: null,
      commonVariables: {}, rateLimitPerSecond: 3, total: 1, status: 'sending', idempotencyKey: null, createdAt: at, completedAt: null, mode: 'live',
    }),
    change: { name: 'changed' }, changed: (r) => r.name === 'changed',
  }),
  owned<CampaignRecipient>({
    entity: CampaignRecipient, name: 'CampaignRecipient',
    row: (workspaceId) => ({
      id: newId('recipient'), workspaceId, campaignId: newId('campaign'), position: 0, recipient: '447700900123', name: null, variables: null, status: 'queued',
      errorCode: null, reason: null, providerMessageId: null, messageId: null, claimedBy: null, attempts: 0, updatedAt: at, sentAt: null,
    }),
    change: { attempts: 9 }, changed: (r) => r.attempts === 9,
  }),
];

function template(workspaceId: string | null, o: Pick<Template, 'visibility' | 'status'>): Template {
  return {
    id: newId('template'), workspaceId, name: 't', description: null, kind: 'image', width: 10, height: 10, aspectRatio: '1:1', edit: {}, fields: [],
    fieldGroups: [], version: 1, categoryId: null, subcategoryId: null, tags: [], searchText: 't', usageCount: 0, previewKey: null, sourceTemplateId: null,
    review: null, createdAt: at, updatedAt: at, publishedAt: null, ...o,
  };
}

const REFUSED = /belongs to a workspace: query it on forWorkspace\(orm, workspaceId\), or on allWorkspaces\(orm\)/;

describe('workspace isolation', () => {
  let ctx: TestContext;
  let orm: Orm;
  const a = newId('workspace');
  const b = newId('workspace');
  /** Per entity name: the ids of a's and b's rows. */
  const ids = new Map<string, { a: string; b: string }>();

  beforeAll(async () => {
    ctx = await testContext();
    orm = await openAppDatabase(ctx.config.database);
    // The rows are written outside any workspace: creating an entity is never filtered.
    const em = orm.em.fork();
    for (const o of OWNED) {
      const [ra, rb] = [o.row(a), o.row(b)] as { id: string }[];
      em.create(o.entity, ra as never);
      em.create(o.entity, rb as never);
      ids.set(o.name, { a: ra.id, b: rb.id });
    }
    await em.flush();
  });
  afterAll(async () => {
    await orm.close(true);
    await ctx.cleanup();
  });

  it('every entity with a workspace id carries the filter, and is tested below', () => {
    const withWorkspace = [...orm.getMetadata()].filter((meta) => 'workspaceId' in meta.properties);
    expect(withWorkspace.filter((meta) => !isWorkspaceOwned(meta)).map((meta) => meta.className)).toEqual([]);
    expect(withWorkspace.filter(isWorkspaceOwned).map((meta) => meta.className).sort()).toEqual(OWNED.map((o) => o.name).sort());
  });

  it.each(OWNED.map((o) => [o.name, o] as const))('%s: a query that names no workspace throws, and changes nothing', async (_name, o) => {
    const em = orm.em.fork();
    const { a: idA } = ids.get(o.name) as { a: string };
    await expect(em.find(o.entity, {})).rejects.toThrow(REFUSED);
    // Naming the row's id or even its workspace in the query is not enough: the workspace comes from the entity manager.
    await expect(em.findOne(o.entity, { id: idA } as never)).rejects.toThrow(REFUSED);
    await expect(em.count(o.entity, { workspaceId: a } as never)).rejects.toThrow(REFUSED);
    await expect(em.nativeUpdate(o.entity, {}, o.change as never)).rejects.toThrow(REFUSED);
    await expect(em.nativeDelete(o.entity, {})).rejects.toThrow(REFUSED);
    await expect(em.transactional((tx) => tx.find(o.entity, {}))).rejects.toThrow(REFUSED);
    const rows = await allWorkspaces(orm).find(o.entity, {});
    expect(rows.filter((r) => o.changed(r))).toHaveLength(0);
    expect(rows.length).toBeGreaterThanOrEqual(2);
  });

  it.each(OWNED.map((o) => [o.name, o] as const))('%s: forWorkspace reads and changes that workspace\'s rows only; allWorkspaces sees both', async (_name, o) => {
    const mine = ids.get(o.name) as { a: string; b: string };
    const em = forWorkspace(orm, a);
    expect((await em.find(o.entity, {})).map((r) => (r as { id: string }).id)).toEqual([mine.a]);
    expect(await em.findOne(o.entity, { id: mine.b } as never)).toBeNull();
    expect(await em.count(o.entity, {})).toBe(1);
    // Inside its transactions too (a transaction's entity manager is a fork that keeps the workspace).
    expect(await em.transactional((tx) => tx.count(o.entity, { id: mine.b } as never))).toBe(0);
    expect(await forWorkspace(orm, a).nativeUpdate(o.entity, {}, o.change as never)).toBe(1);
    const both = await allWorkspaces(orm).find(o.entity, { id: { $in: [mine.a, mine.b] } } as never, { orderBy: { id: 'asc' } as never });
    expect(both.filter((r) => o.changed(r)).map((r) => (r as { id: string }).id)).toEqual([mine.a]);
    expect(await forWorkspace(orm, b).nativeDelete(o.entity, { id: mine.a } as never)).toBe(0);
    expect(await allWorkspaces(orm).count(o.entity, { id: mine.a } as never)).toBe(1);
  });

  it('a workspace reads its own templates and the library, and changes only its own', async () => {
    const c = newId('workspace');
    const em = orm.em.fork();
    const own = em.create(Template, template(c, { visibility: 'private', status: 'draft' }));
    const library = em.create(Template, template(null, { visibility: 'public', status: 'published' }));
    const archivedLibrary = em.create(Template, template(null, { visibility: 'public', status: 'archived' }));
    const othersPublic = em.create(Template, template(b, { visibility: 'public', status: 'published' }));
    const othersPublicDraft = em.create(Template, template(b, { visibility: 'public', status: 'draft' }));
    const othersPrivate = em.create(Template, template(b, { visibility: 'private', status: 'published' }));
    await em.flush();
    const all = [own, library, archivedLibrary, othersPublic, othersPublicDraft, othersPrivate].map((t) => t.id);
    const seen = await forWorkspace(orm, c).find(Template, { id: { $in: all } });
    expect(seen.map((t) => t.id).sort()).toEqual([own.id, library.id, othersPublic.id].sort());
    // Updates and deletes stay on its own rows, the library's and other workspaces' public ones included.
    expect(await forWorkspace(orm, c).nativeUpdate(Template, { id: { $in: all } }, { name: 'renamed' })).toBe(1);
    expect(await forWorkspace(orm, c).nativeDelete(Template, { id: { $in: [library.id, othersPublic.id] } })).toBe(0);
    const names = await allWorkspaces(orm).find(Template, { id: { $in: all } });
    expect(names.filter((t) => t.name === 'renamed').map((t) => t.id)).toEqual([own.id]);
  });

  it('a hand-written statement that reads a workspace\'s table names the workspace or declares allWorkspaces', async () => {
    const q = queries<Tables<typeof WebhookEndpoint>>();
    const mine = ids.get('WebhookEndpoint') as { a: string; b: string };
    const byId = q.prepare((db, p: { id: string }) => db.selectFrom('webhook_endpoint').select('id').where('id', '=', p.id));
    await expect(byId.one(orm.em, { id: mine.b })).rejects.toThrow(/reads webhook_endpoint without naming the workspace/);
    const scoped = q.prepare((db, p: { id: string; workspaceId: string }) => db.selectFrom('webhook_endpoint').select('id').where('id', '=', p.id).where('workspace_id', '=', p.workspaceId));
    expect(await scoped.one(orm.em, { id: mine.b, workspaceId: a })).toBeUndefined();
    expect(await scoped.one(orm.em, { id: mine.a, workspaceId: a })).toEqual({ id: mine.a });
    const any = q.prepare((db, p: { id: string }) => db.selectFrom('webhook_endpoint').select('id').where('id', '=', p.id), { allWorkspaces: true });
    expect(await any.one(orm.em, { id: mine.b })).toEqual({ id: mine.b });
    await expect(q.run(orm.em, (db) => db.updateTable('webhook_endpoint').set({ consecutive_failures: 0 }).where('is_active', '=', true)))
      .rejects.toThrow(/changes webhook_endpoint without naming the workspace/);
  });
});
