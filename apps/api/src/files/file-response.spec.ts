import { entityTag, isNotModified, parseRange } from './file-response.js';

describe('Range header (RFC 9110 §14) for GET /files/*', () => {
  it('serves one range in each of its three forms, clamped to the file', () => {
    expect(parseRange('bytes=0-99', 1000)).toEqual({ kind: 'partial', start: 0, end: 99 });
    expect(parseRange('bytes=900-', 1000)).toEqual({ kind: 'partial', start: 900, end: 999 });
    expect(parseRange('bytes=-100', 1000)).toEqual({ kind: 'partial', start: 900, end: 999 });
    expect(parseRange('bytes=990-5000', 1000)).toEqual({ kind: 'partial', start: 990, end: 999 });
    expect(parseRange('bytes=-5000', 1000)).toEqual({ kind: 'partial', start: 0, end: 999 });
    expect(parseRange('Bytes = 5-5', 1000)).toEqual({ kind: 'partial', start: 5, end: 5 });
  });

  it('answers unsatisfiable when no byte of the file is asked for', () => {
    expect(parseRange('bytes=1000-', 1000)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=1000-2000', 1000)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 1000)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it('serves the whole file for what it may ignore: other units, malformed, reversed, several ranges', () => {
    for (const h of [undefined, '', 'items=0-1', 'bytes=', 'bytes=a-b', 'bytes=5-1', 'bytes=0-1,5-6', 'bytes=--1', 'bytes=1-2-3']) {
      expect([h, parseRange(h, 1000)]).toEqual([h, { kind: 'full' }]);
    }
  });
});

describe('conditional requests for GET /files/*', () => {
  const modifiedAt = new Date('2026-01-02T03:04:05.678Z');
  const etag = entityTag({ sizeBytes: 1000, modifiedAt });

  it('match If-None-Match weakly, in a list, or *', () => {
    expect(isNotModified({ 'if-none-match': etag }, etag, modifiedAt)).toBe(true);
    expect(isNotModified({ 'if-none-match': `"x", W/${etag}` }, etag, modifiedAt)).toBe(true);
    expect(isNotModified({ 'if-none-match': '*' }, etag, modifiedAt)).toBe(true);
    expect(isNotModified({ 'if-none-match': '"other"' }, etag, modifiedAt)).toBe(false);
    expect(entityTag({ sizeBytes: 1001, modifiedAt })).not.toBe(etag);
  });

  it('use If-Modified-Since only without If-None-Match, to the second', () => {
    expect(isNotModified({ 'if-modified-since': modifiedAt.toUTCString() }, etag, modifiedAt)).toBe(true);
    expect(isNotModified({ 'if-modified-since': new Date(modifiedAt.getTime() - 2000).toUTCString() }, etag, modifiedAt)).toBe(false);
    expect(isNotModified({ 'if-none-match': '"other"', 'if-modified-since': modifiedAt.toUTCString() }, etag, modifiedAt)).toBe(false);
    expect(isNotModified({ 'if-modified-since': 'yesterday' }, etag, modifiedAt)).toBe(false);
  });
});
