import { createHmac } from 'node:crypto';
import { ApiError, safeEqual } from '#libs/core';

export interface AccessClaims {
  sub: string;
  /** The user's session epoch at issue time (sign-out bumps it). */
  sep: number;
  /** The sign-in (refresh-token family) that issued it: revoking the family ends it (issue 28). */
  fam: string;
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
  let claims: Partial<AccessClaims> | null;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<AccessClaims> | null;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!isClaims(claims)) return { ok: false, reason: 'malformed' };
  if (nowSec >= claims.exp) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}

function isClaims(c: Partial<AccessClaims> | null): c is AccessClaims {
  return typeof c === 'object' && c !== null && typeof c.sub === 'string' && typeof c.sep === 'number' && typeof c.fam === 'string'
    && typeof c.iat === 'number' && typeof c.exp === 'number' && typeof c.jti === 'string';
}

/** The claims of a valid access token; 401 TOKEN_EXPIRED when it has expired, INVALID_TOKEN when forged or malformed. */
export function readAccessToken(key: Buffer, token: string, nowSec?: number): AccessClaims {
  const result = verifyJwt(key, token, nowSec);
  if (result.ok) return result.claims;
  throw result.reason === 'expired'
    ? new ApiError('TOKEN_EXPIRED', 'The session token has expired; refresh it')
    : new ApiError('INVALID_TOKEN', 'The session token is not valid');
}
