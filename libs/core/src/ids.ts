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
  connection: 'con',
  recognition: 'rcg',
  contact: 'ctc',
  workflow: 'wfl',
  workflowRun: 'wfr',
  workflowRow: 'wrw',
  campaign: 'cmp',
  recipient: 'rcp',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Random bytes drawn from a pool: one getrandom call per 409 ids instead of one each. */
let pool = Buffer.alloc(0);
let poolAt = 0;
function random10(): Buffer {
  if (poolAt + 10 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += 10;
  return pool.subarray(poolAt - 10, poolAt);
}

/** 40 bits (five bytes from `at`) as eight base32 characters. */
function encode40(bytes: Buffer, at: number): string {
  let n = bytes[at] * 2 ** 32 + bytes.readUInt32BE(at + 1);
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = CROCKFORD[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return out;
}

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
  const rnd = random10();
  return out + encode40(rnd, 0) + encode40(rnd, 5);
}

export function newId(kind: IdKind, now?: number): string {
  return `${ID_PREFIXES[kind]}_${ulid(now)}`;
}

const ID_SHAPE = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;

/** True when `value` looks like an id of `kind` (cheap check before a lookup). */
export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${ID_PREFIXES[kind]}_`) && ID_SHAPE.test(value);
}
