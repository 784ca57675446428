import { randomBytes } from 'node:crypto';

/**
 * A storage key is a relative path of segments joined by `/`: letters, digits, `.`, `_` and `-`,
 * no segment empty or starting with a dot (so no `.`, `..` or hidden files such as the temp files
 * of an atomic write), no absolute path, backslash, NUL or percent sign. Every driver refuses any
 * other key, so none can leave its root.
 */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 512;
const MAX_SEGMENTS = 16;

export class InvalidStorageKeyError extends Error {
  constructor(readonly key: string, problem = 'is not a valid storage key') {
    super(`"${key.slice(0, 100)}" ${problem}`);
    this.name = 'InvalidStorageKeyError';
  }
}

export function isValidKey(key: string): boolean {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  const segments = key.split('/');
  return segments.length <= MAX_SEGMENTS && segments.every((s) => SEGMENT.test(s));
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new InvalidStorageKeyError(key);
}

/**
 * A prefix for `deletePrefix`: whole segments, then either a trailing `/` (everything under that
 * folder) or the beginning of a last segment (`r/rnd_01` matches `r/rnd_01…`). Never empty.
 */
export function assertValidPrefix(prefix: string): void {
  const body = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (!isValidKey(body)) throw new InvalidStorageKeyError(prefix, 'is not a valid storage key prefix');
}

const EXTENSION = /^[a-z0-9]{1,8}$/;

/**
 * Key of a render's output: `r/<renderId>/<22 characters of base64url from 16 random bytes>.<ext>`.
 * The random part makes the URL unguessable from the render id; each render's files share one
 * folder, so `deletePrefix(renderPrefix(id))` removes them all.
 */
export function outputKey(renderId: string, ext: string): string {
  if (!SEGMENT.test(renderId)) throw new InvalidStorageKeyError(renderId, 'is not a usable render id');
  const extension = ext.replace(/^\./, '').toLowerCase();
  if (!EXTENSION.test(extension)) throw new InvalidStorageKeyError(ext, 'is not a file extension (1–8 letters or digits)');
  return `${renderPrefix(renderId)}${randomBytes(16).toString('base64url')}.${extension}`;
}

/** The folder holding every file of a render (for `deletePrefix`). */
export function renderPrefix(renderId: string): string {
  if (!SEGMENT.test(renderId)) throw new InvalidStorageKeyError(renderId, 'is not a usable render id');
  return `r/${renderId}/`;
}

/** A fixed key for files bundled with the service (the template library's previews): `library/<file>` (`file` may hold sub-folders). */
export function libraryKey(file: string): string {
  const key = `library/${file}`;
  assertValidKey(key);
  return key;
}
