import { SCOPES, type Scope } from '#libs/core';
import type { Role } from './entities.js';

/** The member's own scopes: every read, and creating renders, templates and media (decisions.md "Sessions (dashboard)"). */
const MEMBER_WRITES: readonly Scope[] = ['renders:write', 'templates:write', 'assets:write'];

/**
 * What a member's role grants when a dashboard session calls a key route (`/v1/...`): an owner every
 * scope; a member every `:read` scope and the writes above, not webhooks:write, integrations:write
 * (nor key management, an owner's `/organization/api-keys`).
 */
export const ROLE_SCOPES: Readonly<Record<Role, ReadonlySet<Scope>>> = {
  owner: new Set(SCOPES),
  member: new Set(SCOPES.filter((s) => s.endsWith(':read') || MEMBER_WRITES.includes(s))),
};
