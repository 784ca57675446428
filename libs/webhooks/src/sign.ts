import { createHmac } from 'node:crypto';
import { safeEqual } from '#libs/core';

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
  if (header === undefined || timestamp === undefined) return false;
  const ts = typeof timestamp === 'number' ? timestamp : /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!Number.isSafeInteger(ts) || Math.abs(nowSec - ts) > toleranceSec) return false;
  return safeEqual(signPayload(secret, timestamp, body), header.trim());
}
