import { CreditsService, LedgerEntry, CreditBalance } from '#libs/credits';
import { openAppDatabase } from '#libs/app';
import { allWorkspaces, forWorkspace, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { newId } from '#libs/core';
import { testContext, type TestContext } from './harness.js';

// Contract §2 (credit balance), §6 (credits.low / credits.exhausted), decisions.md "Credit ledger".
describe('credits: balances, holds and the ledger', () => {
  let ctx: TestContext;
  let orm: Orm;
  let credits: CreditsService;

  beforeAll(async () => {
    ctx = await testContext();
    orm = await openAppDatabase(ctx.config.database);
    credits = new CreditsService(orm, { lowThreshold: { image: 10, video: 2 } });
  });
  afterAll(async () => {
    await orm.close(true);
    await ctx.cleanup();
  });

  const ws = () => newId('workspace');
  const ledgerSum = async (workspaceId: string, kind: 'image' | 'video') =>
    (await forWorkspace(orm, workspaceId).find(LedgerEntry, { kind })).reduce((s, e) => s + e.amount, 0);
  const events = async (workspaceId: string) =>
    (await forWorkspace(orm, workspaceId).find(OutboxEvent, {}, { orderBy: { id: 'asc' } })).map((e) => ({ type: e.type, data: e.data }));

  it('opens a workspace with its plan grant for the period', async () => {
    const w = ws();
    const view = await credits.balance(w, 'free');
    expect(view.planCode).toBe('free');
    expect(view.grants).toEqual({ imageCredits: 50, videoCredits: 5 });
    expect(view.credits.image).toEqual({ granted: 50, topup: 0, available: 50, held: 0, used: 0 });
    expect(new Date(view.periodEnd).getTime()).toBeGreaterThan(Date.now() + 27 * 86_400_000);
    expect(await ledgerSum(w, 'image')).toBe(50);
  });

  it('100 concurrent holds on a balance that fits 10: exactly 10 succeed and the ledger sums to the balance', async () => {
    const w = ws();
    await credits.open(w, 'free'); // 5 video credits granted
    await credits.topup(w, 'free', 'video', 5); // 10 in all
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => credits.hold({ workspaceId: w, plan: 'free', kind: 'video', amount: 1, renderId: `rnd_c${i}`, mode: 'live' })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(90);
    expect(refused.every((r) => r.reason.code === 'INSUFFICIENT_CREDITS' && r.reason.status === 402)).toBe(true);
    const view = await credits.balance(w, 'free');
    expect(view.credits.video).toMatchObject({ available: 0, held: 10 });
    expect(await ledgerSum(w, 'video')).toBe(0);
  });

  it('hold, capture and release are idempotent per render', async () => {
    const w = ws();
    const hold = () => credits.hold({ workspaceId: w, plan: 'pro', kind: 'image', amount: 3, renderId: 'rnd_idem', mode: 'live' });
    const first = await hold();
    const again = await hold();
    expect(again).toEqual(first);
    expect((await credits.balance(w, 'pro')).credits.image).toMatchObject({ available: 10_000 - 3, held: 3 });
    expect(await credits.capture('rnd_idem')).not.toBeNull();
    expect(await credits.capture('rnd_idem')).toBeNull();
    expect(await credits.release('rnd_idem')).toBeNull(); // already settled by the capture
    const view = await credits.balance(w, 'pro');
    expect(view.credits.image).toMatchObject({ available: 10_000 - 3, held: 0, used: 3 });
    const entries = await forWorkspace(orm, w).find(LedgerEntry, { renderId: 'rnd_idem' });
    expect(entries.map((e) => e.reason).sort()).toEqual(['capture', 'hold']);
    expect(await ledgerSum(w, 'image')).toBe(view.credits.image.available);
  });

  it('concurrent capture and release of one render settle it exactly once', async () => {
    const w = ws();
    await credits.hold({ workspaceId: w, plan: 'pro', kind: 'video', amount: 2, renderId: 'rnd_race', mode: 'live' });
    await Promise.all([credits.capture('rnd_race'), credits.release('rnd_race'), credits.capture('rnd_race'), credits.release('rnd_race')]);
    const settles = await forWorkspace(orm, w).find(LedgerEntry, { renderId: 'rnd_race', phase: 'settle' });
    expect(settles).toHaveLength(1);
    const v = (await credits.balance(w, 'pro')).credits.video;
    expect(v.held).toBe(0);
    expect(v.available).toBe(settles[0].reason === 'capture' ? 498 : 500);
  });

  it('release returns held credits; test mode never touches credits', async () => {
    const w = ws();
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 5, renderId: 'rnd_rel', mode: 'live' });
    await credits.release('rnd_rel');
    expect((await credits.balance(w, 'free')).credits.image).toMatchObject({ available: 50, held: 0, used: 0 });
    expect(await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 500, renderId: 'rnd_test', mode: 'test' })).toEqual({ held: false, reason: 'test-mode' });
    expect(await allWorkspaces(orm).count(LedgerEntry, { renderId: 'rnd_test' })).toBe(0);
  });

  it('spends the grant before top-ups, and top-ups outlive the period', async () => {
    const w = ws();
    await credits.open(w, 'free');
    await credits.topup(w, 'free', 'image', 20);
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 60, renderId: 'rnd_big', mode: 'live' });
    await credits.capture('rnd_big');
    let img = (await credits.balance(w, 'free')).credits.image;
    expect(img).toMatchObject({ granted: 50, used: 50, topup: 10, available: 10 });
    // A month later the grant resets; the remaining top-up stays.
    const later = new Date(Date.now() + 32 * 86_400_000);
    img = (await credits.balance(w, 'free', later)).credits.image;
    expect(img).toMatchObject({ granted: 50, used: 0, topup: 10, available: 60 });
    expect(await ledgerSum(w, 'image')).toBe(60);
  });

  it('writes credits.low once per crossing and credits.exhausted at zero, in the same transaction', async () => {
    const w = ws();
    await credits.open(w, 'free'); // image: 50, threshold 10
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 35, renderId: 'rnd_l1', mode: 'live' }); // 15
    expect(await events(w)).toEqual([]);
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 6, renderId: 'rnd_l2', mode: 'live' }); // 9 → low
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 1, renderId: 'rnd_l3', mode: 'live' }); // 8, still low: no repeat
    expect(await events(w)).toEqual([{ type: 'credits.low', data: { kind: 'image', available: 9, threshold: 10 } }]);
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 8, renderId: 'rnd_l4', mode: 'live' }); // 0
    expect((await events(w)).at(-1)).toEqual({ type: 'credits.exhausted', data: { kind: 'image', available: 0, threshold: 10 } });
    // Back above the threshold, then below again: a new crossing, a new event.
    await credits.release('rnd_l1'); // 35
    await credits.hold({ workspaceId: w, plan: 'free', kind: 'image', amount: 30, renderId: 'rnd_l5', mode: 'live' }); // 5
    expect((await events(w)).filter((e) => e.type === 'credits.low')).toHaveLength(2);
  });

  it('the sweeper releases holds of lost renders and reports them', async () => {
    const w = ws();
    await credits.hold({ workspaceId: w, plan: 'pro', kind: 'video', amount: 4, renderId: 'rnd_lost', mode: 'live' });
    await credits.hold({ workspaceId: w, plan: 'pro', kind: 'video', amount: 1, renderId: 'rnd_live', mode: 'live' });
    const released = await credits.sweep(60_000, new Date(Date.now() + 61_000), async (ids) => new Set(ids.filter((id) => id === 'rnd_none')));
    expect(released).toEqual(expect.arrayContaining(['rnd_lost', 'rnd_live']));
    expect((await credits.balance(w, 'pro')).credits.video.held).toBe(0);
    expect(await credits.sweep(60_000, new Date(Date.now() + 61_000))).not.toContain('rnd_lost');
    // A settled render's hold is released at once, whatever its age.
    await credits.hold({ workspaceId: w, plan: 'pro', kind: 'video', amount: 2, renderId: 'rnd_done', mode: 'live' });
    expect(await credits.sweep(3_600_000, new Date(), async (ids) => new Set(ids.filter((id) => id === 'rnd_done')))).toEqual(['rnd_done']);
    const row = await forWorkspace(orm, w).findOneOrFail(CreditBalance, { kind: 'video' });
    expect(row.held).toBe(0);
  });
});
