import { decryptSecret, deriveKey } from '#libs/core';
import { isMaskedValue, MASK, maskedHeaders, maskHeaderValue, openHeaders, sealHeaders, sealStored } from './header-values.js';

const key = deriveKey(Buffer.alloc(32, 7), 'encryption');

describe('header values (issue 28: sealed at rest, shown masked)', () => {
  it('masks a value: a leading scheme word kept, the rest hidden, the last four characters of a secret of 12 or more', () => {
    expect(maskHeaderValue('Bearer sk_live_51HxAbCdEf1a2b')).toBe(`Bearer ${MASK}1a2b`);
    expect(maskHeaderValue('bearer  sk_live_51HxAbCdEf1a2b')).toBe(`bearer ${MASK}1a2b`);
    expect(maskHeaderValue('Basic dXNlcjpwYXNzd29yZA==')).toBe(`Basic ${MASK}ZA==`);
    expect(maskHeaderValue('Token abc')).toBe(`Token ${MASK}`);
    // No scheme word: the whole value is the secret; a first word that is not a scheme is not shown.
    expect(maskHeaderValue('my secret phrase here')).toBe(`${MASK}here`);
    expect(maskHeaderValue('0123456789ab')).toBe(`${MASK}89ab`);
    expect(maskHeaderValue('0123456789a')).toBe(MASK);
    expect(maskHeaderValue('hunter2')).toBe(MASK);
    expect(maskHeaderValue('Bearer')).toBe(MASK);
    expect(maskHeaderValue('')).toBe('');
    expect(isMaskedValue(maskHeaderValue('Bearer x'))).toBe(true);
    expect(isMaskedValue('Bearer x')).toBe(false);
  });

  it('seals each value (AES-GCM) and opens it again for a delivery; the view shows names and masks only', () => {
    const { headers, errors } = sealHeaders([{ key: 'Authorization', value: 'Bearer sk_live_51HxAbCdEf1a2b' }, { key: 'X-Tenant', value: '{{org.id}}' }], [], key);
    expect(errors).toEqual({});
    expect(JSON.stringify(headers)).not.toContain('sk_live');
    expect(decryptSecret(key, headers[0]!.sealed)).toBe('Bearer sk_live_51HxAbCdEf1a2b');
    expect(maskedHeaders(headers)).toEqual([{ key: 'Authorization', value: `Bearer ${MASK}1a2b` }, { key: 'X-Tenant', value: MASK }]);
    expect(openHeaders(headers, (s) => decryptSecret(key, s))).toEqual([{ key: 'Authorization', value: 'Bearer sk_live_51HxAbCdEf1a2b' }, { key: 'X-Tenant', value: '{{org.id}}' }]);
  });

  it('an update: a masked value as shown keeps the stored value (same name, any case); another mask is refused; a real value replaces', () => {
    const stored = sealHeaders([{ key: 'Authorization', value: 'Bearer sk_live_51HxAbCdEf1a2b' }], [], key).headers;
    const kept = sealHeaders([{ key: 'authorization', value: `Bearer ${MASK}1a2b` }, { key: 'X-New', value: 'v' }], stored, key);
    expect(kept.errors).toEqual({});
    expect(kept.headers[0]).toEqual({ ...stored[0], key: 'authorization' });
    const refused = sealHeaders([{ key: 'X-Other', value: `Bearer ${MASK}1a2b` }, { key: 'Authorization', value: `Bearer ${MASK}9999` }], stored, key);
    expect(Object.keys(refused.errors)).toEqual(['headers[0].value', 'headers[1].value']);
    const replaced = sealHeaders([{ key: 'Authorization', value: 'Bearer new-token-0000' }], stored, key);
    expect(decryptSecret(key, replaced.headers[0]!.sealed)).toBe('Bearer new-token-0000');
  });

  it('a header stored in clear (before issue 28) is masked when shown, sent as is, and sealed by sealStored', () => {
    const plain = [{ key: 'Authorization', value: 'Bearer sk_live_51HxAbCdEf1a2b' }];
    expect(maskedHeaders(plain)).toEqual([{ key: 'Authorization', value: `Bearer ${MASK}1a2b` }]);
    expect(openHeaders(plain, () => 'unused')).toEqual(plain);
    const sealed = sealStored(plain, key);
    expect(JSON.stringify(sealed)).not.toContain('sk_live');
    expect(openHeaders(sealed, (s) => decryptSecret(key, s))).toEqual(plain);
    // The list as shown, sent back, keeps a plain stored value too (sealed on the way).
    const kept = sealHeaders(maskedHeaders(plain), plain, key);
    expect(decryptSecret(key, kept.headers[0]!.sealed)).toBe('Bearer sk_live_51HxAbCdEf1a2b');
  });
});
