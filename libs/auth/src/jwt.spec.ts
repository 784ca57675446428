import { createHmac } from 'node:crypto';
import { ApiError } from '#libs/core';
import { readAccessToken, signJwt, verifyJwt, type AccessClaims } from './jwt.js';

// docs/decisions.md "Sessions": HS256 only, claims sub, sep, iat, exp, jti; 401 TOKEN_EXPIRED / INVALID_TOKEN.
const key = Buffer.alloc(32, 7);
const now = 1_800_000_000;
const claims: AccessClaims = { sub: 'user_01JABCDEF', sep: 3, fam: 'sfam_01JABCDEF', iat: now - 60, exp: now + 3600, jti: 'AbCdEfGhIjKl' };

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
/** A token with any header and payload, signed with HMAC-SHA256 over them as sent (as an attacker holding the key would). */
function craft(header: unknown, payload: unknown, k = key, alg: 'sha256' | 'sha512' = 'sha256'): string {
  const signed = `${b64(header)}.${b64(payload)}`;
  return `${signed}.${createHmac(alg, k).update(signed).digest('base64url')}`;
}

/** The error readAccessToken answers with; fails the test on a success or on anything but an ApiError. */
function refusal(token: string, at = now): string {
  try {
    readAccessToken(key, token, at);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    return (err as ApiError).code;
  }
  throw new Error('The token was accepted');
}

describe('access tokens', () => {
  it('carry sub, sep, iat, exp and jti in an HS256 JWT, and read back as signed', () => {
    const token = signJwt(key, claims);
    const [header, payload] = token.split('.').map((p) => Buffer.from(p, 'base64url').toString('utf8'));
    expect(JSON.parse(header)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(payload)).toEqual(claims);
    expect(token.split('.')[2]).toBe(createHmac('sha256', key).update(token.split('.').slice(0, 2).join('.')).digest('base64url'));
    expect(verifyJwt(key, token, now)).toEqual({ ok: true, claims });
    expect(readAccessToken(key, token, now)).toEqual(claims);
  });

  it('expire at exp: TOKEN_EXPIRED, distinct from INVALID_TOKEN', () => {
    const token = signJwt(key, claims);
    expect(readAccessToken(key, token, claims.exp - 1)).toEqual(claims);
    expect(verifyJwt(key, token, claims.exp)).toEqual({ ok: false, reason: 'expired' });
    expect(refusal(token, claims.exp)).toBe('TOKEN_EXPIRED');
    expect(refusal(token, claims.exp + 86_400)).toBe('TOKEN_EXPIRED');
  });

  it('an expired token that is also forged is INVALID_TOKEN (the signature is checked first)', () => {
    const forged = signJwt(Buffer.alloc(32, 8), { ...claims, exp: now - 10 });
    expect(refusal(forged)).toBe('INVALID_TOKEN');
  });

  it('are refused when signed with another key', () => {
    expect(verifyJwt(key, signJwt(Buffer.alloc(32, 8), claims), now)).toEqual({ ok: false, reason: 'signature' });
    expect(refusal(signJwt(Buffer.alloc(31, 7), claims))).toBe('INVALID_TOKEN');
  });

  it('are refused when the payload or the signature was changed', () => {
    const [header, payload, sig] = signJwt(key, claims).split('.');
    const other = b64({ ...claims, sub: 'user_01JOTHERONE' });
    const longer = b64({ ...claims, exp: claims.exp + 86_400 * 365 });
    const flipped = sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A');
    for (const token of [
      `${header}.${other}.${sig}`, `${header}.${longer}.${sig}`, `${header}.${payload}.${flipped}`,
      `${header}.${payload}.${sig.slice(0, -1)}`, `${header}.${payload}.${sig}=`, `${header}.${payload}.`,
      `${header}.${payload}.${Buffer.from(sig, 'base64url').toString('base64')}x`,
    ]) {
      expect(verifyJwt(key, token, now)).toEqual({ ok: false, reason: 'signature' });
      expect(refusal(token)).toBe('INVALID_TOKEN');
    }
  });

  it.each([
    ['none, unsigned', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`],
    ['none, with the HS256 signature', craft({ alg: 'none', typ: 'JWT' }, claims)],
    ['HS512', craft({ alg: 'HS512', typ: 'JWT' }, claims, key, 'sha512')],
    ['HS512 with an HS256 signature', craft({ alg: 'HS512', typ: 'JWT' }, claims)],
    ['RS256', craft({ alg: 'RS256', typ: 'JWT' }, claims)],
    ['hs256 in lower case', craft({ alg: 'hs256', typ: 'JWT' }, claims)],
    ['no alg', craft({ typ: 'JWT' }, claims)],
  ])('are refused when the header says %s', (_, token) => {
    expect(verifyJwt(key, token, now)).toMatchObject({ ok: false });
    expect(refusal(token)).toBe('INVALID_TOKEN');
  });

  it.each([
    ['an empty string', ''],
    ['one segment', 'abc'],
    ['two segments', `${b64({ alg: 'HS256' })}.${b64(claims)}`],
    ['four segments', `${signJwt(key, claims)}.x`],
    ['a header that is not base64url JSON', `%%%.${b64(claims)}.sig`],
    ['a header that is JSON null', craft('null', claims)],
    ['a header that is a JSON string', craft('"HS256"', claims)],
    ['a payload that is not JSON, correctly signed', craft({ alg: 'HS256', typ: 'JWT' }, '{"sub":')],
    ['a payload that is JSON null, correctly signed', craft({ alg: 'HS256', typ: 'JWT' }, 'null')],
    ['a payload that is a JSON number, correctly signed', craft({ alg: 'HS256', typ: 'JWT' }, '42')],
    ['exp as a string, correctly signed', craft({ alg: 'HS256', typ: 'JWT' }, { ...claims, exp: String(claims.exp) })],
    ...(['sub', 'sep', 'iat', 'exp', 'jti'] as const).map((c) => {
      const { [c]: _, ...rest } = claims;
      return [`no ${c} claim, correctly signed`, craft({ alg: 'HS256', typ: 'JWT' }, rest)];
    }),
  ])('malformed, %s: INVALID_TOKEN and nothing else thrown', (_, token) => {
    expect(() => verifyJwt(key, token, now)).not.toThrow();
    expect(verifyJwt(key, token, now).ok).toBe(false);
    expect(refusal(token)).toBe('INVALID_TOKEN');
  });
});
