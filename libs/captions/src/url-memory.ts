import type { UrlValidators } from '#libs/media';

/**
 * How long what an `audioUrl` held is remembered (docs/decisions.md "Fidelity (issue 32):
 * captions-url-cache"): a repeat within it whose validators are unchanged is a cache hit.
 */
export const URL_MEMORY_MS = 24 * 3600 * 1000;

/** How long the API waits for the HEAD that checks a remembered URL (a slow server: the normal 202 path). */
export const URL_CHECK_MS = 5_000;

/** What the worker read at a URL: the validators the server gave, and when. */
export interface RememberedUrl extends UrlValidators {
  readAt: string;
}

/** A strong ETag or a Last-Modified: something that names the bytes (a weak ETag or a length alone does not). */
export function identifies(v: UrlValidators): boolean {
  return (v.etag !== null && !v.etag.startsWith('W/')) || v.lastModified !== null;
}

/** The URL still answers what was read: it identified its bytes then, and every validator is the same now. */
export function unchanged(before: UrlValidators, now: UrlValidators): boolean {
  return identifies(before) && before.etag === now.etag && before.lastModified === now.lastModified && before.contentLength === now.contentLength;
}
