import { randomBytes } from 'node:crypto';

/** Prefixes of every id the service hands out. */
export const ID_PREFIXES = {
  render: 'rnd',
  template: 'tpl',
  asset: 'ast',
  transcription: 'trs',
  event: 'evt',
  webhook: 'whk',
  delivery: 'dlv',
  key: 'key',
  workspace: 'org',
  user: 'usr',
  ledger: 'led',
  request: 'req',
  otp: 'otp',
  refreshToken: 'rtk',
  sessionFamily: 'fam',
  message: 'msg',
  membership: 'mbr',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID body: 48 bits of milliseconds then 80 random bits, Crockford base32,
 * so ids sort by creation time as plain strings.
 */
export function ulid(now = Date.now()): string {
  let out = '';
  let time = now;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[time % 32] + out;
    time = Math.floor(time / 32);
  }
  const rnd = randomBytes(10);
  // 80 bits → 16 base32 characters, 5 bits at a time.
  let acc = 0n;
  for (const byte of rnd) acc = (acc << 8n) | BigInt(byte);
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = CROCKFORD[Number(acc & 31n)] + tail;
    acc >>= 5n;
  }
  return out + tail;
}

export function newId(kind: IdKind, now?: number): string {
  return `${ID_PREFIXES[kind]}_${ulid(now)}`;
}

const ID_SHAPE = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;

/** True when `value` looks like an id of `kind` (cheap check before a lookup). */
export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${ID_PREFIXES[kind]}_`) && ID_SHAPE.test(value);
}
