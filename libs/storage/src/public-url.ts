import { assertValidKey, isValidKey } from './keys.js';

/** Stored files are served at `<PUBLIC_URL>/files/<key>`, outside the API prefix. */
export const FILES_PATH = 'files';

/** `publicUrl` as config gives it: absolute, http(s), no trailing slash. */
export function storedFileUrl(publicUrl: string, key: string): string {
  assertValidKey(key);
  return `${publicUrl}/${FILES_PATH}/${key}`;
}

/**
 * The key when `url` points at one of our own stored files (same origin, path under
 * `<PUBLIC_URL>/files/`, a valid key); otherwise undefined. The query and fragment are ignored.
 * Lets the renderers read our own files from storage instead of downloading them.
 */
export function storedKeyFromUrl(url: string, publicUrl: string): string | undefined {
  return keyUnderBase(url, `${publicUrl.replace(/\/+$/, '')}/${FILES_PATH}`);
}

/**
 * The key when `url` is `<base>/<key>` (same origin, `base`'s path then a valid key, no
 * credentials); the query and fragment are ignored. `base`: an absolute URL without trailing slash.
 */
export function keyUnderBase(url: string, base: string): string | undefined {
  let target: URL;
  let root: URL;
  try {
    target = new URL(url);
    root = new URL(base);
  } catch {
    return undefined;
  }
  if (target.origin !== root.origin || target.username || target.password) return undefined;
  const prefix = `${root.pathname.replace(/\/+$/, '')}/`;
  if (!target.pathname.startsWith(prefix)) return undefined;
  const key = target.pathname.slice(prefix.length);
  return isValidKey(key) ? key : undefined;
}
