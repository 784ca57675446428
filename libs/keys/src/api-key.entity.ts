import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { KeyMode, Scope } from '#libs/core';
import { workspaceFilter } from '#libs/db';

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  filters: workspaceFilter(),
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32).index(),
    mode: p.string().length(4).$type<KeyMode>(),
    name: p.string().length(200).nullable(),
    /** HMAC-SHA256 of the whole key under a key derived from APP_SECRET; the key itself is never stored. */
    hash: p.string().length(64).unique(),
    /** `pk_live_…abcd`: enough to recognise a key in a list. */
    hint: p.string().length(40),
    scopes: p.json<Scope[]>(),
    ipAllowlist: p.json<string[]>(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type ApiKey = InferEntity<typeof ApiKey>;
