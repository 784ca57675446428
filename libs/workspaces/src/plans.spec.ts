import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { PLAN_CODES, planFor, PLANS, WorkspacePlans } from './plans.js';
import { openDatabase, type Orm } from '#libs/db';
import { Workspace } from './workspace.entity.js';

// docs/decisions.md "Structure (issue 31): workspace plans": an unknown code is free, logged once.

describe('WorkspacePlans: the one read of a workspace\'s plan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mr-plans-'));
  let orm: Orm;
  let plans: WorkspacePlans;
  const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

  async function workspace(id: string, plan: string): Promise<void> {
    const now = new Date();
    await orm.em.fork().insert(Workspace, { id, name: id, plan, suspendedAt: null, callbackSecretSealed: 'x', defaultCallbackUrl: null, createdAt: now, updatedAt: now });
  }

  beforeAll(async () => {
    orm = await openDatabase({ kind: 'sqlite', file: join(dir, 'app.sqlite') }, [Workspace], { migrate: true });
    plans = new WorkspacePlans(orm);
    await workspace('org_known', 'business');
    await workspace('org_typo', 'platinum');
    await workspace('org_typo_too', 'platinum');
  });
  afterAll(async () => {
    await orm.close(true);
    rmSync(dir, { recursive: true, force: true });
    errors.mockRestore();
  });
  beforeEach(() => errors.mockClear());

  it('a known code is that plan, everywhere the code is resolved', async () => {
    for (const code of PLAN_CODES) expect(planFor(code)).toBe(PLANS[code]);
    expect(await plans.planOf('org_known')).toBe(PLANS.business);
    expect(errors).not.toHaveBeenCalled();
  });

  it('an unknown code (a typo in the database) is the free plan, never more, and is logged once as an error naming it', async () => {
    expect(await plans.planOf('org_typo')).toBe(PLANS.free);
    expect(await plans.planOf('org_typo')).toBe(PLANS.free);
    expect(await plans.planOf('org_typo_too')).toBe(PLANS.free);
    expect(planFor('platinum')).toBe(PLANS.free);
    expect(errors).toHaveBeenCalledTimes(1);
    expect(String(errors.mock.calls[0]![0])).toContain('"platinum" (workspace org_typo)');
    expect(planFor('Pro')).toBe(PLANS.free);
    expect(errors).toHaveBeenCalledTimes(2);
  });

  it('a missing workspace (gone while its jobs drain) is the free plan, silently', async () => {
    expect(await plans.planOf('org_gone')).toBe(PLANS.free);
    expect(planFor(undefined)).toBe(PLANS.free);
    expect(planFor(null)).toBe(PLANS.free);
    expect(errors).not.toHaveBeenCalled();
  });
});
