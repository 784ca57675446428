import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { ApiError, newId, validationFailed, type FieldErrors, type KeyMode, type ListQuery, type ListSpec } from '#libs/core';
import { lockWorkspace, type Plan, type WorkspacePlans } from '#libs/workspaces';
import { forWorkspace, queries, retryBusy, type Orm, type Tables } from '#libs/db';
import { writeEvent } from '#libs/events';
import type { IntegrationsService, UsableConnection } from '#libs/integrations';
import type { RedisKeys } from '#libs/redis';
import { IDEMPOTENCY_KEY } from '#libs/renders';
import { CampaignRecipient, MessagingCampaign, MessagingMessage, type RecipientStatus } from './entities.js';
import type { MessagingService, SendCache, SendInput } from './messaging.service.js';
import { RateLimiter } from './rate-limiter.js';

const recipients = queries<Tables<typeof CampaignRecipient>>();

/** §4.5 / §8: up to 5,000 recipients per broadcast. */
export const MAX_RECIPIENTS = 5_000;
/** §4.5: the messaging provider's own default rate. */
export const DEFAULT_CAMPAIGN_RATE = 3;
/** Our ceiling (docs/decisions.md): WhatsApp Cloud API's default throughput is 80 messages a second per number. */
export const MAX_CAMPAIGN_RATE = 80;
/** Runner jobs enqueued per campaign: recipients are shared out among them, on whichever workers take them. */
export const CAMPAIGN_RUNNERS = 4;
/** A runner's liveness key lives this long without a refresh (refreshed every second). */
const RUNNER_TTL_MS = 5_000;

export const RECIPIENT_STATUSES = ['queued', 'sending', 'sent', 'delivered', 'read', 'failed', 'unknown'] as const satisfies readonly RecipientStatus[];
const RECIPIENT_SORTS = ['position', 'updatedAt'] as const;
export const RECIPIENT_LIST: ListSpec<(typeof RECIPIENT_SORTS)[number]> = {
  sort: RECIPIENT_SORTS, defaultSort: 'position', defaultOrder: 'asc', limit: { default: 20, max: 100 }, sets: { status: RECIPIENT_STATUSES },
};

/** §4.5 Broadcast (body), as the DTO parsed it. */
export interface CampaignInput {
  templateName: string;
  recipients: { to: string; name?: string; variables?: Record<string, string> }[];
  name?: string;
  languageCode?: string;
  commonVariables?: Record<string, string>;
  renderId?: string;
  mediaUrl?: string;
  rateLimitPerSecond?: number;
}

export type CampaignProgress = Record<RecipientStatus, number>;

export interface CampaignView {
  id: string;
  name: string;
  channel: string;
  templateName: string;
  languageCode: string | null;
  renderId: string | null;
  mediaUrl: string | null;
  rateLimitPerSecond: number;
  status: string;
  total: number;
  progress: CampaignProgress;
  createdAt: string;
  completedAt: string | null;
  /** The creator's mode; `test`: every recipient is simulated (checked and paced as in live mode, sent to no provider). */
  mode: KeyMode;
  simulated: boolean;
}

export interface RecipientView {
  id: string;
  position: number;
  to: string;
  name: string | null;
  status: string;
  errorCode: string | null;
  reason: string | null;
  providerMessageId: string | null;
  messageId: string | null;
  attempts: number;
  updatedAt: string;
  sentAt: string | null;
}

export interface CampaignsDeps {
  orm: Orm;
  messaging: MessagingService;
  integrations: IntegrationsService;
  redis: Redis;
  redisKeys: RedisKeys;
  plans: WorkspacePlans;
  /** The longest one provider attempt may take (MESSAGING_TIMEOUT_MS): how long an unfinished call counts in the rate. */
  attemptTimeoutMs: number;
  /** Adds the campaign's runner jobs (libs/queue `campaign.send`, one job id per runner). */
  enqueue: (campaignId: string, workspaceId: string, runners: number) => Promise<void>;
}

/** Statuses a recipient or a message only moves up through; `failed` ends one that was not yet delivered. */
const STATUS_RANK: Record<string, number> = { queued: 0, sending: 0, unknown: 0, sent: 1, delivered: 2, read: 3 };

/** May a status callback move a record from `from` to `to`? Never backwards, never out of `failed`; a duplicate changes nothing. */
export function movesForward(from: string, to: string): boolean {
  if (from === 'failed' || from === to) return false;
  if (to === 'failed') return (STATUS_RANK[from] ?? 0) <= 1;
  return (STATUS_RANK[to] ?? -1) > (STATUS_RANK[from] ?? 0);
}

function defaultName(now: Date): string {
  return `Broadcast ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Broadcast campaigns (§4.5 "Broadcast", docs/messaging.md "Campaigns"): the API's half checks every
 * recipient up front through the send path's own checks (`MessagingService.prepare`) and stores the
 * campaign with one row per recipient; the worker's half (`run`) sends them through the same path
 * (`deliver`, the recipient's id as the Idempotency-Key) at the campaign's rate across every worker.
 */
export class CampaignsService {
  constructor(private readonly deps: CampaignsDeps) {}

  /** 202 with the stored campaign, or 200 with the one an earlier request with this Idempotency-Key made (`replayed`). */
  async create(workspaceId: string, plan: Plan, mode: KeyMode, use: UsableConnection, input: CampaignInput, idempotencyKey: string | null): Promise<{ campaign: CampaignView; replayed: boolean }> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) throw validationFailed({ 'headers.idempotency-key': ['must be 1 to 255 visible ASCII characters'] });
    if (idempotencyKey) {
      const before = await em.findOne(MessagingCampaign, { idempotencyKey });
      if (before) return { campaign: await this.view(before), replayed: true };
    }
    await this.check(workspaceId, use, input);
    await this.deps.messaging.checkAllowance(em, plan, mode, input.recipients.length);
    const now = new Date();
    const id = newId('campaign');
    try {
      // Every recipient's unit reserved with the campaign, under the workspace's lock (the deciding check):
      // its queued recipients count as used until each is sent (then its message counts) or fails.
      await retryBusy(() => em.fork().transactional(async (tx) => {
        await lockWorkspace(tx, workspaceId);
        await this.deps.messaging.checkAllowance(tx, plan, mode, input.recipients.length);
        tx.create(MessagingCampaign, {
          id, workspaceId, name: input.name?.trim() || defaultName(now), channel: 'primary_chat', templateName: input.templateName,
          languageCode: input.languageCode ?? null, renderId: input.renderId ?? null, mediaUrl: input.mediaUrl ?? null,
          commonVariables: input.commonVariables ?? {}, rateLimitPerSecond: input.rateLimitPerSecond ?? DEFAULT_CAMPAIGN_RATE,
          total: input.recipients.length, status: 'sending', idempotencyKey, createdAt: now, completedAt: null, mode,
        });
        await tx.flush();
        const rows = input.recipients.map((r, position) => ({
          id: newId('recipient'), workspaceId, campaignId: id, position, recipient: r.to, name: r.name ?? null, variables: r.variables ?? null,
          status: 'queued' as const, errorCode: null, reason: null, providerMessageId: null, messageId: null, claimedBy: null, attempts: 0, updatedAt: now, sentAt: null,
        }));
        for (let i = 0; i < rows.length; i += 500) await tx.insertMany(CampaignRecipient, rows.slice(i, i + 500));
      }));
    } catch (err) {
      if (!idempotencyKey || !(err instanceof UniqueConstraintViolationException)) throw err;
      const twin = await em.findOne(MessagingCampaign, { idempotencyKey });
      if (!twin) throw err;
      return { campaign: await this.view(twin), replayed: true };
    }
    try {
      await this.deps.enqueue(id, workspaceId, CAMPAIGN_RUNNERS);
    } catch (err) {
      // No runners, no campaign: nothing stays `sending` with no one to send it, and the key is free to retry (503).
      await em.transactional(async (tx) => {
        await tx.nativeDelete(CampaignRecipient, { campaignId: id });
        await tx.nativeDelete(MessagingCampaign, { id });
      });
      throw err;
    }
    return { campaign: await this.get(workspaceId, id), replayed: false };
  }

  /**
   * Every recipient through the send path's checks before anything is stored: the template, its
   * language and its media once (a fault there is the campaign's: `templateName`, `mediaUrl`…), then
   * each recipient's number and variables, every fault by path (`recipients[17].to`).
   */
  private async check(workspaceId: string, use: UsableConnection, input: CampaignInput): Promise<void> {
    const cache: SendCache = {};
    const errors: FieldErrors = {};
    for (const [i, r] of input.recipients.entries()) {
      try {
        await this.deps.messaging.prepare(workspaceId, use, this.sendInput(input, r), cache);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'VALIDATION_FAILED' || !err.extras.errors) throw err;
        const own = Object.entries(err.extras.errors);
        const shared = own.filter(([path]) => path !== 'to' && path !== 'variables');
        // A fault of the template or the media is every recipient's: report it once, by its own name.
        if (shared.length) throw validationFailed(Object.fromEntries(shared.map(([path, why]) => [path === 'variables' ? 'commonVariables' : path, why])));
        for (const [path, why] of own) errors[`recipients[${i}].${path}`] = why;
      }
    }
    if (Object.keys(errors).length) throw validationFailed(errors, `${Object.keys(errors).length} recipient field(s) are not valid; nothing was sent`);
  }

  private sendInput(c: { templateName: string; languageCode?: string | null; renderId?: string | null; mediaUrl?: string | null; commonVariables?: Record<string, string> }, r: { to: string; variables?: Record<string, string> | null }): SendInput {
    return {
      to: r.to, channel: 'primary_chat', type: 'template', templateName: c.templateName,
      ...(c.languageCode !== undefined && c.languageCode !== null ? { languageCode: c.languageCode } : {}),
      ...(c.renderId !== undefined && c.renderId !== null ? { renderId: c.renderId } : {}),
      ...(c.mediaUrl !== undefined && c.mediaUrl !== null ? { mediaUrl: c.mediaUrl } : {}),
      variables: { ...(c.commonVariables ?? {}), ...(r.variables ?? {}) },
    };
  }

  /** A campaign of this workspace with its progress; 404 CAMPAIGN_NOT_FOUND otherwise. */
  async get(workspaceId: string, id: string): Promise<CampaignView> {
    const row = await forWorkspace(this.deps.orm, workspaceId).findOne(MessagingCampaign, { id });
    if (!row) throw new ApiError('CAMPAIGN_NOT_FOUND', `No campaign ${id} in this workspace`);
    return this.view(row);
  }

  async recipients(workspaceId: string, id: string, q: ListQuery<(typeof RECIPIENT_SORTS)[number]>): Promise<{ rows: RecipientView[]; total: number }> {
    await this.get(workspaceId, id);
    const where = { campaignId: id, ...(q.sets.status?.length ? { status: { $in: q.sets.status as RecipientStatus[] } } : {}) };
    const [rows, total] = await forWorkspace(this.deps.orm, workspaceId).findAndCount(CampaignRecipient, where, {
      orderBy: { [q.sort]: q.order, id: q.order }, limit: q.limit, offset: q.offset,
    });
    return { rows: rows.map(recipientView), total };
  }

  /** The campaign as the API shows it; `em`: the caller's transaction (SQLite has one connection: a statement outside it would wait for it). */
  private async view(row: MessagingCampaign, em: EntityManager = forWorkspace(this.deps.orm, row.workspaceId)): Promise<CampaignView> {
    const progress = Object.fromEntries(RECIPIENT_STATUSES.map((s) => [s, 0])) as CampaignProgress;
    const counts = await recipients.all(em, (db) => db.selectFrom('messaging_campaign_recipient')
      .select((eb) => ['status', eb.fn.countAll<number | string>().as('n')])
      .where('workspace_id', '=', row.workspaceId).where('campaign_id', '=', row.id).groupBy('status'));
    for (const c of counts) progress[c.status as RecipientStatus] = Number(c.n);
    return {
      id: row.id, name: row.name, channel: row.channel, templateName: row.templateName, languageCode: row.languageCode ?? null, renderId: row.renderId ?? null,
      mediaUrl: row.mediaUrl ?? null, rateLimitPerSecond: row.rateLimitPerSecond, status: row.status, total: row.total, progress,
      createdAt: row.createdAt.toISOString(), completedAt: row.completedAt?.toISOString() ?? null, mode: row.mode, simulated: row.mode === 'test',
    };
  }

  // ---- the worker's half -------------------------------------------------------------------

  /**
   * One runner of a campaign (a `campaign.send` job): takes a grant from the campaign's limiter,
   * claims one queued recipient (a conditional update: exactly one runner wins it), sends it through
   * `deliver` and records the outcome; until no recipient is queued. Then it settles what dead
   * runners left `sending` (`recover`), waits for live ones, and completes the campaign once.
   */
  async run(workspaceId: string, campaignId: string, signal?: AbortSignal): Promise<{ sent: number; status: string }> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    const campaign = await em.findOne(MessagingCampaign, { id: campaignId });
    if (!campaign || campaign.status === 'completed') return { sent: 0, status: campaign?.status ?? 'gone' };
    const token = randomUUID();
    const { redis, redisKeys } = this.deps;
    const alive = redisKeys.campaignRunner(token);
    await redis.set(alive, '1', 'PX', RUNNER_TTL_MS);
    const beat = setInterval(() => void redis.set(alive, '1', 'PX', RUNNER_TTL_MS).catch(() => undefined), 1_000);
    // Two windows of the same rate, each counting a grant until a second after its work ended: `calls`
    // around each provider attempt (retries included), so what the provider receives in any one second
    // stays within the rate however long a busy worker delays a request after its grant; `pace` around
    // the whole of one recipient (claim, checks, every attempt), so a runner claims only what it can send
    // at once: the calls window then has room (but for retries) and a claimed recipient does not wait
    // with its message row written (a crash there would leave it `unknown`).
    const attemptMs = this.deps.attemptTimeoutMs + 5_000;
    const pace = new RateLimiter(redis, `${redisKeys.campaignRate(campaignId)}:pace`, campaign.rateLimitPerSecond, token, attemptMs * 4);
    const calls = new RateLimiter(redis, `${redisKeys.campaignRate(campaignId)}:calls`, campaign.rateLimitPerSecond, token, attemptMs);
    const cache: SendCache = {};
    let sent = 0;
    try {
      const plan = await this.deps.plans.planOf(workspaceId);
      for (;;) {
        signal?.throwIfAborted();
        if (await this.hasQueued(workspaceId, campaignId)) {
          await pace.around(async () => {
            const r = await this.claim(workspaceId, campaignId, token);
            if (r && (await this.sendOne(campaign, plan, r, token, calls, cache))) sent++;
          }, signal);
          continue;
        }
        if (await this.recover(workspaceId, campaignId)) continue;
        if (await em.count(CampaignRecipient, { campaignId, status: 'sending' })) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          continue;
        }
        await this.complete(workspaceId, campaignId);
        return { sent, status: 'completed' };
      }
    } finally {
      clearInterval(beat);
      await redis.del(alive).catch(() => undefined);
    }
  }

  private async hasQueued(workspaceId: string, campaignId: string): Promise<boolean> {
    return (await forWorkspace(this.deps.orm, workspaceId).count(CampaignRecipient, { campaignId, status: 'queued' })) > 0;
  }

  /** One queued recipient, now `sending` and ours; null when none is left. Runners pick among the next few, so they seldom collide. */
  private async claim(workspaceId: string, campaignId: string, token: string): Promise<CampaignRecipient | null> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    for (let tries = 0; tries < 20; tries++) {
      const next = await em.find(CampaignRecipient, { campaignId, status: 'queued' }, { orderBy: { position: 'asc' }, limit: 8, fields: ['id'] });
      if (!next.length) return null;
      const pick = next[Math.floor(Math.random() * next.length)]!;
      const won = await em.nativeUpdate(CampaignRecipient, { id: pick.id, status: 'queued' }, { status: 'sending', claimedBy: token, updatedAt: new Date() });
      if (won === 1) return em.fork().findOne(CampaignRecipient, { id: pick.id });
    }
    return null;
  }

  /** Sends one claimed recipient and records how it went; true when the provider took it. */
  private async sendOne(campaign: MessagingCampaign, plan: Plan, r: CampaignRecipient, token: string, limiter: RateLimiter, cache: SendCache): Promise<boolean> {
    const { workspaceId } = campaign;
    const em = forWorkspace(this.deps.orm, workspaceId);
    const mine = { id: r.id, status: 'sending' as const, claimedBy: token };
    try {
      const use = await this.deps.integrations.use(workspaceId, plan, 'messaging-provider');
      const prepared = await this.deps.messaging.prepare(workspaceId, use, this.sendInput(campaign, { to: r.recipient, variables: r.variables }), cache);
      // The campaign's mode picks the sender (a test campaign's is simulated); its unit was reserved with the campaign.
      const { message } = await this.deps.messaging.deliver(workspaceId, plan, campaign.mode, use, prepared, r.id, { around: (attempt) => limiter.around(attempt), reference: r.id, reservedAt: campaign.createdAt });
      if (message.status === 'sending') {
        await em.nativeUpdate(CampaignRecipient, mine, { status: 'unknown', errorCode: 'OUTCOME_UNKNOWN', reason: UNKNOWN_REASON, messageId: message.id, attempts: r.attempts + 1, updatedAt: new Date() });
        return false;
      }
      const done = { providerMessageId: message.providerMessageId, messageId: message.id, attempts: r.attempts + 1, sentAt: new Date(), updatedAt: new Date() };
      // A status callback may have moved it on already: then only the ids are added.
      if (!(await em.nativeUpdate(CampaignRecipient, mine, { ...done, status: 'sent' }))) await em.nativeUpdate(CampaignRecipient, { id: r.id }, done);
      return true;
    } catch (err) {
      if (err instanceof ApiError) {
        const providerCode = (err.extras.data as { providerCode?: string | null } | undefined)?.providerCode;
        await em.nativeUpdate(CampaignRecipient, mine, {
          status: 'failed', errorCode: err.code, reason: `${err.message}${providerCode ? ` (provider code ${providerCode})` : ''}`.slice(0, 2000),
          attempts: r.attempts + 1, updatedAt: new Date(),
        });
        return false;
      }
      // Ours (the database, Redis): the recipient goes back to the queue unless its message row says the provider was called.
      await this.settleOrphan(workspaceId, { ...r, claimedBy: token }).catch(() => undefined);
      throw err;
    }
  }

  /** Recipients left `sending` by runners that are no longer alive, settled; true when there were any. */
  private async recover(workspaceId: string, campaignId: string): Promise<boolean> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    const stuck = await em.find(CampaignRecipient, { campaignId, status: 'sending' });
    let settled = false;
    for (const r of stuck) {
      if (r.claimedBy && (await this.deps.redis.exists(this.deps.redisKeys.campaignRunner(r.claimedBy)))) continue;
      await this.settleOrphan(workspaceId, r);
      settled = true;
    }
    return settled;
  }

  /**
   * The rule for a recipient whose runner stopped mid-send (docs/decisions.md): no message row → the
   * provider was never called → queued again; a `sending` row → the provider may have it → `unknown`,
   * never resent (a status callback carrying its reference settles it later); a sent row → sent.
   */
  private async settleOrphan(workspaceId: string, r: Pick<CampaignRecipient, 'id' | 'claimedBy' | 'attempts'>): Promise<void> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    const where = { id: r.id, status: 'sending' as const, claimedBy: r.claimedBy ?? null };
    const message = await em.findOne(MessagingMessage, { idempotencyKey: r.id });
    const now = new Date();
    if (!message) await em.nativeUpdate(CampaignRecipient, where, { status: 'queued', claimedBy: null, updatedAt: now });
    else if (message.status === 'sending') await em.nativeUpdate(CampaignRecipient, where, { status: 'unknown', errorCode: 'OUTCOME_UNKNOWN', reason: UNKNOWN_REASON, messageId: message.id, updatedAt: now });
    else {
      await em.nativeUpdate(CampaignRecipient, where, {
        status: message.status, providerMessageId: message.providerMessageId ?? null, messageId: message.id, sentAt: message.sentAt ?? now, updatedAt: now,
      });
    }
  }

  /** `completed` and `campaign.completed` in one transaction, once (a conditional update). */
  private async complete(workspaceId: string, campaignId: string): Promise<void> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    await em.transactional(async (tx) => {
      const changed = await tx.nativeUpdate(MessagingCampaign, { id: campaignId, status: 'sending' }, { status: 'completed', completedAt: new Date() });
      if (!changed) return;
      const row = await tx.findOneOrFail(MessagingCampaign, { id: campaignId });
      const view = await this.view(row, tx);
      // Campaigns carry no mode yet (issue 28, "mode-providers" part): live until they do.
      await writeEvent(tx, workspaceId, 'campaign.completed', { ...view }, { mode: 'live' });
    });
  }

  // ---- status callbacks ---------------------------------------------------------------------

  /**
   * A provider's status for one message (docs/messaging.md "Status callbacks"), folded into the
   * message and, for a campaign's, its recipient: only forwards (`movesForward`), so duplicates and
   * late arrivals change nothing. Found by the provider's message id or, for a campaign recipient
   * whose send's outcome is unknown, by the reference it carried (WhatsApp's biz_opaque_callback_data).
   */
  async foldStatus(workspaceId: string, s: { providerMessageId: string; status: 'sent' | 'delivered' | 'read' | 'failed'; error?: string | null; reference?: string | null; at?: Date }): Promise<boolean> {
    const em = forWorkspace(this.deps.orm, workspaceId);
    let message = await em.findOne(MessagingMessage, { providerMessageId: s.providerMessageId });
    if (!message && s.reference?.startsWith('rcp_')) message = await em.findOne(MessagingMessage, { idempotencyKey: s.reference });
    if (!message) return false;
    const now = s.at ?? new Date();
    if (message.status === 'sending' || movesForward(message.status, s.status)) {
      const status = movesForward(message.status, s.status) ? s.status : 'sent';
      await em.nativeUpdate(MessagingMessage, { id: message.id, status: message.status }, {
        status, providerMessageId: s.providerMessageId, statusAt: now, ...(message.sentAt ? {} : { sentAt: now }),
        ...(status === 'failed' ? { error: (s.error ?? 'The provider reported the message failed').slice(0, 2000) } : {}),
      });
    }
    const recipientId = message.idempotencyKey?.startsWith('rcp_') ? message.idempotencyKey : null;
    if (recipientId) {
      const r = await em.findOne(CampaignRecipient, { id: recipientId });
      if (r && movesForward(r.status, s.status)) {
        await em.nativeUpdate(CampaignRecipient, { id: r.id, status: r.status }, {
          status: s.status, providerMessageId: s.providerMessageId, messageId: message.id, updatedAt: new Date(), ...(r.sentAt ? {} : { sentAt: now }),
          ...(s.status === 'failed' ? { errorCode: 'MESSAGE_FAILED', reason: (s.error ?? 'The provider reported the message failed').slice(0, 2000) } : { errorCode: null, reason: null }),
        });
      }
    }
    return true;
  }
}

const UNKNOWN_REASON = 'The worker sending it stopped while the provider was being called: it may have been sent. It is not sent again (no duplicate); a status callback from the provider settles it';

function recipientView(r: CampaignRecipient): RecipientView {
  return {
    id: r.id, position: r.position, to: r.recipient, name: r.name ?? null, status: r.status, errorCode: r.errorCode ?? null, reason: r.reason ?? null,
    providerMessageId: r.providerMessageId ?? null, messageId: r.messageId ?? null, attempts: r.attempts, updatedAt: r.updatedAt.toISOString(), sentAt: r.sentAt?.toISOString() ?? null,
  };
}
