import { addMonth, available, crossing, grantRollAmount, ledgerAmount, periodAt, type BalanceParts } from './arithmetic.js';

// docs/decisions.md "Credits".
describe('available credits', () => {
  it('is (granted − used) + topup − held', () => {
    expect(available({ granted: 50, grantUsed: 20, topup: 5, held: 3 })).toBe(32);
    expect(available({ granted: 50, grantUsed: 50, topup: 7, held: 0 })).toBe(7);
    expect(available({ granted: 0, grantUsed: 0, topup: 0, held: 0 })).toBe(0);
    expect(available({ granted: 5, grantUsed: 0, topup: 0, held: 5 })).toBe(0);
  });
});

describe('ledger amounts', () => {
  it('are the change of available: hold −n, capture 0, release +n', () => {
    expect(ledgerAmount('hold', 4)).toBe(-4);
    expect(ledgerAmount('capture', 4)).toBe(0);
    expect(ledgerAmount('release', 4)).toBe(4);
  });

  it('of a period roll: the new grant replaces what was left of the old one, top-ups and holds untouched', () => {
    const b = { granted: 50, grantUsed: 20, topup: 5, held: 3 };
    expect(grantRollAmount(b, 50)).toBe(20);
    expect(available({ ...b, granted: 50, grantUsed: 0 }) - available(b)).toBe(20);
    expect(grantRollAmount({ granted: 50, grantUsed: 0 }, 50)).toBe(0);
    // A smaller grant (plan downgrade) takes credits away.
    expect(grantRollAmount({ granted: 500, grantUsed: 100 }, 50)).toBe(-350);
  });

  /** A balance changed as the service's statements change it, and the ledger entry each writes. */
  type Op = { hold: number } | { capture: number } | { release: number } | { topup: number } | { roll: number };
  function apply(b: BalanceParts, op: Op): { b: BalanceParts; amount: number } {
    if ('hold' in op) return { b: { ...b, held: b.held + op.hold }, amount: ledgerAmount('hold', op.hold) };
    if ('release' in op) return { b: { ...b, held: b.held - op.release }, amount: ledgerAmount('release', op.release) };
    if ('topup' in op) return { b: { ...b, topup: b.topup + op.topup }, amount: op.topup };
    if ('roll' in op) return { b: { ...b, granted: op.roll, grantUsed: 0 }, amount: grantRollAmount(b, op.roll) };
    // A capture spends the period's grant first, then top-ups.
    const n = op.capture;
    const fromGrant = Math.min(n, b.granted - b.grantUsed);
    return { b: { ...b, held: b.held - n, grantUsed: b.grantUsed + fromGrant, topup: b.topup - (n - fromGrant) }, amount: ledgerAmount('capture', n) };
  }

  it('of a kind sum to its available balance after every change', () => {
    const ops: Op[] = [
      { hold: 3 }, { capture: 3 }, { hold: 40 }, { release: 40 }, { topup: 10 }, { hold: 50 }, { capture: 50 },
      { roll: 50 }, { hold: 2 }, { roll: 20 }, { release: 2 }, { hold: 25 }, { capture: 25 }, { roll: 0 },
    ];
    let b: BalanceParts = { granted: 50, grantUsed: 0, topup: 0, held: 0 };
    let sum = grantRollAmount({ granted: 0, grantUsed: 0 }, 50); // the opening grant entry
    expect(sum).toBe(available(b));
    for (const op of ops) {
      const next = apply(b, op);
      b = next.b;
      sum += next.amount;
      expect({ op, sum }).toEqual({ op, sum: available(b) });
    }
    // 53 captured: the first grant whole, then 3 of the top-up; 25 captured: the grant of 20, then 5 more.
    expect(b).toEqual({ granted: 0, grantUsed: 0, topup: 2, held: 0 });
  });
});

describe('grant periods', () => {
  it('are calendar months in UTC, the same instant a month later', () => {
    expect(addMonth(new Date('2025-03-15T10:20:30.456Z')).toISOString()).toBe('2025-04-15T10:20:30.456Z');
    expect(addMonth(new Date('2025-12-15T23:59:59.999Z')).toISOString()).toBe('2026-01-15T23:59:59.999Z');
  });

  it('runs a day the next month lacks over into the month after (no grant is skipped, the day shifts)', () => {
    expect(addMonth(new Date('2025-01-31T00:00:00.000Z')).toISOString()).toBe('2025-03-03T00:00:00.000Z');
    expect(addMonth(new Date('2024-01-31T00:00:00.000Z')).toISOString()).toBe('2024-03-02T00:00:00.000Z');
    expect(addMonth(new Date('2025-03-31T00:00:00.000Z')).toISOString()).toBe('2025-05-01T00:00:00.000Z');
  });

  it('roll to the period that holds now, a month at a time from the period that ended', () => {
    const ended = new Date('2025-01-10T08:00:00.000Z');
    const at = (now: string) => {
      const p = periodAt(ended, new Date(now));
      return [p.start.toISOString(), p.end.toISOString()];
    };
    expect(at('2025-01-10T08:00:00.000Z')).toEqual(['2025-01-10T08:00:00.000Z', '2025-02-10T08:00:00.000Z']);
    expect(at('2025-02-10T07:59:59.999Z')).toEqual(['2025-01-10T08:00:00.000Z', '2025-02-10T08:00:00.000Z']);
    expect(at('2025-02-10T08:00:00.000Z')).toEqual(['2025-02-10T08:00:00.000Z', '2025-03-10T08:00:00.000Z']);
    // Months without a request: one roll to the current period, not one per missed month.
    expect(at('2025-07-01T00:00:00.000Z')).toEqual(['2025-06-10T08:00:00.000Z', '2025-07-10T08:00:00.000Z']);
    expect(ended.toISOString()).toBe('2025-01-10T08:00:00.000Z');
  });
});

describe('credits.low and credits.exhausted', () => {
  it('credits.low fires once per downward crossing of the threshold and re-arms at or above it', () => {
    const threshold = 10;
    let available = 12;
    let notified = false;
    const events: string[] = [];
    for (const amount of [-1, -2, -1, +1, -3, +5, +2, -1, -5, -1]) {
      available += amount;
      const { low } = crossing(available, amount, threshold, notified);
      if (low === 'notify') notified = true;
      if (low === 'rearm') notified = false;
      events.push(`${available}${low ? ` ${low}` : ''}`);
    }
    expect(events).toEqual(['11', '9 notify', '8', '9', '6', '11 rearm', '13', '12', '7 notify', '6']);
  });

  it('at exactly the threshold nothing is low', () => {
    expect(crossing(10, -1, 10, false).low).toBeNull();
    expect(crossing(10, +4, 10, true).low).toBe('rearm');
    expect(crossing(9, -1, 10, false).low).toBe('notify');
  });

  it('credits.exhausted fires when a change brings available to 0, not when it stays there', () => {
    expect(crossing(0, -2, 2, true).exhausted).toBe(true);
    expect(crossing(0, -1, 2, false)).toEqual({ low: 'notify', exhausted: true });
    expect(crossing(0, 0, 2, true).exhausted).toBe(false); // a capture at 0
    expect(crossing(1, -1, 2, true).exhausted).toBe(false);
    expect(crossing(3, +3, 2, true)).toEqual({ low: 'rearm', exhausted: false });
    // A smaller grant at a roll can take a balance from positive to below zero.
    expect(crossing(-5, -8, 2, true).exhausted).toBe(true);
  });
});
