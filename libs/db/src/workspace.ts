import type { EntityManager, EntityMetadata, MikroORM } from '@mikro-orm/core';

/*
 * Workspace isolation by construction (docs/architecture.md "Workspace isolation").
 *
 * Every entity a workspace owns carries the `workspace` filter, on by default: each find, count,
 * update and delete of it gets `workspace_id = <the workspace>` added by the ORM. Its parameter comes
 * from the entity manager, so a query must run on one of two forks:
 *
 * - `forWorkspace(orm, workspaceId)`: sees that workspace's rows only (the routes, the services);
 * - `allWorkspaces(orm)`: sees every workspace (sweepers, the dispatcher, the worker's reads by a
 *   job's id, the CLI, seeding, the key lookup by hash before the workspace is known).
 *
 * A query on a plain `orm.em.fork()` throws instead of reading across workspaces. `allWorkspaces` is
 * the one opt-out, in the ORM and in libs/db's SQL (a statement declares `{ allWorkspaces: true }`):
 * `grep -rn allWorkspaces` lists every place that reads across workspaces.
 */

export const WORKSPACE_FILTER = 'workspace';

/** The `workspace` filter's parameter: one workspace, or every workspace (the opt-out). */
export type WorkspaceScope = { workspaceId: string } | { allWorkspaces: true };

type Operation = 'read' | 'update' | 'delete';

export interface WorkspaceFilterOptions {
  /**
   * What a workspace may read, when it is more than its own rows (the template library); updates
   * and deletes always stay on its own rows.
   */
  readable?: (workspaceId: string) => Record<string, unknown>;
}

function refuse(entityName: string | undefined): Error {
  return new Error(
    `${entityName ?? 'This entity'} belongs to a workspace: query it on forWorkspace(orm, workspaceId), ` +
    'or on allWorkspaces(orm) where the code must see every workspace',
  );
}

/**
 * The `filters` of an entity a workspace owns (its `workspaceId` property): `defineEntity({ …,
 * filters: workspaceFilter() })`. A query without the filter's parameter throws.
 */
export function workspaceFilter(options: WorkspaceFilterOptions = {}) {
  return {
    [WORKSPACE_FILTER]: {
      name: WORKSPACE_FILTER,
      default: true,
      // Called without a parameter too (`args: false`), so the refusal names the way out.
      args: false,
      cond: (scope: Partial<Record<string, unknown>> | undefined, type: Operation, _em: unknown, _options: unknown, entityName?: string): Record<string, unknown> => {
        if (scope?.allWorkspaces === true) return {};
        const workspaceId = scope?.workspaceId;
        if (typeof workspaceId !== 'string' || workspaceId === '') throw refuse(entityName);
        if (type === 'read' && options.readable) return options.readable(workspaceId);
        return { workspaceId };
      },
    },
  };
}

/** Whether an entity is owned by a workspace with its filter on (libs/db's SQL checks its statements on these tables). */
export function isWorkspaceOwned(meta: EntityMetadata): boolean {
  return meta.filters?.[WORKSPACE_FILTER]?.default === true;
}

/** An entity manager that reads and writes `workspaceId`'s rows only (a fresh fork: its own identity map). */
export function forWorkspace(orm: MikroORM, workspaceId: string): EntityManager {
  if (typeof workspaceId !== 'string' || workspaceId === '') throw new Error('forWorkspace needs a workspace id');
  const em = orm.em.fork();
  em.setFilterParams(WORKSPACE_FILTER, { workspaceId } satisfies WorkspaceScope);
  return em;
}

/**
 * An entity manager that sees every workspace: the opt-out of the `workspace` filter, for code that
 * must (sweepers, the dispatcher, the worker's reads by a job's id, the CLI, seeding). Greppable.
 */
export function allWorkspaces(orm: MikroORM): EntityManager {
  const em = orm.em.fork();
  em.setFilterParams(WORKSPACE_FILTER, { allWorkspaces: true } satisfies WorkspaceScope);
  return em;
}
