/** API-key scopes (contract §5). */
export const SCOPES = [
  'renders:read',
  'renders:write',
  'templates:read',
  'templates:write',
  'assets:read',
  'assets:write',
  'webhooks:read',
  'webhooks:write',
  'integrations:read',
  'integrations:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
