import { OutboundError, OutboundRefused, requestPinned, resolveOutbound, type OutboundPolicy } from '#libs/outbound';
import type { ReachabilityChecker } from './review.js';

const MAX_REDIRECTS = 3;

/**
 * The review's media check over HTTP: a ranged GET of the first bytes, SSRF-checked on every hop
 * (the same rules as the render fetcher: plain HTTP and private addresses only in development),
 * redirects followed up to three times. Reachable means a 200 or 206 answer.
 */
export function httpReachability(policy: OutboundPolicy, opts: { timeoutMs?: number } = {}): ReachabilityChecker {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return async (url) => {
    const deadline = Date.now() + timeoutMs;
    let current = url;
    for (let hop = 0; ; hop++) {
      let res;
      try {
        const target = await resolveOutbound(current, policy);
        res = await requestPinned({
          target,
          headers: { 'user-agent': 'media-render/1.0', accept: '*/*', range: 'bytes=0-1023' },
          timeoutMs: Math.max(1, deadline - Date.now()),
          maxResponseBytes: 1024,
        });
      } catch (err) {
        if (err instanceof OutboundRefused) return { ok: false, reason: `refused: ${err.message}` };
        if (err instanceof OutboundError) return { ok: false, reason: err.kind === 'timeout' ? `no answer within ${timeoutMs} ms` : err.message };
        throw err;
      }
      if (res.status >= 300 && res.status < 400 && res.headers.location) {
        if (hop >= MAX_REDIRECTS) return { ok: false, reason: `more than ${MAX_REDIRECTS} redirects` };
        current = new URL(res.headers.location, current).toString();
        continue;
      }
      return res.status === 200 || res.status === 206 ? { ok: true } : { ok: false, reason: `HTTP ${res.status}` };
    }
  };
}

/**
 * Our own stored files (`<PUBLIC_URL>/files/…`: library media, uploads) are checked in storage, not
 * over HTTP (the API may not be reachable from itself, e.g. behind a proxy); other URLs by `fallback`.
 */
export function storedOrHttp(
  storage: { keyFromUrl(url: string): string | undefined; stat(key: string): Promise<unknown> },
  fallback: ReachabilityChecker,
): ReachabilityChecker {
  return async (url) => {
    const key = storage.keyFromUrl(url);
    if (key === undefined) return fallback(url);
    return (await storage.stat(key)) ? { ok: true } : { ok: false, reason: 'no stored file at this URL' };
  };
}
