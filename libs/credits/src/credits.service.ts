import { raw, UniqueConstraintViolationException, type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/core';
import { ApiError, newId, type KeyMode } from '#libs/core';
import { type PlanCode, planFor } from '#libs/workspaces';
import { allWorkspaces, forWorkspace, queries, sql, type Tables } from '#libs/db';
import { writeEvent } from '#libs/events';
import { addMonth, available, crossing, grantRollAmount, ledgerAmount, periodAt } from './arithmetic.js';
import { CREDIT_KINDS, CreditBalance, LedgerEntry, type CreditKind, type LedgerReason } from './entities.js';

export interface CreditsSettings {
  /** credits.low fires when available falls below this, once per crossing. */
  lowThreshold: Record<CreditKind, number>;
}

export interface KindBalance {
  granted: number;
  topup: number;
  available: number;
  held: number;
  used: number;
}

export interface BalanceView {
  credits: Record<CreditKind, KindBalance>;
  grants: { imageCredits: number; videoCredits: number };
  periodEnd: string;
  planCode: PlanCode;
}

export type HoldResult = { held: false; reason: 'test-mode' } | { held: true; entryId: string; amount: number; kind: CreditKind };

/** The credit statements: the hot path of every render's claim and settle (hand-written, not the ORM's). */
const credits = queries<Tables<typeof CreditBalance | typeof LedgerEntry>>();

const AVAILABLE = sql<number>`granted - grant_used + topup - held`;

function planGrant(plan: PlanCode, kind: CreditKind): number {
  return kind === 'image' ? planFor(plan).imageCreditsPerMonth : planFor(plan).videoCreditsPerMonth;
}

/** A balance as the credit statements read it. */
interface BalanceRow {
  id: string;
  granted: number;
  grantUsed: number;
  topup: number;
  held: number;
  lowNotified: boolean;
  periodEnd: Date;
}

const BALANCE_COLUMNS = ['id', 'granted', 'grant_used', 'topup', 'held', 'low_notified', 'period_end'] as const;

function balanceRow(r: { id: string; granted: number; grant_used: number; topup: number; held: number; low_notified: boolean; period_end: Date }): BalanceRow {
  return { id: r.id, granted: r.granted, grantUsed: r.grant_used, topup: r.topup, held: r.held, lowNotified: r.low_notified, periodEnd: r.period_end };
}

type BalanceKey = { workspaceId: string; kind: CreditKind };

const READ_BALANCE = credits.prepare((db, p: BalanceKey) =>
  db.selectFrom('credit_balance').select(BALANCE_COLUMNS).where('workspace_id', '=', p.workspaceId).where('kind', '=', p.kind));

/** Holds `amount` when it fits the available balance (no row when it does not). */
const HOLD = credits.prepare((db, p: BalanceKey & { amount: number; now: Date }) =>
  db.updateTable('credit_balance').set((eb) => ({ held: eb('held', '+', p.amount), updated_at: p.now }))
    .where('workspace_id', '=', p.workspaceId).where('kind', '=', p.kind).where(AVAILABLE, '>=', p.amount)
    .returning(BALANCE_COLUMNS));

/** A capture spends the period's grant first, then top-ups. */
const CAPTURE = credits.prepare((db, p: BalanceKey & { n: number; now: Date }) =>
  db.updateTable('credit_balance').set({
    held: sql<number>`held - ${p.n}`,
    grant_used: sql<number>`case when granted - grant_used >= ${p.n} then grant_used + ${p.n} else granted end`,
    topup: sql<number>`case when granted - grant_used >= ${p.n} then topup else topup - (${p.n} - (granted - grant_used)) end`,
    updated_at: p.now,
  }).where('workspace_id', '=', p.workspaceId).where('kind', '=', p.kind).where('held', '>=', p.n)
    .returning(BALANCE_COLUMNS));

const RELEASE = credits.prepare((db, p: BalanceKey & { n: number; now: Date }) =>
  db.updateTable('credit_balance').set((eb) => ({ held: eb('held', '-', p.n), updated_at: p.now }))
    .where('workspace_id', '=', p.workspaceId).where('kind', '=', p.kind).where('held', '>=', p.n)
    .returning(BALANCE_COLUMNS));

/** Starts the balance's next grant period, once (the period it ended is the condition). */
const ROLL = credits.prepare((db, p: BalanceKey & { grant: number; start: Date; end: Date; now: Date; ended: Date }) =>
  db.updateTable('credit_balance').set({ granted: p.grant, grant_used: 0, period_start: p.start, period_end: p.end, updated_at: p.now })
    .where('workspace_id', '=', p.workspaceId).where('kind', '=', p.kind).where('period_end', '=', p.ended)
    .returning(BALANCE_COLUMNS));

const SET_LOW_NOTIFIED = credits.prepare((db, p: { id: string; to: boolean; from: boolean }) =>
  db.updateTable('credit_balance').set({ low_notified: p.to }).where('id', '=', p.id).where('low_notified', '=', p.from));

const SET_BALANCE_AFTER = credits.prepare((db, p: { id: string; balanceAfter: number }) =>
  db.updateTable('credit_ledger').set({ balance_after: p.balanceAfter }).where('id', '=', p.id));

/** A render's holds and settlements, by the render's id: the settler's read (it settles any workspace's render). */
const RENDER_ENTRIES = credits.prepare((db, p: { renderId: string }) =>
  db.selectFrom('credit_ledger').select(['workspace_id', 'kind', 'credits', 'phase']).where('render_id', '=', p.renderId).where('phase', 'in', ['hold', 'settle']),
{ allWorkspaces: true });

const SETTLEMENT = credits.prepare((db, p: { workspaceId: string; renderId: string | null; kind: CreditKind }) =>
  db.selectFrom('credit_ledger').select('id')
    .where('render_id', '=', p.renderId).where('kind', '=', p.kind).where('phase', '=', 'settle').where('workspace_id', '=', p.workspaceId));

/** The balance of a workspace's kind as it stands in the transaction. */
async function readBalance(em: EntityManager, workspaceId: string, kind: CreditKind): Promise<BalanceRow> {
  const found = await READ_BALANCE.one(em, { workspaceId, kind });
  if (!found) throw new Error(`No ${kind} balance for workspace ${workspaceId}`);
  return balanceRow(found);
}

/** A hold being settled. */
interface HoldRef {
  renderId?: string | null;
  workspaceId: string;
  kind: CreditKind;
  credits: number;
}

/** A ledger entry written by a hold or settlement. */
export interface SettleEntry {
  id: string;
  workspaceId: string;
  kind: CreditKind;
  reason: LedgerReason;
  amount: number;
  credits: number;
  renderId: string | null;
  phase: string | null;
  balanceAfter: number;
}

/**
 * Credit balances, holds and the ledger. Every balance change and its ledger entry (and any
 * credits.* event) commit in one transaction; hold/capture/release are idempotent per render.
 */
export class CreditsService {
  /** Workspaces whose balances this process has seen open (balances are never deleted). */
  private readonly opened = new Set<string>();

  constructor(
    private readonly orm: MikroORM,
    private readonly settings: CreditsSettings = { lowThreshold: { image: 10, video: 2 } },
  ) {}

  /** Creates both balances with the plan's grant for a period starting now (idempotent). */
  async open(workspaceId: string, plan: PlanCode, now = new Date()): Promise<void> {
    for (const kind of CREDIT_KINDS) {
      try {
        await forWorkspace(this.orm, workspaceId).transactional(async (em) => {
          if (await em.findOne(CreditBalance, { kind })) return;
          const granted = planGrant(plan, kind);
          em.create(CreditBalance, {
            id: `${workspaceId}:${kind}`, workspaceId, kind, granted, grantUsed: 0, topup: 0, held: 0,
            lowNotified: false, periodStart: now, periodEnd: addMonth(now),
          });
          em.create(LedgerEntry, this.entry(workspaceId, kind, 'grant', granted, granted, granted));
        });
      } catch (err) {
        if (!(err instanceof UniqueConstraintViolationException)) throw err;
      }
    }
  }

  /** The §2 credit balance, rolling the grant period first when it has ended. */
  async balance(workspaceId: string, plan: PlanCode, now = new Date()): Promise<BalanceView> {
    await this.ensureOpen(workspaceId, plan, now);
    const credits = {} as Record<CreditKind, KindBalance>;
    let periodEnd = now;
    for (const kind of CREDIT_KINDS) {
      const b = await forWorkspace(this.orm, workspaceId).transactional((em) => this.current(em, workspaceId, kind, plan, now));
      credits[kind] = { granted: b.granted, topup: b.topup, available: available(b), held: b.held, used: b.grantUsed };
      periodEnd = b.periodEnd;
    }
    return {
      credits,
      grants: { imageCredits: planGrant(plan, 'image'), videoCredits: planGrant(plan, 'video') },
      periodEnd: periodEnd.toISOString(),
      planCode: plan,
    };
  }

  /**
   * Reserves `amount` credits for a render. Test mode never touches credits. A second call for the
   * same render returns the first hold; 402 INSUFFICIENT_CREDITS when the amount does not fit.
   */
  async hold(input: { workspaceId: string; plan: PlanCode; kind: CreditKind; amount: number; renderId: string; mode: KeyMode }): Promise<HoldResult> {
    if (input.mode === 'test') return { held: false, reason: 'test-mode' };
    if (!Number.isInteger(input.amount) || input.amount <= 0) throw new Error('A hold needs a positive integer amount');
    const { workspaceId, kind, renderId } = input;
    const existing = () => forWorkspace(this.orm, workspaceId).findOne(LedgerEntry, { renderId, kind, phase: 'hold' });
    const prior = await existing();
    if (prior) return { held: true, entryId: prior.id, amount: prior.credits, kind };
    // Balances are opened with the workspace; open them here only for one that predates credits.
    if ((await forWorkspace(this.orm, workspaceId).count(CreditBalance, { kind })) === 0) await this.open(workspaceId, input.plan);
    try {
      return await forWorkspace(this.orm, workspaceId).transactional((em) => this.holdIn(em, input));
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      const winner = await existing();
      if (!winner) throw err;
      return { held: true, entryId: winner.id, amount: winner.credits, kind };
    }
  }

  /**
   * Opens a workspace's balances when they are missing (a workspace that predates credits): one count
   * query in the usual case instead of open()'s two transactions.
   */
  async ensureOpen(workspaceId: string, plan: PlanCode, now = new Date()): Promise<void> {
    if (this.opened.has(workspaceId)) return;
    if ((await forWorkspace(this.orm, workspaceId).count(CreditBalance, {})) < CREDIT_KINDS.length) await this.open(workspaceId, plan, now);
    this.opened.add(workspaceId);
  }

  /**
   * The hold, inside the caller's transaction: the renders module claims the render row, its
   * idempotency key and the hold together, so either all three exist or none. Balances must be open
   * (ensureOpen). Throws 402 INSUFFICIENT_CREDITS, rolling the caller's transaction back.
   */
  async holdIn(em: EntityManager, input: { workspaceId: string; plan: PlanCode; kind: CreditKind; amount: number; renderId: string; mode: KeyMode }): Promise<HoldResult> {
    if (input.mode === 'test') return { held: false, reason: 'test-mode' };
    if (!Number.isInteger(input.amount) || input.amount <= 0) throw new Error('A hold needs a positive integer amount');
    const { workspaceId, kind, amount, renderId } = input;
    const now = new Date();
    await this.current(em, workspaceId, kind, input.plan, now);
    // Claim the render's hold first: a concurrent duplicate waits on the unique index, then fails.
    const entryId = await this.insertEntry(em, { ...this.entry(workspaceId, kind, 'hold', ledgerAmount('hold', amount), amount, 0), renderId, phase: 'hold' }, now);
    const b = await HOLD.one(em, { amount, now, workspaceId, kind });
    if (!b) {
      const current = await readBalance(em, workspaceId, kind);
      throw new ApiError('INSUFFICIENT_CREDITS', `This render needs ${amount} ${kind} credit${amount === 1 ? '' : 's'}; ${available(current)} available`);
    }
    await SET_BALANCE_AFTER.run(em, { id: entryId, balanceAfter: await this.after(em, workspaceId, kind, ledgerAmount('hold', amount), balanceRow(b)) });
    return { held: true as const, entryId, amount, kind };
  }

  /**
   * Spends a render's held credits (output stored), whichever workspace it is in (the render id is
   * the worker's, the sweeper's). Idempotent; no-op when nothing is held or it was settled.
   */
  capture(renderId: string): Promise<SettleEntry | null> {
    return this.settle(renderId, 'capture');
  }

  /** Returns a render's held credits (failure, cancellation, lost render), as `capture`. Idempotent. */
  release(renderId: string): Promise<SettleEntry | null> {
    return this.settle(renderId, 'release');
  }

  private async settle(renderId: string, reason: 'capture' | 'release'): Promise<SettleEntry | null> {
    const holds = await allWorkspaces(this.orm).find(LedgerEntry, { renderId, phase: 'hold' });
    let last: SettleEntry | null = null;
    for (const hold of holds) {
      try {
        last = await forWorkspace(this.orm, hold.workspaceId).transactional((em) => this.settleHold(em, hold, reason));
      } catch (err) {
        if (!(err instanceof UniqueConstraintViolationException)) throw err;
      }
    }
    return last;
  }

  /**
   * Capture or release inside the caller's transaction, with the render's status change: the credits
   * move exactly when the render settles. A render already settled is left alone (null). By the
   * render's id alone (the settler's, any workspace): its entries name the workspace.
   */
  async settleIn(em: EntityManager, renderId: string, reason: 'capture' | 'release'): Promise<SettleEntry | null> {
    // One read for the render's holds and settlements (a settled kind is skipped).
    const rows = await RENDER_ENTRIES.all(em, { renderId });
    const settled = new Set(rows.filter((e) => e.phase === 'settle').map((e) => e.kind));
    let last: SettleEntry | null = null;
    for (const r of rows) {
      if (r.phase !== 'hold' || settled.has(r.kind)) continue;
      const hold = { renderId, workspaceId: r.workspace_id, kind: r.kind, credits: r.credits };
      last = (await this.settleHold(em, hold, reason, true)) ?? last;
    }
    return last;
  }

  private async settleHold(em: EntityManager, hold: HoldRef, reason: 'capture' | 'release', checked = false): Promise<SettleEntry | null> {
    const { kind, workspaceId } = hold;
    const renderId = hold.renderId ?? null;
    const n = hold.credits;
    if (!checked && (await SETTLEMENT.one(em, { workspaceId, renderId, kind }))) return null;
    const delta = ledgerAmount(reason, n);
    const now = new Date();
    // Claim the settlement first: a concurrent capture/release waits on the unique index, then fails.
    const entry = { ...this.entry(workspaceId, kind, reason, delta, n, 0), renderId, phase: 'settle' };
    await this.insertEntry(em, entry, now);
    const b = await (reason === 'capture' ? CAPTURE : RELEASE).one(em, { n, now, workspaceId, kind });
    if (!b) throw new Error(`Balance of ${workspaceId}/${kind} holds less than render ${renderId}'s ${n}`);
    entry.balanceAfter = await this.after(em, workspaceId, kind, delta, balanceRow(b));
    await SET_BALANCE_AFTER.run(em, { id: entry.id, balanceAfter: entry.balanceAfter });
    return entry;
  }

  private async insertEntry(em: EntityManager, entry: SettleEntry, at: Date): Promise<string> {
    await credits.insert(em, LedgerEntry, { ...entry, createdAt: at });
    return entry.id;
  }

  /** The ledger, newest first, after `beforeId` (cursor), with optional filters. */
  async history(
    workspaceId: string,
    q: { limit: number; kinds?: string[]; reasons?: string[]; from?: Date; to?: Date; beforeId?: string },
  ): Promise<{ rows: LedgerEntry[]; more: boolean }> {
    const where: FilterQuery<LedgerEntry> = {};
    if (q.kinds) where.kind = { $in: q.kinds as CreditKind[] };
    if (q.reasons) where.reason = { $in: q.reasons as LedgerReason[] };
    if (q.from || q.to) where.createdAt = { ...(q.from ? { $gte: q.from } : {}), ...(q.to ? { $lte: q.to } : {}) };
    if (q.beforeId) where.id = { $lt: q.beforeId };
    const rows = await forWorkspace(this.orm, workspaceId).find(LedgerEntry, where, { orderBy: { id: 'desc' }, limit: q.limit + 1 });
    return { rows: rows.slice(0, q.limit), more: rows.length > q.limit };
  }

  /** Adds credits that outlive the period (operator grants, purchases). */
  async topup(workspaceId: string, plan: PlanCode, kind: CreditKind, amount: number, reason: LedgerReason = 'topup'): Promise<void> {
    if (!Number.isInteger(amount) || amount <= 0) throw new ApiError('INVALID_REQUEST', `${kind} credits must be a positive integer`);
    await this.open(workspaceId, plan);
    await forWorkspace(this.orm, workspaceId).transactional(async (em) => {
      await em.nativeUpdate(CreditBalance, { kind }, { topup: raw('topup + ?', [amount]) });
      const after = await this.after(em, workspaceId, kind, amount);
      em.create(LedgerEntry, this.entry(workspaceId, kind, reason, amount, amount, after));
      await em.flush();
    });
  }

  /**
   * Releases holds that were never settled and are older than `maxAgeMs` (their render was lost), in
   * every workspace (the worker's sweeper). `isSettled` lets the renders module release holds of
   * renders it knows have finished.
   */
  async sweep(maxAgeMs: number, now = new Date(), isSettled?: (renderIds: string[]) => Promise<Set<string>>): Promise<string[]> {
    const em = allWorkspaces(this.orm);
    const holds = await em.find(LedgerEntry, { phase: 'hold' }, { orderBy: { id: 'asc' }, limit: 1000 });
    if (holds.length === 0) return [];
    const ids = holds.map((h) => h.renderId as string);
    const settled = new Set((await em.find(LedgerEntry, { renderId: { $in: ids }, phase: 'settle' }, { fields: ['renderId'] })).map((e) => e.renderId));
    const finished = isSettled ? await isSettled(ids.filter((id) => !settled.has(id))) : new Set<string>();
    const released: string[] = [];
    for (const h of holds) {
      const id = h.renderId as string;
      if (settled.has(id)) continue;
      if (finished.has(id) || now.getTime() - h.createdAt.getTime() > maxAgeMs) {
        if (await this.release(id)) released.push(id);
      }
    }
    return released;
  }

  /** Balance row for a kind, rolling its period forward (with a grant entry) when it has ended. */
  private async current(em: EntityManager, workspaceId: string, kind: CreditKind, plan: PlanCode, now: Date): Promise<BalanceRow> {
    const b = await readBalance(em, workspaceId, kind);
    if (now < b.periodEnd) return b;
    const { start, end } = periodAt(b.periodEnd, now);
    const grant = planGrant(plan, kind);
    const delta = grantRollAmount(b, grant);
    const rolled = await ROLL.one(em, { grant, start, end, now, workspaceId, kind, ended: b.periodEnd });
    if (!rolled) return readBalance(em, workspaceId, kind);
    const after = await this.after(em, workspaceId, kind, delta, balanceRow(rolled));
    await this.insertEntry(em, this.entry(workspaceId, kind, 'grant', delta, grant, after), now);
    return readBalance(em, workspaceId, kind);
  }

  /**
   * The balance after a change (read now unless the change returned it), with credits.low /
   * credits.exhausted written on a crossing.
   */
  private async after(em: EntityManager, workspaceId: string, kind: CreditKind, delta: number, row?: BalanceRow): Promise<number> {
    const b = row ?? (await readBalance(em, workspaceId, kind));
    const now = available(b);
    const threshold = this.settings.lowThreshold[kind];
    const { low, exhausted } = crossing(now, delta, threshold, b.lowNotified);
    if (low === 'notify') {
      if ((await SET_LOW_NOTIFIED.run(em, { id: b.id, to: true, from: false })) === 1) {
        await writeEvent(em, workspaceId, 'credits.low', { kind, available: now, threshold }, { mode: 'live' });
      }
    } else if (low === 'rearm') {
      await SET_LOW_NOTIFIED.run(em, { id: b.id, to: false, from: true });
    }
    if (exhausted) await writeEvent(em, workspaceId, 'credits.exhausted', { kind, available: now, threshold }, { mode: 'live' });
    return now;
  }

  private entry(workspaceId: string, kind: CreditKind, reason: LedgerReason, amount: number, credits: number, balanceAfter: number) {
    return { id: newId('ledger'), workspaceId, kind, reason, amount, credits, renderId: null, phase: null, balanceAfter };
  }
}
