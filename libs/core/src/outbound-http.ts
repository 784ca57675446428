import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ResolvedTarget } from './ssrf.js';

export interface PinnedRequest {
  target: ResolvedTarget;
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | null;
  timeoutMs: number;
  /** The response body is read up to this many bytes; the rest is dropped and the socket closed. */
  maxResponseBytes: number;
}

export interface PinnedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

export class OutboundError extends Error {
  constructor(readonly kind: 'timeout' | 'connection', message: string) {
    super(message);
    this.name = 'OutboundError';
  }
}

/**
 * One HTTP(S) request connected to an address that was already checked (no second DNS lookup,
 * so DNS rebinding cannot move it), never following redirects, with a whole-request timeout and a
 * cap on the bytes read back. TLS still verifies the certificate against the URL's host name.
 */
export function requestPinned(req: PinnedRequest): Promise<PinnedResponse> {
  const { url, address, family } = req.target;
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: req.method ?? 'GET',
        headers: { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) },
        lookup: (_host, _opts, cb) => cb(null, [{ address, family }] as never, family as never),
        servername: secure ? url.hostname.replace(/^\[|\]$/g, '') : undefined,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = req.maxResponseBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            size += room;
            truncated = true;
            finish();
            res.destroy();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        const finish = () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated });
        };
        res.on('end', finish);
        res.on('error', (err) => (truncated ? undefined : fail(new OutboundError('connection', err.message))));
      },
    );
    const fail = (err: OutboundError) => {
      clearTimeout(timer);
      outgoing.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new OutboundError('timeout', `No complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
    outgoing.on('error', (err) => fail(new OutboundError('connection', err.message)));
    outgoing.end(req.body ?? undefined);
  });
}
