import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ApiError } from '#libs/core';
import { isValidKey, mediaTypeEssence, StoredFileNotFoundError, type StorageDriver, type StoredStat } from '#libs/storage';

/** Outcome of a Range header against a file of known size (RFC 9110 §14). */
export type RangeOutcome =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const FULL: RangeOutcome = { kind: 'full' };

/**
 * One `bytes=a-b`, `bytes=a-` or `bytes=-n` range; `end` clamped to the last byte. Anything the
 * server may ignore (another unit, malformed, last < first, several ranges) serves the whole file.
 */
export function parseRange(header: string | undefined, size: number): RangeOutcome {
  if (!header) return FULL;
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return FULL;
  const specs = m[1].split(',').map((s) => s.trim()).filter(Boolean);
  if (specs.length !== 1) return FULL;
  const spec = specs[0];
  const suffix = /^-(\d+)$/.exec(spec);
  if (suffix) {
    const n = Number(suffix[1]);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const span = /^(\d+)-(\d*)$/.exec(spec);
  if (!span) return FULL;
  const start = Number(span[1]);
  const last = span[2] === '' ? Infinity : Number(span[2]);
  if (last < start) return FULL;
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(last, size - 1) };
}

/** Strong validator: a key is written once (atomically), so size + mtime identify its bytes. */
export function entityTag(stat: Pick<StoredStat, 'sizeBytes' | 'modifiedAt'>): string {
  return `"${stat.sizeBytes.toString(16)}-${Math.floor(stat.modifiedAt.getTime()).toString(16)}"`;
}

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/** If-None-Match (weak comparison), else If-Modified-Since (whole seconds). */
export function isNotModified(headers: IncomingHttpHeaders, etag: string, modifiedAt: Date): boolean {
  const noneMatch = headers['if-none-match'];
  if (noneMatch !== undefined) {
    return noneMatch.trim() === '*' || noneMatch.split(',').some((t) => opaque(t) === opaque(etag));
  }
  const since = Date.parse(headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && Math.floor(modifiedAt.getTime() / 1000) * 1000 <= since;
}

/** If-Range: the Range applies only while the file is the one the client started with. */
function rangeStillValid(headers: IncomingHttpHeaders, etag: string, modifiedAt: Date): boolean {
  const raw = headers['if-range'];
  const ifRange = typeof raw === 'string' ? raw.trim() : '';
  if (!ifRange) return true;
  if (ifRange.startsWith('"')) return ifRange === etag;
  if (ifRange.startsWith('W/')) return false;
  return Date.parse(ifRange) === Math.floor(modifiedAt.getTime() / 1000) * 1000;
}

export const FILE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** User SVG must not run script in our origin. */
export const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'";

/** 404 NOT_FOUND: an invalid or unknown key, or any key when files are not served here (STORAGE_DRIVER=s3). */
export const fileNotFound = () => new ApiError('NOT_FOUND', 'No stored file at this address');

/**
 * Answers GET / HEAD /files/<key>: 200, 206 (one range), 304 (conditional), 416 (unsatisfiable),
 * or 404 NOT_FOUND for an invalid or unknown key. The bytes are streamed from storage.
 */
export async function sendStoredFile(
  storage: StorageDriver,
  key: string,
  headers: IncomingHttpHeaders,
  reply: FastifyReply,
  opts: { body: boolean; download: boolean },
): Promise<void> {
  const stat = isValidKey(key) ? await storage.stat(key) : undefined;
  if (!stat) throw fileNotFound();
  const etag = entityTag(stat);
  const common: Record<string, string> = {
    etag,
    'last-modified': stat.modifiedAt.toUTCString(),
    'cache-control': FILE_CACHE_CONTROL,
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
  };
  if (isNotModified(headers, etag, stat.modifiedAt)) {
    void reply.status(304).headers(common).send();
    return;
  }
  const range = rangeStillValid(headers, etag, stat.modifiedAt) ? parseRange(headers.range, stat.sizeBytes) : FULL;
  if (range.kind === 'unsatisfiable') {
    void reply.status(416).headers({ 'accept-ranges': 'bytes', 'content-range': `bytes */${stat.sizeBytes}` }).send();
    return;
  }
  const out: Record<string, string> = { ...common, 'content-type': stat.contentType };
  if (mediaTypeEssence(stat.contentType) === 'image/svg+xml') out['content-security-policy'] = SVG_CSP;
  if (opts.download) out['content-disposition'] = `attachment; filename="${key.slice(key.lastIndexOf('/') + 1)}"`;
  let status = 200;
  let length = stat.sizeBytes;
  if (range.kind === 'partial') {
    status = 206;
    length = range.end - range.start + 1;
    out['content-range'] = `bytes ${range.start}-${range.end}/${stat.sizeBytes}`;
  }
  out['content-length'] = String(length);
  if (!opts.body) {
    void reply.status(status).headers(out).send();
    return;
  }
  let stream;
  try {
    stream = await storage.read(key, range.kind === 'partial' ? range : undefined);
  } catch (err) {
    if (err instanceof StoredFileNotFoundError) throw fileNotFound();
    throw err;
  }
  void reply.status(status).headers(out).send(stream);
}
