import { identifies, unchanged } from './url-memory.js';

const v = (etag: string | null, lastModified: string | null, contentLength: string | null = '100') => ({ etag, lastModified, contentLength });

describe('url memory (issue 32: a repeat by URL is a cache hit only when its validators are unchanged)', () => {
  it('a strong ETag or a Last-Modified names the bytes; a weak ETag or a length alone does not', () => {
    expect(identifies(v('"a"', null))).toBe(true);
    expect(identifies(v(null, 'Wed, 25 Nov 2026 10:00:00 GMT'))).toBe(true);
    expect(identifies(v('W/"a"', null))).toBe(false);
    expect(identifies(v(null, null))).toBe(false);
  });

  it('every validator must answer the same: a changed or missing ETag, date or length is no hit', () => {
    const before = v('"a"', 'Wed, 25 Nov 2026 10:00:00 GMT');
    expect(unchanged(before, { ...before })).toBe(true);
    expect(unchanged(before, { ...before, etag: '"b"' })).toBe(false);
    expect(unchanged(before, { ...before, etag: null })).toBe(false);
    expect(unchanged(before, { ...before, lastModified: 'Thu, 26 Nov 2026 10:00:00 GMT' })).toBe(false);
    expect(unchanged(before, { ...before, contentLength: '101' })).toBe(false);
    expect(unchanged(v(null, null), v(null, null))).toBe(false);
  });
});
