import { parseIp } from './ip.js';
import { addressAllowed, OutboundRefused, resolveOutbound } from './ssrf.js';

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
});
