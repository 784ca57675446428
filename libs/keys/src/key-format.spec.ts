import { generateKey, KEY_PREFIXES, keyHint, keyMode, looksLikeApiKey } from './key-format.js';

// docs/decisions.md "API keys": pk_live_ / pk_test_ + 192 random bits in base62 (33 characters).
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const body = (key: string) => key.slice(8);
const decode = (b: string) => [...b].reduce((n, c) => n * 62n + BigInt(BASE62.indexOf(c)), 0n);

describe('generated keys', () => {
  const live = Array.from({ length: 2000 }, () => generateKey('live'));

  it('are pk_live_ or pk_test_ then 33 base62 characters, and read back as their mode', () => {
    expect(KEY_PREFIXES).toEqual({ live: 'pk_live_', test: 'pk_test_' });
    const test = generateKey('test');
    expect(test).toMatch(/^pk_test_[0-9A-Za-z]{33}$/);
    expect(keyMode(test)).toBe('test');
    for (const key of live) {
      expect(key).toMatch(/^pk_live_[0-9A-Za-z]{33}$/);
      expect(keyMode(key)).toBe('live');
    }
  });

  it('carry 192 random bits: never repeated, every value below 2^192, the top bits used', () => {
    expect(new Set(live).size).toBe(live.length);
    const values = live.map((k) => decode(body(k)));
    for (const v of values) expect(v < 2n ** 192n).toBe(true);
    // Half of 192-bit random values have the top bit set; 16 or 24 random bytes would never.
    expect(values.filter((v) => v >= 2n ** 191n).length).toBeGreaterThan(800);
    // Small values are padded with leading zeros to 33 characters (about a third of keys start with 0).
    expect(live.some((k) => body(k).startsWith('0'))).toBe(true);
  });

  it('use the whole base62 alphabet', () => {
    const seen = new Set(live.flatMap((k) => [...body(k)]));
    expect([...seen].sort().join('')).toBe([...BASE62].sort().join(''));
  });
});

describe('keyHint', () => {
  it('shows the prefix and the last four characters: pk_live_…abcd', () => {
    expect(keyHint(`pk_live_${'0'.repeat(29)}abcd`)).toBe('pk_live_…abcd');
    expect(keyHint(`pk_test_${'Z'.repeat(29)}9xY1`)).toBe('pk_test_…9xY1');
    const key = generateKey('live');
    expect(keyHint(key)).toBe(`pk_live_\u2026${key.slice(-4)}`);
    expect(keyHint(key)).not.toContain(key.slice(8, -4));
  });
});

describe('keyMode', () => {
  const good = `${'aZ09'.repeat(8)}x`; // 33 characters

  it('reads the mode of a well-formed key', () => {
    expect(keyMode(`pk_live_${good}`)).toBe('live');
    expect(keyMode(`pk_test_${good}`)).toBe('test');
  });

  it.each([
    ['an empty string', ''],
    ['the prefix alone', 'pk_live_'],
    ['an unknown mode', `pk_prod_${good}`],
    ['a secret-key prefix', `sk_live_${good}`],
    ['an upper-case prefix', `PK_LIVE_${good}`],
    ['no underscore after the mode', `pk_live${good}`],
    ['32 characters', `pk_live_${good.slice(1)}`],
    ['34 characters', `pk_live_${good}a`],
    ['a dash', `pk_live_${good.slice(1)}-`],
    ['an underscore', `pk_live_${good.slice(1)}_`],
    ['base64 characters', `pk_live_${good.slice(2)}+/`],
    ['a non-ASCII letter', `pk_live_${good.slice(1)}é`],
    ['a leading space', ` pk_live_${good}`],
    ['a trailing space', `pk_live_${good} `],
    ['a trailing newline', `pk_live_${good}\n`],
    ['a space inside', `pk_live_${good.slice(0, 16)} ${good.slice(17)}`],
    ['two keys', `pk_live_${good}pk_live_${good}`],
  ])('refuses %s', (_, raw) => {
    expect(keyMode(raw)).toBeNull();
  });
});

describe('looksLikeApiKey', () => {
  it('takes any bearer value starting pk_live_ or pk_test_ for a key (a bad one is then INVALID_API_KEY, not a session token)', () => {
    expect(looksLikeApiKey(generateKey('live'))).toBe(true);
    expect(looksLikeApiKey(generateKey('test'))).toBe(true);
    expect(looksLikeApiKey('pk_live_')).toBe(true);
    expect(looksLikeApiKey('pk_test_short')).toBe(true);
  });

  it('leaves everything else to the session path', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1In0.sig';
    for (const value of [jwt, '', 'pk_live', 'pk_prod_abc', 'PK_LIVE_abc', ' pk_live_abc', 'sk_live_abc', 'rt_abc']) {
      expect(looksLikeApiKey(value)).toBe(false);
    }
  });
});
