import { defineEntity, p, type EntityManager, type InferEntity } from '@mikro-orm/core';

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
