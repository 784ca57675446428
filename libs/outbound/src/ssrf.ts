import { lookup } from 'node:dns/promises';
import { cidrContains, parseCidr, parseIp, type CidrRule, type ParsedIp } from '#libs/core';

/**
 * The IPv4 addresses an IPv6 address carries for a translator or tunnel to reach, by the range it is in:
 * IPv4-compatible `::a.b.c.d` (::/96, deprecated, but the kernel still routes some of it), IPv4-translated
 * `::ffff:0:a.b.c.d` (::ffff:0:0:0/96), NAT64 `64:ff9b::a.b.c.d` (64:ff9b::/96) and its local-use
 * 64:ff9b:1::/48 (the v4 in the last 32 bits), 6to4 `2002:AABB:CCDD::` (2002::/16, the v4 in bits
 * 16–48) and Teredo `2001:0:SSSS:SSSS:…:CCCC:CCCC` (2001::/32: the server in bits 32–64, the client
 * the last 32 bits XORed with 0xffffffff). The mapped form ::ffff:a.b.c.d is folded to IPv4 by
 * parseIp already. `::` and `::1` are not IPv4-compatible addresses (RFC 4291) and carry none.
 */
export function embeddedIpv4(ip: ParsedIp): ParsedIp[] {
  if (ip.version !== 6) return [];
  const v = ip.value;
  const low32 = v & 0xffffffffn;
  const v4 = (value: bigint): ParsedIp => ({ version: 4, value });
  if (v >> 32n === 0n) return low32 > 1n ? [v4(low32)] : [];
  if (v >> 32n === 0xffff0000n) return [v4(low32)];
  if (v >> 32n === 0x64ff9b0000000000000000n) return [v4(low32)];
  if (v >> 80n === 0x64ff9b0001n) return [v4(low32)];
  if (v >> 112n === 0x2002n) return [v4((v >> 80n) & 0xffffffffn)];
  if (v >> 96n === 0x20010000n) return [v4((v >> 64n) & 0xffffffffn), v4(low32 ^ 0xffffffffn)];
  return [];
}

/**
 * Address ranges that outbound requests (webhooks, media downloads, provider calls) must never reach
 * in production: loopback, private, link-local, CGNAT, multicast, reserved, documentation and the
 * IPv6 equivalents (IPv4-mapped addresses are folded to IPv4 before the check; the other IPv6 forms that
 * carry an IPv4 address are refused here whole, and their IPv4 address is checked too: addressAllowed).
 */
const BLOCKED: CidrRule[] = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24',
  '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4', '255.255.255.255/32',
  '::/96', '::ffff:0:0:0/96', '::1/128', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/23', '2001:db8::/32',
  '2002::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8',
].map(parseCidr);

/**
 * Cloud metadata endpoints (link-local 169.254.0.0/16 with 169.254.169.254, IPv6 link-local and AWS's
 * fd00:ec2::254): refused in every mode, development included (decisions.md "Outbound requests").
 */
const METADATA: CidrRule[] = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128'].map(parseCidr);

/** Loopback addresses: allowed in development (decisions.md), refused in production. */
const LOOPBACK: CidrRule[] = ['127.0.0.0/8', '::1/128'].map(parseCidr);

export type OutboundPolicy = 'development' | 'production';

/** True when an address may be the target of an outbound request under `policy` (development: all but the metadata ranges). */
export function addressAllowed(ip: ParsedIp, policy: OutboundPolicy): boolean {
  // An IPv6 address that carries an IPv4 one (compatible, translated, NAT64, 6to4, Teredo: embeddedIpv4)
  // answers to the IPv4 rules too, so `::a9fe:a9fe` is the metadata address in development as well.
  return [ip, ...embeddedIpv4(ip)].every((a) => {
    if (METADATA.some((r) => cidrContains(r, a))) return false;
    if (policy === 'development') return true;
    return !BLOCKED.some((r) => cidrContains(r, a));
  });
}

export function isLoopback(ip: ParsedIp): boolean {
  return [ip, ...embeddedIpv4(ip)].some((a) => LOOPBACK.some((r) => cidrContains(r, a)));
}

export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

export interface ResolvedTarget {
  url: URL;
  /** The checked address the connection must use (pinned: no second DNS lookup). */
  address: string;
  family: 4 | 6;
}

/**
 * Checks an outbound URL: scheme (https only in production), then every address its host resolves
 * to. Returns the first allowed address so the caller can pin the connection to it; a host with any
 * refused address is refused (DNS rebinding cannot slip a private address in beside a public one).
 */
export async function resolveOutbound(
  raw: string,
  policy: OutboundPolicy,
  resolve: (host: string) => Promise<{ address: string; family: number }[]> = (host) => lookup(host, { all: true, verbatim: true }),
): Promise<ResolvedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused(`"${raw}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && !(policy === 'development' && url.protocol === 'http:')) {
    throw new OutboundRefused(`${url.protocol.replace(':', '')} URLs are refused${policy === 'production' ? ' in production (HTTPS only)' : ''}`);
  }
  if (url.username || url.password) throw new OutboundRefused('URLs with credentials are refused');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = parseIp(host);
  const addresses = literal ? [{ address: host, family: literal.version }] : await resolve(host).catch(() => []);
  if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`);
  for (const a of addresses) {
    const ip = parseIp(a.address);
    if (!ip || !addressAllowed(ip, policy)) throw new OutboundRefused(`${host} resolves to ${a.address}, which is not a public address`);
  }
  const first = addresses[0];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
