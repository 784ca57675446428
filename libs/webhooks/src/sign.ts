import { createHmac } from 'node:crypto';
import { safeEqual } from '#libs/core';
import { TemplateRefused } from './template.js';

/** Seconds a signature's timestamp may be away from now (§6, §8). */
export const SIGNATURE_TOLERANCE_SEC = 300;

/**
 * `sha256=` + hex HMAC-SHA256 keyed with the secret (the whole `whsec_…` text, as UTF-8) over
 * `<timestamp>.<raw body bytes>` (§6). A delivery without a body signs the empty string.
 */
export function signPayload(secret: string, timestamp: number | string, body: Buffer | string): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `sha256=${mac.digest('hex')}`;
}

/**
 * The request target of a delivery's URL: its path and query as the request line carries them (the
 * URL parsed as the sender parses it; no fragment). A URL its variables made unparseable is refused.
 */
export function requestTarget(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TemplateRefused('The URL is not a valid URL once its variables are resolved');
  }
  return `${u.pathname}${u.search}`;
}

/**
 * `X-Service-Signature-V2` (decisions.md "Stored secrets and limits (issue 28)"): `sha256=` + hex
 * HMAC-SHA256 over `<timestamp>.<METHOD>.<path?query>.<raw body bytes>`, so the method, the path
 * with its query (which carries the event on a GET) and the body are all covered.
 */
export function signRequest(secret: string, timestamp: number | string, method: string, target: string, body: Buffer | string): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.${method}.${target}.`);
  mac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `sha256=${mac.digest('hex')}`;
}

/**
 * The two signatures of a delivery. `X-Service-Signature` is the contract's `<timestamp>.<raw body>`
 * for POST, PUT and PATCH; a GET has no body, so the contract's string would cover the timestamp only
 * and let the query be changed: a GET's `X-Service-Signature` carries the V2 signature instead.
 */
export function deliverySignatures(secret: string, timestamp: number, method: string, url: string, body: Buffer | null): { v1: string; v2: string } {
  const v2 = signRequest(secret, timestamp, method, requestTarget(url), body ?? '');
  return { v1: method === 'GET' ? v2 : signPayload(secret, timestamp, body ?? ''), v2 };
}

function freshTimestamp(timestamp: number | string | undefined, nowSec: number, toleranceSec: number): boolean {
  if (timestamp === undefined) return false;
  const ts = typeof timestamp === 'number' ? timestamp : /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  return Number.isSafeInteger(ts) && Math.abs(nowSec - ts) <= toleranceSec;
}

/**
 * The receiver's check, as §6 asks for it: the raw body, a constant-time comparison, and a timestamp
 * no more than `toleranceSec` from now in either direction (replay protection).
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  timestamp: number | string | undefined,
  body: Buffer | string,
  nowSec: number,
  toleranceSec = SIGNATURE_TOLERANCE_SEC,
): boolean {
  if (header === undefined || !freshTimestamp(timestamp, nowSec, toleranceSec)) return false;
  return safeEqual(signPayload(secret, timestamp!, body), header.trim());
}

/** The receiver's check of `X-Service-Signature-V2` (and of a GET's `X-Service-Signature`): `target` is the path and query as received. */
export function verifyRequestSignature(
  secret: string,
  header: string | undefined,
  timestamp: number | string | undefined,
  request: { method: string; target: string; body: Buffer | string },
  nowSec: number,
  toleranceSec = SIGNATURE_TOLERANCE_SEC,
): boolean {
  if (header === undefined || !freshTimestamp(timestamp, nowSec, toleranceSec)) return false;
  return safeEqual(signRequest(secret, timestamp!, request.method, request.target, request.body), header.trim());
}
