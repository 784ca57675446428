import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { workspaceFilter } from '#libs/db';

export const CREDIT_KINDS = ['image', 'video'] as const;
export type CreditKind = (typeof CREDIT_KINDS)[number];

export const LEDGER_REASONS = ['grant', 'topup', 'hold', 'capture', 'release', 'refund', 'adjustment'] as const;
export type LedgerReason = (typeof LEDGER_REASONS)[number];

/**
 * One balance per workspace and kind. available = (granted − grantUsed) + topup − held:
 * captures spend the period's grant first, then top-ups; the grant resets at periodEnd, top-ups stay.
 */
export const CreditBalance = defineEntity({
  name: 'CreditBalance',
  tableName: 'credit_balance',
  filters: workspaceFilter(),
  uniques: [{ properties: ['workspaceId', 'kind'] }],
  properties: {
    id: p.string().primary().length(40),
    workspaceId: p.string().length(32),
    kind: p.string().length(8).$type<CreditKind>(),
    granted: p.integer(),
    grantUsed: p.integer(),
    topup: p.integer(),
    held: p.integer(),
    /** Last threshold state, so credits.low fires once per crossing. */
    lowNotified: p.boolean(),
    periodStart: p.datetime(),
    periodEnd: p.datetime(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type CreditBalance = InferEntity<typeof CreditBalance>;

/**
 * Every change of a balance. `amount` is the change of `available` (hold −n, release +n, capture 0:
 * it moves held credits to spent), so the entries of a kind sum to its available balance.
 * The unique (renderId, kind, phase) makes the hold, and its one settlement (capture or release),
 * happen at most once per render whatever retries and races do.
 */
export const LedgerEntry = defineEntity({
  name: 'LedgerEntry',
  tableName: 'credit_ledger',
  filters: workspaceFilter(),
  uniques: [{ properties: ['renderId', 'kind', 'phase'] }],
  indexes: [{ properties: ['workspaceId', 'id'] }],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    kind: p.string().length(8).$type<CreditKind>(),
    reason: p.string().length(12).$type<LedgerReason>(),
    amount: p.integer(),
    /** Credits the entry concerns (for a capture: the credits spent). */
    credits: p.integer(),
    renderId: p.string().length(40).nullable(),
    /** `hold` or `settle` for render entries (capture and release share `settle`); null otherwise. */
    phase: p.string().length(8).nullable(),
    balanceAfter: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type LedgerEntry = InferEntity<typeof LedgerEntry>;
