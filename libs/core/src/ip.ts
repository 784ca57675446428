import { isIPv4, isIPv6 } from 'node:net';

/** An address as a number: IPv4 in 32 bits, IPv6 in 128; IPv4-mapped IPv6 becomes IPv4. */
export interface ParsedIp {
  version: 4 | 6;
  value: bigint;
}

export interface CidrRule {
  version: 4 | 6;
  network: bigint;
  prefix: number;
  /** The rule as written, normalised (for display). */
  text: string;
}

function parseV4(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseV6(text: string): bigint {
  let head = text;
  let v4tail: bigint | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    v4tail = parseV4(text.slice(lastColon + 1));
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const l = left ? left.split(':') : [];
  const r = right === undefined ? [] : right ? right.split(':') : [];
  const missing = 8 - l.length - r.length;
  const groups = right === undefined ? l : [...l, ...Array<string>(missing).fill('0'), ...r];
  let value = groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  if (v4tail !== null) value = (value & ~0xffffffffn) | v4tail;
  return value;
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** Parses an address; strips a zone id and brackets; folds ::ffff:a.b.c.d to a.b.c.d. */
export function parseIp(raw: string): ParsedIp | null {
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (isIPv4(text)) return { version: 4, value: parseV4(text) };
  if (!isIPv6(text)) return null;
  const value = parseV6(text);
  if (value >> 32n === 0xffffn && (value & ~0xffffffffn) === MAPPED_PREFIX) {
    return { version: 4, value: value & 0xffffffffn };
  }
  return { version: 6, value };
}

export function formatIp(ip: ParsedIp): string {
  if (ip.version === 4) {
    const v = Number(ip.value);
    return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
  }
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((ip.value >> BigInt(i * 16)) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** Parses `1.2.3.4`, `10.0.0.0/8`, `2001:db8::/32`, `::ffff:10.0.0.0/104`. Throws naming the bad entry. */
export function parseCidr(raw: string): CidrRule {
  const [addr, bits, extra] = raw.trim().split('/');
  const ip = parseIp(addr ?? '');
  if (!ip || extra !== undefined) throw new Error(`"${raw}" is not an IP address or CIDR block`);
  const wasMapped = ip.version === 4 && isIPv6(addr.replace(/^\[|\]$/g, ''));
  const width = ip.version === 4 ? 32 : 128;
  let prefix = width;
  if (bits !== undefined) {
    if (!/^\d{1,3}$/.test(bits)) throw new Error(`"${raw}" has a bad prefix length`);
    prefix = Number(bits);
    if (wasMapped) prefix -= 96;
    if (prefix < 0 || prefix > width) throw new Error(`"${raw}" has a prefix length outside 0-${wasMapped ? 128 : width}`);
  }
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(width - prefix);
  const network = ip.value & mask;
  return { version: ip.version, network, prefix, text: `${formatIp({ version: ip.version, value: network })}/${prefix}` };
}

export function parseCidrList(raw: string | readonly string[]): CidrRule[] {
  const items = typeof raw === 'string' ? raw.split(',') : raw;
  return items.map((s) => s.trim()).filter(Boolean).map(parseCidr);
}

export function cidrContains(rule: CidrRule, ip: ParsedIp): boolean {
  if (rule.version !== ip.version) return false;
  const width = ip.version === 4 ? 32 : 128;
  if (rule.prefix === 0) return true;
  const shift = BigInt(width - rule.prefix);
  return ip.value >> shift === rule.network >> shift;
}

export function ipAllowed(rules: readonly CidrRule[], ip: ParsedIp | null): boolean {
  return ip !== null && rules.some((r) => cidrContains(r, ip));
}

/**
 * The caller's address: the socket's peer, unless that peer is a trusted proxy, in which case
 * X-Forwarded-For is walked from the right, skipping trusted proxies, to the first untrusted hop.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: readonly CidrRule[],
): ParsedIp | null {
  const peer = parseIp(socketAddress ?? '');
  if (!peer || trusted.length === 0 || !ipAllowed(trusted, peer)) return peer;
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '');
  const hops = header.split(',').map((s) => s.trim()).filter(Boolean);
  let current = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseIp(hops[i]);
    if (!hop) return current;
    current = hop;
    if (!ipAllowed(trusted, hop)) return hop;
  }
  return current;
}
