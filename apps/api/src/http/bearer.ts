/** The token of an `Authorization: Bearer <token>` header, or null for any other value. */
export function bearerToken(header: string | undefined): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? null;
}
