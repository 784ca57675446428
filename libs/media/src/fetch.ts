import { OutboundError, OutboundRefused, requestPinned, resolveOutbound, type OutboundPolicy } from '#libs/core';
import { sniff, type MediaKind, type Sniffed } from './sniff.js';

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { maxBytes: 100 * 1024 * 1024, timeoutMs: 20_000, maxRedirects: 3 };

export interface FetchedMedia extends Sniffed {
  url: string;
  bytes: Buffer;
}

/** Where renderers get media: a URL (and the kinds it may be) → its bytes, typed. */
export type MediaFetcher = (url: string, expect?: readonly MediaKind[]) => Promise<FetchedMedia>;

/** Why a media URL could not be used; the renderers turn it into an error naming the clip. */
export class MediaFetchError extends Error {
  constructor(
    readonly url: string,
    message: string,
  ) {
    super(message);
    this.name = 'MediaFetchError';
  }
}

/**
 * Downloads a media URL: SSRF-checked after DNS resolution on every redirect hop (connection pinned
 * to the checked address), size-capped, timed out, and typed by its bytes. `expect` refuses a file
 * of another kind (a page of HTML where an image was promised).
 */
export async function fetchMedia(
  url: string,
  opts: { policy: OutboundPolicy; expect?: readonly MediaKind[]; limits?: Partial<FetchLimits> },
): Promise<FetchedMedia> {
  const limits = { ...DEFAULT_FETCH_LIMITS, ...opts.limits };
  const deadline = Date.now() + limits.timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    let target;
    try {
      target = await resolveOutbound(current, opts.policy);
    } catch (err) {
      throw new MediaFetchError(url, err instanceof OutboundRefused ? `Refused: ${err.message}` : String(err));
    }
    let res;
    try {
      res = await requestPinned({
        target,
        headers: { 'user-agent': 'media-render/1.0', accept: '*/*' },
        timeoutMs: Math.max(1, deadline - Date.now()),
        maxResponseBytes: limits.maxBytes + 1,
      });
    } catch (err) {
      throw new MediaFetchError(url, err instanceof OutboundError && err.kind === 'timeout' ? `Download took longer than ${limits.timeoutMs} ms` : `Download failed: ${(err as Error).message}`);
    }
    if (res.status >= 300 && res.status < 400 && res.headers.location) {
      if (hop >= limits.maxRedirects) throw new MediaFetchError(url, `More than ${limits.maxRedirects} redirects`);
      current = new URL(res.headers.location, target.url).toString();
      continue;
    }
    if (res.status !== 200) throw new MediaFetchError(url, `The server answered ${res.status}`);
    if (res.truncated || res.body.length > limits.maxBytes) {
      throw new MediaFetchError(url, `The file is larger than ${Math.round(limits.maxBytes / 1024 / 1024)} MB`);
    }
    const type = sniff(res.body);
    if (!type) throw new MediaFetchError(url, 'The file is not a media type the renderer reads');
    if (opts.expect && !opts.expect.includes(type.kind)) {
      throw new MediaFetchError(url, `Expected ${opts.expect.join(' or ')}, got ${type.mime}`);
    }
    return { url, bytes: res.body, ...type };
  }
}

/** One download per URL per render, however many clips use it. */
export class RenderMediaCache {
  private readonly entries = new Map<string, Promise<FetchedMedia>>();

  constructor(private readonly fetcher: (url: string, expect?: readonly MediaKind[]) => Promise<FetchedMedia>) {}

  get(url: string, expect?: readonly MediaKind[]): Promise<FetchedMedia> {
    let entry = this.entries.get(url);
    if (!entry) {
      entry = this.fetcher(url, expect);
      this.entries.set(url, entry);
    }
    return entry.then((m) => {
      if (expect && !expect.includes(m.kind)) throw new MediaFetchError(url, `Expected ${expect.join(' or ')}, got ${m.mime}`);
      return m;
    });
  }
}
