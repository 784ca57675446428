import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

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
