import { InvalidStorageKeyError, isValidKey, libraryKey, outputKey, renderPrefix } from './keys.js';

describe('storage keys', () => {
  it('makes output keys in the render folder with 128 random bits, not derivable from the render id', () => {
    const a = outputKey('rnd_01JD0000000000000000000000', 'png');
    const b = outputKey('rnd_01JD0000000000000000000000', '.MP4');
    expect(a).toMatch(/^r\/rnd_01JD0000000000000000000000\/[A-Za-z0-9_-]{22}\.png$/);
    expect(b).toMatch(/^r\/rnd_01JD0000000000000000000000\/[A-Za-z0-9_-]{22}\.mp4$/);
    expect(a.slice(0, -4)).not.toBe(b.slice(0, -4));
    expect(a.startsWith(renderPrefix('rnd_01JD0000000000000000000000'))).toBe(true);
    expect(isValidKey(a)).toBe(true);
    const tokens = new Set(Array.from({ length: 1000 }, () => outputKey('rnd_1', 'png')));
    expect(tokens.size).toBe(1000);
  });

  it('refuses render ids and extensions that would make a bad key', () => {
    expect(() => outputKey('../x', 'png')).toThrow(InvalidStorageKeyError);
    expect(() => outputKey('rnd_1/..', 'png')).toThrow(InvalidStorageKeyError);
    expect(() => outputKey('rnd_1', 'p/ng')).toThrow(InvalidStorageKeyError);
    expect(() => outputKey('rnd_1', '')).toThrow(InvalidStorageKeyError);
  });

  it('gives bundled library media fixed keys', () => {
    expect(libraryKey('fonts/Inter-Bold.ttf')).toBe('library/fonts/Inter-Bold.ttf');
    expect(() => libraryKey('../app-secret')).toThrow(InvalidStorageKeyError);
  });
});
