/** The credit arithmetic of docs/decisions.md "Credits", apart from the statements that apply it. */

/** The parts of a balance that make up what it can spend. */
export interface BalanceParts {
  granted: number;
  grantUsed: number;
  topup: number;
  held: number;
}

/** `available = (granted − used) + topup − held`. */
export function available(b: BalanceParts): number {
  return b.granted - b.grantUsed + b.topup - b.held;
}

/** The same instant one calendar month (UTC) later; a day the next month lacks runs over into the one after. */
export function addMonth(d: Date): Date {
  const next = new Date(d);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return next;
}

/** The grant period that holds `now`, counted in months from the end of a period that has ended. */
export function periodAt(ended: Date, now: Date): { start: Date; end: Date } {
  let start = ended;
  let end = addMonth(start);
  while (end <= now) {
    start = end;
    end = addMonth(start);
  }
  return { start, end };
}

/** The change of `available` when a period rolls: the new grant replaces what was left of the old one. */
export function grantRollAmount(b: Pick<BalanceParts, 'granted' | 'grantUsed'>, grant: number): number {
  return grant - (b.granted - b.grantUsed);
}

/**
 * The `amount` (change of `available`) of a render's ledger entry for `credits` credits: a hold
 * takes them, a release gives them back, a capture moves held credits to spent (no change).
 */
export function ledgerAmount(reason: 'hold' | 'capture' | 'release', credits: number): number {
  return reason === 'hold' ? -credits : reason === 'capture' ? 0 : credits;
}

/** What a change of `available` by `amount`, ending at `now`, means for the credits.* events. */
export interface Crossing {
  /** `notify`: write credits.low (and remember it); `rearm`: back at or above the threshold, forget it. */
  low: 'notify' | 'rearm' | null;
  /** Write credits.exhausted: the change brought available from above 0 to 0 or below. */
  exhausted: boolean;
}

/** credits.low fires once per downward crossing of `threshold`; credits.exhausted when available reaches 0. */
export function crossing(now: number, amount: number, threshold: number, lowNotified: boolean): Crossing {
  const before = now - amount;
  const low = now < threshold && !lowNotified ? 'notify' : now >= threshold && lowNotified ? 'rearm' : null;
  return { low, exhausted: now <= 0 && before > 0 };
}
