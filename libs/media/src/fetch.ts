import { OutboundError, OutboundRefused, requestPinned, resolveOutbound, type OutboundPolicy, type PinnedResponse } from '#libs/core';
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

type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

/**
 * GET a URL, following redirects: SSRF-checked after DNS resolution on every hop (the connection
 * pinned to the checked address), one deadline, the answer capped (into `saveTo` when given). A
 * final answer other than 200, or one over the cap, is a MediaFetchError.
 */
async function getPinned(url: string, opts: { policy: OutboundPolicy; limits: FetchLimits; saveTo?: string; lookup?: Lookup }): Promise<PinnedResponse> {
  const { limits } = opts;
  const deadline = Date.now() + limits.timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    let target;
    try {
      target = await resolveOutbound(current, opts.policy, opts.lookup);
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
        saveTo: opts.saveTo,
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
    if (res.truncated || res.body.length > limits.maxBytes) throw new FileTooLarge(url, limits.maxBytes);
    return res;
  }
}

/** The file behind a URL is over the cap: the download stopped there. */
export class FileTooLarge extends MediaFetchError {
  constructor(url: string, readonly maxBytes: number) {
    super(url, `The file is larger than ${Math.round(maxBytes / 1024 / 1024)} MB`);
    this.name = 'FileTooLarge';
  }
}

/**
 * Downloads a media URL (getPinned's rules), typed by its bytes. `expect` refuses a file of another
 * kind (a page of HTML where an image was promised).
 */
export async function fetchMedia(
  url: string,
  opts: { policy: OutboundPolicy; expect?: readonly MediaKind[]; limits?: Partial<FetchLimits> },
): Promise<FetchedMedia> {
  const res = await getPinned(url, { policy: opts.policy, limits: { ...DEFAULT_FETCH_LIMITS, ...opts.limits } });
  const type = sniff(res.body);
  if (!type) throw new MediaFetchError(url, 'The file is not a media type the renderer reads');
  if (opts.expect && !opts.expect.includes(type.kind)) {
    throw new MediaFetchError(url, `Expected ${opts.expect.join(' or ')}, got ${type.mime}`);
  }
  return { url, bytes: res.body, ...type };
}

/**
 * Downloads any file behind a URL into `path` as it arrives (getPinned's rules: SSRF, redirects,
 * deadline), stopped at `limits.maxBytes` (FileTooLarge; the partial file is the caller's to remove).
 * Answers its size and the type the server reported.
 */
export async function downloadToFile(
  url: string,
  path: string,
  opts: { policy: OutboundPolicy; limits?: Partial<FetchLimits>; lookup?: Lookup },
): Promise<{ sizeBytes: number; contentType: string | null }> {
  const res = await getPinned(url, { policy: opts.policy, limits: { ...DEFAULT_FETCH_LIMITS, ...opts.limits }, saveTo: path, lookup: opts.lookup });
  const type = res.headers['content-type'];
  return { sizeBytes: res.savedBytes ?? 0, contentType: typeof type === 'string' && type.trim() ? type.split(';')[0]!.trim().toLowerCase() : null };
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
