import { raw, UniqueConstraintViolationException, type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/core';
import { ApiError, columnDate, newId, PLANS, SqlTx, type KeyMode, type PlanCode } from '#libs/core';
import { recordEvent } from '#libs/events';
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

const AVAILABLE = 'granted - grant_used + topup - held';

function planGrant(plan: PlanCode, kind: CreditKind): number {
  return kind === 'image' ? PLANS[plan].imageCreditsPerMonth : PLANS[plan].videoCreditsPerMonth;
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

const BALANCE_COLUMNS = 'id, granted, grant_used, topup, held, low_notified, period_end';

function balanceRow(r: Record<string, unknown>): BalanceRow {
  return {
    id: r.id as string, granted: Number(r.granted), grantUsed: Number(r.grant_used), topup: Number(r.topup), held: Number(r.held),
    lowNotified: Boolean(r.low_notified), periodEnd: columnDate(r.period_end)!,
  };
}

/** The balance of a workspace's kind as it stands in the transaction. */
async function readBalance(tx: SqlTx, workspaceId: string, kind: CreditKind): Promise<BalanceRow> {
  const found = await tx.one(`select ${BALANCE_COLUMNS} from credit_balance where workspace_id = ? and kind = ?`, [workspaceId, kind]);
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
        await this.orm.em.fork().transactional(async (em) => {
          if (await em.findOne(CreditBalance, { workspaceId, kind })) return;
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
      const b = await this.orm.em.fork().transactional((em) => this.current(em, workspaceId, kind, plan, now));
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
    const existing = () => this.orm.em.fork().findOne(LedgerEntry, { renderId, kind, phase: 'hold' });
    const prior = await existing();
    if (prior) return { held: true, entryId: prior.id, amount: prior.credits, kind };
    // Balances are opened with the workspace; open them here only for one that predates credits.
    if ((await this.orm.em.fork().count(CreditBalance, { workspaceId, kind })) === 0) await this.open(workspaceId, input.plan);
    try {
      return await this.orm.em.fork().transactional((em) => this.holdIn(em, input));
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
    if ((await this.orm.em.fork().count(CreditBalance, { workspaceId })) < CREDIT_KINDS.length) await this.open(workspaceId, plan, now);
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
    const tx = SqlTx.of(em);
    const now = new Date();
    await this.current(em, workspaceId, kind, input.plan, now);
    // Claim the render's hold first: a concurrent duplicate waits on the unique index, then fails.
    const entryId = await this.insertEntry(tx, { ...this.entry(workspaceId, kind, 'hold', ledgerAmount('hold', amount), amount, 0), renderId, phase: 'hold' }, now);
    const b = await tx.one(
      `update credit_balance set held = held + ?, updated_at = ? where workspace_id = ? and kind = ? and ${AVAILABLE} >= ? returning ${BALANCE_COLUMNS}`,
      [amount, now, workspaceId, kind, amount],
    );
    if (!b) {
      const current = await readBalance(tx, workspaceId, kind);
      throw new ApiError('INSUFFICIENT_CREDITS', `This render needs ${amount} ${kind} credit${amount === 1 ? '' : 's'}; ${available(current)} available`);
    }
    await tx.run('update credit_ledger set balance_after = ? where id = ?', [await this.after(em, workspaceId, kind, ledgerAmount('hold', amount), balanceRow(b)), entryId]);
    return { held: true as const, entryId, amount, kind };
  }

  /** Spends a render's held credits (output stored). Idempotent; no-op when nothing is held or it was settled. */
  capture(renderId: string): Promise<SettleEntry | null> {
    return this.settle(renderId, 'capture');
  }

  /** Returns a render's held credits (failure, cancellation, lost render). Idempotent. */
  release(renderId: string): Promise<SettleEntry | null> {
    return this.settle(renderId, 'release');
  }

  private async settle(renderId: string, reason: 'capture' | 'release'): Promise<SettleEntry | null> {
    const holds = await this.orm.em.fork().find(LedgerEntry, { renderId, phase: 'hold' });
    let last: SettleEntry | null = null;
    for (const hold of holds) {
      try {
        last = await this.orm.em.fork().transactional((em) => this.settleHold(em, hold, reason));
      } catch (err) {
        if (!(err instanceof UniqueConstraintViolationException)) throw err;
      }
    }
    return last;
  }

  /**
   * Capture or release inside the caller's transaction, with the render's status change: the credits
   * move exactly when the render settles. A render already settled is left alone (null).
   */
  async settleIn(em: EntityManager, renderId: string, reason: 'capture' | 'release'): Promise<SettleEntry | null> {
    // One read for the render's holds and settlements (a settled kind is skipped).
    const rows = await SqlTx.of(em).all("select workspace_id, kind, credits, phase from credit_ledger where render_id = ? and phase in ('hold', 'settle')", [renderId]);
    const settled = new Set(rows.filter((e) => e.phase === 'settle').map((e) => e.kind));
    let last: SettleEntry | null = null;
    for (const r of rows) {
      if (r.phase !== 'hold' || settled.has(r.kind)) continue;
      const hold = { renderId, workspaceId: r.workspace_id as string, kind: r.kind as CreditKind, credits: Number(r.credits) };
      last = (await this.settleHold(em, hold, reason, true)) ?? last;
    }
    return last;
  }

  private async settleHold(em: EntityManager, hold: HoldRef, reason: 'capture' | 'release', checked = false): Promise<SettleEntry | null> {
    const tx = SqlTx.of(em);
    const { kind, workspaceId } = hold;
    const renderId = hold.renderId ?? null;
    const n = hold.credits;
    if (!checked && (await tx.one("select id from credit_ledger where render_id = ? and kind = ? and phase = 'settle'", [renderId, kind]))) return null;
    const delta = ledgerAmount(reason, n);
    const now = new Date();
    // Claim the settlement first: a concurrent capture/release waits on the unique index, then fails.
    const entry = { ...this.entry(workspaceId, kind, reason, delta, n, 0), renderId, phase: 'settle' };
    await this.insertEntry(tx, entry, now);
    // A capture spends the period's grant first, then top-ups.
    const fits = 'granted - grant_used >= ?';
    const b = reason === 'capture'
      ? await tx.one(
        `update credit_balance set held = held - ?, grant_used = case when ${fits} then grant_used + ? else granted end,
           topup = case when ${fits} then topup else topup - (? - (granted - grant_used)) end, updated_at = ?
         where workspace_id = ? and kind = ? and held >= ? returning ${BALANCE_COLUMNS}`,
        [n, n, n, n, n, now, workspaceId, kind, n],
      )
      : await tx.one(`update credit_balance set held = held - ?, updated_at = ? where workspace_id = ? and kind = ? and held >= ? returning ${BALANCE_COLUMNS}`, [n, now, workspaceId, kind, n]);
    if (!b) throw new Error(`Balance of ${workspaceId}/${kind} holds less than render ${renderId}'s ${n}`);
    entry.balanceAfter = await this.after(em, workspaceId, kind, delta, balanceRow(b));
    await tx.run('update credit_ledger set balance_after = ? where id = ?', [entry.balanceAfter, entry.id]);
    return entry;
  }

  private async insertEntry(tx: SqlTx, entry: SettleEntry, at: Date): Promise<string> {
    await tx.insert(LedgerEntry, { ...entry, createdAt: at });
    return entry.id;
  }

  /** The ledger, newest first, after `beforeId` (cursor), with optional filters. */
  async history(
    workspaceId: string,
    q: { limit: number; kinds?: string[]; reasons?: string[]; from?: Date; to?: Date; beforeId?: string },
  ): Promise<{ rows: LedgerEntry[]; more: boolean }> {
    const where: FilterQuery<LedgerEntry> = { workspaceId };
    if (q.kinds) where.kind = { $in: q.kinds as CreditKind[] };
    if (q.reasons) where.reason = { $in: q.reasons as LedgerReason[] };
    if (q.from || q.to) where.createdAt = { ...(q.from ? { $gte: q.from } : {}), ...(q.to ? { $lte: q.to } : {}) };
    if (q.beforeId) where.id = { $lt: q.beforeId };
    const rows = await this.orm.em.fork().find(LedgerEntry, where, { orderBy: { id: 'desc' }, limit: q.limit + 1 });
    return { rows: rows.slice(0, q.limit), more: rows.length > q.limit };
  }

  /** Adds credits that outlive the period (operator grants, purchases). */
  async topup(workspaceId: string, plan: PlanCode, kind: CreditKind, amount: number, reason: LedgerReason = 'topup'): Promise<void> {
    if (!Number.isInteger(amount) || amount <= 0) throw new ApiError('INVALID_REQUEST', `${kind} credits must be a positive integer`);
    await this.open(workspaceId, plan);
    await this.orm.em.fork().transactional(async (em) => {
      await em.nativeUpdate(CreditBalance, { workspaceId, kind }, { topup: raw('topup + ?', [amount]) });
      const after = await this.after(em, workspaceId, kind, amount);
      em.create(LedgerEntry, this.entry(workspaceId, kind, reason, amount, amount, after));
      await em.flush();
    });
  }

  /**
   * Releases holds that were never settled and are older than `maxAgeMs` (their render was lost).
   * `isSettled` lets the renders module release holds of renders it knows have finished.
   */
  async sweep(maxAgeMs: number, now = new Date(), isSettled?: (renderIds: string[]) => Promise<Set<string>>): Promise<string[]> {
    const em = this.orm.em.fork();
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
    const tx = SqlTx.of(em);
    const b = await readBalance(tx, workspaceId, kind);
    if (now < b.periodEnd) return b;
    const { start, end } = periodAt(b.periodEnd, now);
    const grant = planGrant(plan, kind);
    const delta = grantRollAmount(b, grant);
    const rolled = await tx.one(
      `update credit_balance set granted = ?, grant_used = 0, period_start = ?, period_end = ?, updated_at = ? where workspace_id = ? and kind = ? and period_end = ? returning ${BALANCE_COLUMNS}`,
      [grant, start, end, now, workspaceId, kind, b.periodEnd],
    );
    if (!rolled) return readBalance(tx, workspaceId, kind);
    const after = await this.after(em, workspaceId, kind, delta, balanceRow(rolled));
    await this.insertEntry(tx, this.entry(workspaceId, kind, 'grant', delta, grant, after), now);
    return readBalance(tx, workspaceId, kind);
  }

  /**
   * The balance after a change (read now unless the change returned it), with credits.low /
   * credits.exhausted written on a crossing.
   */
  private async after(em: EntityManager, workspaceId: string, kind: CreditKind, delta: number, row?: BalanceRow): Promise<number> {
    const tx = SqlTx.of(em);
    const b = row ?? (await readBalance(tx, workspaceId, kind));
    const now = available(b);
    const threshold = this.settings.lowThreshold[kind];
    const { low, exhausted } = crossing(now, delta, threshold, b.lowNotified);
    if (low === 'notify') {
      if ((await tx.run('update credit_balance set low_notified = ? where id = ? and low_notified = ?', [true, b.id, false])) === 1) {
        recordEvent(em, workspaceId, 'credits.low', { kind, available: now, threshold });
      }
    } else if (low === 'rearm') {
      await tx.run('update credit_balance set low_notified = ? where id = ?', [false, b.id]);
    }
    if (exhausted) recordEvent(em, workspaceId, 'credits.exhausted', { kind, available: now, threshold });
    return now;
  }

  private entry(workspaceId: string, kind: CreditKind, reason: LedgerReason, amount: number, credits: number, balanceAfter: number) {
    return { id: newId('ledger'), workspaceId, kind, reason, amount, credits, renderId: null, phase: null, balanceAfter };
  }
}
