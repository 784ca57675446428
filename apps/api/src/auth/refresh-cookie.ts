import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_LIMITS, type SessionTokens } from '#libs/auth';
import { ApiError, validationFailed, type AppConfig } from '#libs/core';

/**
 * The dashboard's refresh token as a cookie scripts cannot read (decisions.md "Sessions (dashboard)"):
 * a request with `X-Service-Client: dashboard` gets the refresh token of verify-otp and refresh as an
 * HttpOnly, SameSite=Strict cookie on the auth routes' path (Secure except in development over plain
 * http) instead of in the body, and refresh reads it back only with that header (a cross-site form
 * cannot send a custom header, and no CORS is granted).
 */
export const REFRESH_COOKIE = 'service_refresh';
export const CLIENT_HEADER = 'x-service-client';

/** True when the request asks for (or presents) the refresh cookie. */
export function wantsCookie(req: FastifyRequest): boolean {
  return req.headers[CLIENT_HEADER] === 'dashboard';
}

/** The refresh cookie's value, or null. */
export function refreshCookie(req: FastifyRequest): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === REFRESH_COOKIE) return part.slice(at + 1).trim() || null;
  }
  return null;
}

/** Sets the refresh cookie (a token) or clears it (null). */
export function setRefreshCookie(req: FastifyRequest, reply: FastifyReply, config: Pick<AppConfig, 'env' | 'prefix'>, token: string | null): void {
  const path = `/${config.prefix}/auth`.replace(/\/+/g, '/');
  const secure = config.env !== 'development' || req.protocol === 'https';
  const attrs = [
    // Refresh tokens are base64url: a cookie value as they are.
    `${REFRESH_COOKIE}=${token ?? ''}`,
    `Path=${path}`,
    `Max-Age=${token ? SESSION_LIMITS.refreshTtlSec : 0}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ];
  reply.header('set-cookie', attrs.join('; '));
}

/**
 * The refresh token a refresh request presents: the body's, else (with X-Service-Client: dashboard)
 * the cookie's (401 INVALID_REFRESH_TOKEN when there is none); neither: 422 at `refreshToken`.
 */
export function presentedRefreshToken(req: FastifyRequest, fromBody: string | undefined): string {
  if (fromBody !== undefined) return fromBody;
  if (!wantsCookie(req)) throw validationFailed({ refreshToken: ['is required (or send X-Service-Client: dashboard with the refresh cookie)'] });
  const cookie = refreshCookie(req);
  if (!cookie) throw new ApiError('INVALID_REFRESH_TOKEN', 'No refresh cookie was sent; sign in again');
  return cookie;
}

/** The tokens as the answer carries them: the refresh token moves to the cookie when the client asks for it. */
export function handOut(req: FastifyRequest, reply: FastifyReply, config: Pick<AppConfig, 'env' | 'prefix'>, tokens: SessionTokens): { token: string; refreshToken?: string } {
  if (!wantsCookie(req)) return tokens;
  setRefreshCookie(req, reply, config, tokens.refreshToken);
  return { token: tokens.token };
}
