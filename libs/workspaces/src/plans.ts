import type { MikroORM } from '@mikro-orm/core';
import { Logger } from '@nestjs/common';
import { isPlanCode, PLAN_CODES, PLANS, type Plan } from '#libs/core';
import { queries, type Tables } from '#libs/db';
import type { Workspace } from './workspace.entity.js';

/*
 * The one place a workspace's plan is read and a stored plan code becomes a Plan
 * (docs/decisions.md "Structure (issue 31): workspace plans").
 */

const log = new Logger('plans');
/** Unknown codes already reported by this process (each is logged once, not once per request). */
const reported = new Set<string>();

/**
 * The plan of a stored code. A code the product does not know (an operator's typo in the database, a
 * plan removed by a later release) is a configuration error: it is logged once per process as an error
 * naming the code, and the workspace gets the free plan, so a typo never grants more than free nor
 * takes the workspace's service down. No code (a workspace gone) is free too, silently.
 */
export function planFor(code: string | null | undefined, workspaceId?: string): Plan {
  if (code === null || code === undefined) return PLANS.free;
  if (isPlanCode(code)) return PLANS[code];
  if (!reported.has(code) && reported.size < 100) {
    reported.add(code);
    log.error(`Unknown plan code "${code}"${workspaceId ? ` (workspace ${workspaceId})` : ''}: treated as free; `
      + `set a known plan (${PLAN_CODES.join(', ')}) with \`workspace:plan\``);
  }
  return PLANS.free;
}

const workspaces = queries<Tables<typeof Workspace>>();
const PLAN_CODE = workspaces.prepare((db, p: { id: string }) => db.selectFrom('workspace').select('plan').where('id', '=', p.id));

/**
 * A workspace's plan, read from its row (one prepared statement). Paths that already hold the
 * workspace row (the key authenticator's cache, sessions) resolve its code with `planFor` instead of
 * reading it again.
 */
export class WorkspacePlans {
  constructor(private readonly orm: MikroORM) {}

  async planOf(workspaceId: string): Promise<Plan> {
    return planFor((await PLAN_CODE.one(this.orm.em, { id: workspaceId }))?.plan, workspaceId);
  }
}
