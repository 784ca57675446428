import { randomBytes } from 'node:crypto';
import type { KeyMode } from '#libs/core';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 24 random bytes (192 bits) in base62 always fit 33 characters. */
const BODY_LENGTH = 33;

export const KEY_PREFIXES: Record<KeyMode, string> = { live: 'pk_live_', test: 'pk_test_' };

/** A new secret key: `pk_live_` or `pk_test_` then 192 random bits in base62. */
export function generateKey(mode: KeyMode): string {
  let n = BigInt(`0x${randomBytes(24).toString('hex')}`);
  let body = '';
  while (n > 0n) {
    body = BASE62[Number(n % 62n)] + body;
    n /= 62n;
  }
  return KEY_PREFIXES[mode] + body.padStart(BODY_LENGTH, '0');
}

const KEY_SHAPE = /^pk_(live|test)_[0-9A-Za-z]{33}$/;

/** The mode a well-formed key claims, or null for anything else (checked before any lookup). */
export function keyMode(raw: string): KeyMode | null {
  const m = KEY_SHAPE.exec(raw);
  return m ? (m[1] as KeyMode) : null;
}

/** `pk_live_…wxyz`, safe to show in lists and logs. */
export function keyHint(raw: string): string {
  return `${raw.slice(0, 8)}…${raw.slice(-4)}`;
}

/** True when an Authorization bearer value is meant as an API key rather than a session token (decisions.md). */
export function looksLikeApiKey(value: string): boolean {
  return value.startsWith('pk_live_') || value.startsWith('pk_test_');
}
