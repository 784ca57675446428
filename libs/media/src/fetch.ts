import { OutboundError, OutboundRefused, requestPinned, resolveOutbound, type OutboundPolicy, type PinnedResponse } from '#libs/outbound';
import type { IncomingHttpHeaders } from 'node:http';
import type { ByteRange } from '#libs/storage';
import { decodeHeif, HeifDecodeError } from './heif.js';
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
  /** What the server said identifies these bytes (a download's answer; none for our stored files). */
  validators?: UrlValidators;
}

/**
 * The validators a server gave with a file (RFC 9110 §8.8; its length with them): what a later HEAD
 * compares to tell whether the bytes behind a URL are still the ones read (captions' URL memory).
 */
export interface UrlValidators {
  etag: string | null;
  lastModified: string | null;
  contentLength: string | null;
}

function validatorsOf(headers: IncomingHttpHeaders): UrlValidators {
  const one = (v: string | string[] | undefined) => (typeof v === 'string' && v.trim() ? v.trim() : null);
  return { etag: one(headers.etag), lastModified: one(headers['last-modified']), contentLength: one(headers['content-length']) };
}

/** Where renderers get media: a URL (and the kinds it may be) → its bytes, typed. */
export type MediaFetcher = (url: string, expect?: readonly MediaKind[]) => Promise<FetchedMedia>;

/** Why a media URL could not be used; the renderers turn it into an error naming the clip. */
export class MediaFetchError extends Error {
  constructor(
    readonly url: string,
    message: string,
    /** A failure a second try may not meet (a time-out, a dropped connection, a 5xx or 429 answer). */
    readonly transient = false,
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
async function getPinned(url: string, opts: { policy: OutboundPolicy; limits: FetchLimits; saveTo?: string; saveAt?: number; range?: ByteRange; lookup?: Lookup; head?: boolean }): Promise<PinnedResponse> {
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
        ...(opts.head ? { method: 'HEAD' } : {}),
        headers: { 'user-agent': 'media-render/1.0', accept: '*/*', ...(opts.range ? { range: `bytes=${opts.range.start}-${opts.range.end}` } : {}) },
        timeoutMs: Math.max(1, deadline - Date.now()),
        maxResponseBytes: opts.range ? limits.maxBytes : limits.maxBytes + 1,
        saveTo: opts.saveTo,
        ...(opts.saveAt !== undefined ? { saveAt: opts.saveAt } : {}),
      });
    } catch (err) {
      throw new MediaFetchError(url, err instanceof OutboundError && err.kind === 'timeout' ? `Download took longer than ${limits.timeoutMs} ms` : `Download failed: ${(err as Error).message}`, true);
    }
    if (res.status >= 300 && res.status < 400 && res.headers.location) {
      if (hop >= limits.maxRedirects) throw new MediaFetchError(url, `More than ${limits.maxRedirects} redirects`);
      current = new URL(res.headers.location, target.url).toString();
      continue;
    }
    if (opts.range && (res.status === 200 || res.status === 206)) return res; // a part: its caller reads what came
    if (res.status !== 200) throw new MediaFetchError(url, `The server answered ${res.status}`, res.status >= 500 || res.status === 429);
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

/** The pause before the one more try of a transient download failure. */
export const MEDIA_RETRY_PAUSE_MS = 500;

/**
 * Downloads a media URL (getPinned's rules), typed by its bytes. `expect` refuses a file of another
 * kind (a page of HTML where an image was promised). A transient failure is tried once more.
 */
export async function fetchMedia(
  url: string,
  opts: { policy: OutboundPolicy; expect?: readonly MediaKind[]; limits?: Partial<FetchLimits> },
): Promise<FetchedMedia> {
  const limits = { ...DEFAULT_FETCH_LIMITS, ...opts.limits };
  // A failure that can pass on a second try (issue 27: a media server that timed out, dropped the
  // connection or answered 5xx/429) is tried once more after a pause; what can never pass fails at once.
  const res = await getPinned(url, { policy: opts.policy, limits }).catch(async (err: unknown) => {
    if (!(err instanceof MediaFetchError) || !err.transient) throw err;
    await new Promise((resolve) => setTimeout(resolve, MEDIA_RETRY_PAUSE_MS));
    return getPinned(url, { policy: opts.policy, limits });
  });
  const type = sniff(res.body);
  if (!type) throw new MediaFetchError(url, 'The file is not a media type the renderer reads');
  if (opts.expect && !opts.expect.includes(type.kind)) {
    throw new MediaFetchError(url, `Expected ${opts.expect.join(' or ')}, got ${type.mime}`);
  }
  return { url, bytes: res.body, ...type, validators: validatorsOf(res.headers) };
}

/**
 * The validators a URL answers now: a HEAD with getPinned's rules (SSRF-checked and pinned on every
 * hop, redirects, one deadline); anything but a 200 is a MediaFetchError.
 */
export async function headValidators(url: string, opts: { policy: OutboundPolicy; timeoutMs: number; lookup?: Lookup }): Promise<UrlValidators> {
  const res = await getPinned(url, { policy: opts.policy, limits: { ...DEFAULT_FETCH_LIMITS, timeoutMs: opts.timeoutMs }, head: true, lookup: opts.lookup });
  return validatorsOf(res.headers);
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

/** What `readRangeToFile` wrote, and what it learnt of the whole file. */
export interface RangeRead {
  /** Bytes written into the file (at the range's offset, or at 0 when the server sent the whole file instead). */
  read: number;
  /** The whole file's size, when the answer told it (Content-Range, or the Content-Length of a whole answer). */
  total?: number;
  /** The answer was the whole file from its first byte (a server that ignores ranges), not the range. */
  whole: boolean;
  /** The answer was cut at `limits.maxBytes`. */
  truncated: boolean;
}

/**
 * Reads bytes `range` (inclusive) of a URL into `file` at the same offset (the file must exist),
 * with getPinned's rules (SSRF on every hop, deadline), at most `limits.maxBytes` of them whatever
 * the server sends. A server that ignores the range answers 200 with the file from its start: that
 * is written at offset 0 and reported `whole`, and only a range starting at 0 may take it.
 */
export async function readRangeToFile(
  url: string,
  range: ByteRange,
  file: string,
  opts: { policy: OutboundPolicy; limits?: Partial<FetchLimits>; lookup?: Lookup },
): Promise<RangeRead> {
  const limits = { ...DEFAULT_FETCH_LIMITS, ...opts.limits };
  const res = await getPinned(url, { policy: opts.policy, limits, saveTo: file, saveAt: range.start, range, lookup: opts.lookup });
  const read = res.savedBytes ?? 0;
  if (res.status === 200) {
    if (range.start !== 0) throw new MediaFetchError(url, 'The server sent the whole file where a part of it was asked for');
    const length = Number(res.headers['content-length']);
    return { read, whole: true, truncated: res.truncated, ...(Number.isSafeInteger(length) && length >= 0 ? { total: length } : {}) };
  }
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? '').trim());
  if (!m || Number(m[1]) !== range.start) throw new MediaFetchError(url, 'The server answered a part of the file other than the one asked for');
  return { read, whole: false, truncated: res.truncated, ...(m[3] !== '*' ? { total: Number(m[3]) } : {}) };
}

/** One download per URL per render, however many clips use it; a HEIC picture decoded into a PNG once. */
export class RenderMediaCache {
  private readonly entries = new Map<string, Promise<FetchedMedia>>();

  constructor(
    private readonly fetcher: (url: string, expect?: readonly MediaKind[]) => Promise<FetchedMedia>,
    /** `maxPixels`: the largest HEIC picture decoded (the engine's own limit for every image). */
    private readonly heif: { maxPixels: number; signal?: AbortSignal } = { maxPixels: DEFAULT_HEIF_PIXELS },
  ) {}

  get(url: string, expect?: readonly MediaKind[]): Promise<FetchedMedia> {
    let entry = this.entries.get(url);
    if (!entry) {
      entry = this.fetcher(url, expect).then((m) => (m.mime === 'image/heic' ? this.decoded(m) : m));
      this.entries.set(url, entry);
    }
    return entry.then((m) => {
      if (expect && !expect.includes(m.kind)) throw new MediaFetchError(url, `Expected ${expect.join(' or ')}, got ${m.mime}`);
      return m;
    });
  }

  /** Neither engine reads HEVC-coded HEIF (sharp's libvips here decodes AVIF only; Chromium nothing): both get its PNG. */
  private async decoded(m: FetchedMedia): Promise<FetchedMedia> {
    try {
      const bytes = await decodeHeif(m.bytes, { maxPixels: this.heif.maxPixels, ...(this.heif.signal ? { signal: this.heif.signal } : {}) });
      return { url: m.url, bytes, kind: 'image', mime: 'image/png' };
    } catch (err) {
      if (err instanceof HeifDecodeError) throw new MediaFetchError(m.url, err.message);
      throw err;
    }
  }
}

/** The engines' limit (RENDER_BUDGET.mediaPixels) when a caller names none. */
const DEFAULT_HEIF_PIXELS = 40_000_000;
