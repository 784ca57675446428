import { formatIp, parseIp } from '#libs/core';
import { addressAllowed, embeddedIpv4, OutboundRefused, resolveOutbound } from './ssrf.js';

// decisions.md "Running it": production refuses loopback/private targets after DNS resolution.
describe('outbound URL checks (SSRF)', () => {
  const dns = (map: Record<string, string[]>) => async (host: string) => (map[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it.each(['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', 'fd00::1', '::ffff:127.0.0.1', '224.0.0.1'])(
    'refuses %s in production, allows it in development', (addr) => {
      expect(addressAllowed(parseIp(addr)!, 'production')).toBe(false);
      expect(addressAllowed(parseIp(addr)!, 'development')).toBe(true);
    },
  );

  // Issue 21: the cloud metadata endpoints are refused in development too (decisions.md "Outbound requests").
  it.each(['169.254.169.254', '169.254.0.1', '169.254.255.255', '::ffff:169.254.169.254', 'fe80::1', 'febf:ffff::1', 'fd00:ec2::254'])(
    'refuses the metadata address %s in every mode', (addr) => {
      expect(addressAllowed(parseIp(addr)!, 'production')).toBe(false);
      expect(addressAllowed(parseIp(addr)!, 'development')).toBe(false);
    },
  );

  it('refuses a host resolving to a metadata address in development, before any connection (stubbed resolver)', async () => {
    const resolver = dns({ 'meta.example': ['169.254.169.254'], 'v6meta.example': ['fd00:ec2::254'], 'lan.example': ['10.0.0.5'] });
    await expect(resolveOutbound('http://meta.example/latest/meta-data/', 'development', resolver)).rejects.toThrow(/169\.254\.169\.254/);
    await expect(resolveOutbound('http://v6meta.example/', 'development', resolver)).rejects.toBeInstanceOf(OutboundRefused);
    await expect(resolveOutbound('http://169.254.169.254/latest/meta-data/', 'development', resolver)).rejects.toThrow(/not a public address/);
    await expect(resolveOutbound('http://[fe80::1]/', 'development', resolver)).rejects.toBeInstanceOf(OutboundRefused);
    // The rest of development's freedom stays: private and loopback targets (the loopback fakes of the tests).
    await expect(resolveOutbound('http://lan.example/', 'development', resolver)).resolves.toMatchObject({ address: '10.0.0.5' });
    expect(addressAllowed(parseIp('fd00::1')!, 'development')).toBe(true);
  });

  it('allows public unicast addresses', () => {
    for (const addr of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(addressAllowed(parseIp(addr)!, 'production')).toBe(true);
  });

  it('checks every resolved address and pins the first', async () => {
    const resolver = dns({ 'ok.example': ['93.184.216.34'], 'mixed.example': ['93.184.216.34', '10.0.0.5'], 'in.example': ['127.0.0.1'] });
    await expect(resolveOutbound('https://ok.example/hook', 'production', resolver)).resolves.toMatchObject({ address: '93.184.216.34', family: 4 });
    await expect(resolveOutbound('https://mixed.example/hook', 'production', resolver)).rejects.toThrow(/10\.0\.0\.5/);
    await expect(resolveOutbound('https://in.example/hook', 'production', resolver)).rejects.toBeInstanceOf(OutboundRefused);
    await expect(resolveOutbound('http://in.example/hook', 'development', resolver)).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(resolveOutbound('https://nowhere.example/', 'production', resolver)).rejects.toThrow(/does not resolve/);
  });

  it('refuses plain HTTP, other schemes and credentials in production', async () => {
    const resolver = dns({ 'ok.example': ['93.184.216.34'] });
    await expect(resolveOutbound('http://ok.example/', 'production', resolver)).rejects.toThrow(/HTTPS only/);
    await expect(resolveOutbound('file:///etc/passwd', 'development', resolver)).rejects.toThrow(/file/);
    await expect(resolveOutbound('https://u:p@ok.example/', 'production', resolver)).rejects.toThrow(/credentials/);
    await expect(resolveOutbound('https://[::1]/', 'production', resolver)).rejects.toThrow(/not a public address/);
    await expect(resolveOutbound('not a url', 'production', resolver)).rejects.toThrow(/absolute URL/);
  });
  // Issue 27: every IPv6 form that carries an IPv4 address answers to the IPv4 rules (decisions.md
  // "Hostile input (issue 27): outbound"): the metadata rule in every mode, the private rules in production.
  describe('IPv6 forms that embed an IPv4 address', () => {
    const METADATA_FORMS = [
      '::169.254.169.254', '::a9fe:a9fe', // IPv4-compatible ::/96
      '::ffff:0:a9fe:a9fe', '::ffff:0:169.254.169.254', // IPv4-translated ::ffff:0:0:0/96
      '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '64:ff9b:1::a9fe:a9fe', // NAT64, local-use NAT64
      '2002:a9fe:a9fe::1', // 6to4: the v4 in bits 16–48
      '2001:0:a9fe:a9fe::1', // Teredo server (bits 32–64)
      '2001:0:5db8:1234:0:0:5601:5601', // Teredo client: 0x56015601 ^ 0xffffffff = 169.254.169.254
    ];
    it.each(METADATA_FORMS)('refuses %s (the metadata address) in production and in development', (addr) => {
      expect(addressAllowed(parseIp(addr)!, 'production')).toBe(false);
      expect(addressAllowed(parseIp(addr)!, 'development')).toBe(false);
    });

    it.each(['::127.0.0.1', '::7f00:1', '::ffff:0:7f00:1', '::10.0.0.1', '::ffff:0:192.168.1.1', '64:ff9b::7f00:1', '64:ff9b:1::a00:1', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:80ff:fffe'])(
      'refuses %s (a loopback or private IPv4 inside) in production', (addr) => {
        expect(addressAllowed(parseIp(addr)!, 'production')).toBe(false);
      },
    );

    it('finds the IPv4 address each form carries', () => {
      const v4 = (addr: string) => embeddedIpv4(parseIp(addr)!).map(formatIp);
      expect(v4('::127.0.0.1')).toEqual(['127.0.0.1']);
      expect(v4('::ffff:0:a9fe:a9fe')).toEqual(['169.254.169.254']);
      expect(v4('64:ff9b::808:808')).toEqual(['8.8.8.8']);
      expect(v4('64:ff9b:1:2::808:808')).toEqual(['8.8.8.8']);
      expect(v4('2002:c000:204::1')).toEqual(['192.0.2.4']);
      // RFC 4380's example: server 65.54.227.120, client 192.0.2.45 (stored as 3fff:fdd2).
      expect(v4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
      expect(v4('::1')).toEqual([]);
      expect(v4('::')).toEqual([]);
      expect(v4('2606:4700:4700::1111')).toEqual([]);
      expect(v4('8.8.8.8')).toEqual([]);
    });

    it('keeps development\'s freedom for loopback forms, and a public IPv6 address stays allowed', () => {
      expect(addressAllowed(parseIp('::127.0.0.1')!, 'development')).toBe(true);
      expect(addressAllowed(parseIp('2606:4700:4700::1111')!, 'production')).toBe(true);
    });

    it('refuses them at resolveOutbound, as URL literals and from a stubbed resolver, before any connection', async () => {
      const resolver = dns({ 'compat.example': ['::a9fe:a9fe'], 'xlat.example': ['::ffff:0:a9fe:a9fe'], 'nat64.example': ['64:ff9b::a9fe:a9fe'], 'loop.example': ['::127.0.0.1'], 'teredo.example': ['2001:0:4136:e378:8000:63bf:5601:5601'] });
      for (const url of ['http://[::a9fe:a9fe]/latest/meta-data/', 'http://[::ffff:0:a9fe:a9fe]/', 'http://[::169.254.169.254]/', 'http://[2002:a9fe:a9fe::]/', 'http://compat.example/', 'http://xlat.example/', 'http://nat64.example/', 'http://teredo.example/']) {
        await expect(resolveOutbound(url, 'development', resolver)).rejects.toBeInstanceOf(OutboundRefused);
        await expect(resolveOutbound(url.replace('http:', 'https:'), 'production', resolver)).rejects.toThrow(/not a public address/);
      }
      for (const url of ['https://[::127.0.0.1]/', 'https://[::7f00:1]/', 'https://loop.example/', 'https://[::ffff:0:7f00:1]/']) {
        await expect(resolveOutbound(url, 'production', resolver)).rejects.toThrow(/not a public address/);
      }
    });
  });
});
