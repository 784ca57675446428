import { createHmac } from 'node:crypto';
import { safeEqual } from '#libs/core';

export interface AccessClaims {
  sub: string;
  /** The user's session epoch at issue time (sign-out bumps it). */
  sep: number;
  iat: number;
  exp: number;
  jti: string;
}

export type JwtResult = { ok: true; claims: AccessClaims } | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** HS256 only: the algorithm is pinned, the header's `alg` is never trusted to choose one. */
export function signJwt(key: Buffer, claims: AccessClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const sig = createHmac('sha256', key).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${sig}`;
}

export function verifyJwt(key: Buffer, token: string, nowSec = Math.floor(Date.now() / 1000)): JwtResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [header, payload, sig] = parts;
  let alg: unknown;
  try {
    alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown }).alg;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (alg !== 'HS256') return { ok: false, reason: 'signature' };
  const expected = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  if (!safeEqual(sig, expected)) return { ok: false, reason: 'signature' };
  let claims: AccessClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as AccessClaims;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number' || typeof claims.sep !== 'number') {
    return { ok: false, reason: 'malformed' };
  }
  if (nowSec >= claims.exp) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}
