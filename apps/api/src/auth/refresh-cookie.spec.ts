import type { FastifyReply, FastifyRequest } from 'fastify';
import { refreshCookie, setRefreshCookie } from './refresh-cookie.js';

// decisions.md "Sessions (dashboard)": the refresh cookie's attributes.
describe('the refresh cookie', () => {
  const set = (env: 'development' | 'production', protocol: 'http' | 'https', token: string | null, prefix = 'api') => {
    const headers: Record<string, string> = {};
    const reply = { header: (k: string, v: string) => (headers[k] = v) } as unknown as FastifyReply;
    setRefreshCookie({ protocol } as FastifyRequest, reply, { env, prefix }, token);
    return headers['set-cookie'];
  };

  it('is Secure in production (behind a proxy the API sees http) and in development over https, not in development over http', () => {
    expect(set('production', 'http', 'rt_a')).toBe('service_refresh=rt_a; Path=/api/auth; Max-Age=5184000; HttpOnly; SameSite=Strict; Secure');
    expect(set('development', 'https', 'rt_a')).toContain('; Secure');
    expect(set('development', 'http', 'rt_a')).not.toContain('Secure');
  });

  it('lives on the auth routes of the configured prefix; clearing it expires it', () => {
    expect(set('production', 'https', 'rt_a', 'v2/x')).toContain('Path=/v2/x/auth;');
    expect(set('production', 'https', 'rt_a', '')).toContain('Path=/auth;');
    expect(set('production', 'https', null)).toMatch(/^service_refresh=; Path=\/api\/auth; Max-Age=0;/);
  });

  it('is read from among other cookies; absent or empty is null', () => {
    const read = (cookie?: string) => refreshCookie({ headers: { cookie } } as FastifyRequest);
    expect(read('a=1; service_refresh=rt_x; b=2')).toBe('rt_x');
    expect(read('xservice_refresh=rt_x')).toBeNull();
    expect(read('service_refresh=')).toBeNull();
    expect(read(undefined)).toBeNull();
    // Never decoded: a stray % is just a wrong token (401), not a crash.
    expect(read('service_refresh=%E0%A4%A')).toBe('%E0%A4%A');
  });
});
