import { defineEntity, p, type EntityManager, type InferEntity, type MikroORM } from '@mikro-orm/core';
import { forWorkspace, retryBusy } from '#libs/db';

export const Workspace = defineEntity({
  name: 'Workspace',
  tableName: 'workspace',
  properties: {
    id: p.string().primary().length(32),
    name: p.string().length(200),
    plan: p.string().length(20),
    suspendedAt: p.datetime().nullable(),
    /** Signs render callbacks; AES-GCM sealed with the master secret. */
    callbackSecretSealed: p.text(),
    defaultCallbackUrl: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Workspace = InferEntity<typeof Workspace>;

/**
 * Takes the workspace's row lock inside `em`'s transaction (PostgreSQL: a row lock; SQLite: the
 * database's write lock): checks of a plan's allowance followed by an insert (storage, templates)
 * run one after another for a workspace, so concurrent requests cannot both pass the check.
 */
export async function lockWorkspace(em: EntityManager, workspaceId: string): Promise<void> {
  await em.nativeUpdate(Workspace, { id: workspaceId }, { updatedAt: new Date() });
}

/**
 * `work` in a transaction of the workspace's rows holding its lock (lockWorkspace), retried while
 * SQLite is busy: a check (an allowance, the last owner) and the write it allows run one after
 * another for a workspace.
 */
export function underWorkspaceLock<T>(orm: MikroORM, workspaceId: string, work: (em: EntityManager) => Promise<T>): Promise<T> {
  return retryBusy(() => forWorkspace(orm, workspaceId).fork().transactional(async (em) => {
    await lockWorkspace(em, workspaceId);
    return work(em);
  }));
}
