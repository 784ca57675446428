import { cidrContains, clientAddress, ipAllowed, parseCidr, parseCidrList, parseIp } from './ip.js';

// Contract §5.5: IP allowlists of plain addresses and CIDR blocks.
describe('IP parsing and CIDR matching', () => {
  it('matches IPv4 addresses and blocks', () => {
    const rules = parseCidrList('203.0.113.7, 10.0.0.0/8');
    expect(ipAllowed(rules, parseIp('203.0.113.7'))).toBe(true);
    expect(ipAllowed(rules, parseIp('203.0.113.8'))).toBe(false);
    expect(ipAllowed(rules, parseIp('10.255.1.2'))).toBe(true);
    expect(ipAllowed(rules, parseIp('11.0.0.1'))).toBe(false);
  });

  it('matches IPv6 addresses and blocks, in any spelling', () => {
    const rules = parseCidrList(['2001:db8::/32', '::1']);
    expect(ipAllowed(rules, parseIp('2001:0db8:0000:0000:0000:0000:0000:0001'))).toBe(true);
    expect(ipAllowed(rules, parseIp('2001:db9::1'))).toBe(false);
    expect(ipAllowed(rules, parseIp('0:0:0:0:0:0:0:1'))).toBe(true);
    expect(ipAllowed(rules, parseIp('[::1]'))).toBe(true);
  });

  it('treats IPv4-mapped IPv6 as IPv4, on either side', () => {
    expect(parseIp('::ffff:192.0.2.1')).toEqual(parseIp('192.0.2.1'));
    expect(ipAllowed(parseCidrList('192.0.2.0/24'), parseIp('::ffff:192.0.2.99'))).toBe(true);
    expect(ipAllowed(parseCidrList('::ffff:192.0.2.0/120'), parseIp('192.0.2.5'))).toBe(true);
    expect(parseCidr('::ffff:192.0.2.0/120').text).toBe('192.0.2.0/24');
  });

  it('never matches across families and honours /0', () => {
    expect(cidrContains(parseCidr('0.0.0.0/0'), parseIp('8.8.8.8')!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0'), parseIp('2001:db8::1')!)).toBe(false);
    expect(cidrContains(parseCidr('::/0'), parseIp('2001:db8::1')!)).toBe(true);
  });

  it('normalises blocks and refuses bad entries naming them', () => {
    expect(parseCidr('10.1.2.3/8').text).toBe('10.0.0.0/8');
    expect(() => parseCidr('10.0.0.0/33')).toThrow(/10.0.0.0\/33/);
    expect(() => parseCidr('not-an-ip')).toThrow(/not-an-ip/);
    expect(() => parseCidr('1.2.3.4/8/9')).toThrow();
    expect(parseIp('1.2.3.256')).toBeNull();
  });

  it('takes the client address from the socket unless the peer is a trusted proxy', () => {
    const trusted = parseCidrList('10.0.0.0/8');
    expect(clientAddress('198.51.100.1', '203.0.113.9', [])).toEqual(parseIp('198.51.100.1'));
    expect(clientAddress('198.51.100.1', '203.0.113.9', trusted)).toEqual(parseIp('198.51.100.1'));
    expect(clientAddress('10.0.0.2', '203.0.113.9', trusted)).toEqual(parseIp('203.0.113.9'));
    // A client-supplied hop left of an untrusted one is not believed.
    expect(clientAddress('10.0.0.2', '1.1.1.1, 203.0.113.9, 10.0.0.3', trusted)).toEqual(parseIp('203.0.113.9'));
    expect(clientAddress('::ffff:10.0.0.2', '203.0.113.9', trusted)).toEqual(parseIp('203.0.113.9'));
  });
});
