import { createReadStream, createWriteStream, type ReadStream, type WriteStream } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { bufferPassed, release } from './scavenge.js';
import type { ResolvedTarget } from './ssrf.js';

/** A request body read from a file as it is sent (never held whole in memory); `size` is its Content-Length. */
export interface FileBody {
  path: string;
  size: number;
}

export interface PinnedRequest {
  target: ResolvedTarget;
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | FileBody | null;
  timeoutMs: number;
  /** The response body is read up to this many bytes; the rest is dropped and the socket closed. */
  maxResponseBytes: number;
  /** Aborting it stops the request at once (rejects with an `aborted` OutboundError). */
  signal?: AbortSignal;
  /**
   * A 2xx answer's body is written to this file as it arrives (never held in memory; `body` is then
   * empty and `savedBytes` its size) up to `maxResponseBytes`: past it the file is cut there and
   * `truncated` set. Other answers are read into `body` as usual.
   */
  saveTo?: string;
  /**
   * With `saveTo`: the body is written into the existing file from this byte on (its other bytes
   * kept), as a `Range` answer belongs at its own offset; without it the file is written anew.
   */
  saveAt?: number;
  /**
   * A GET without a body may ride a kept-alive connection to the same checked address (provider
   * calls: many small reads of one API). One that finds the connection closed by the server before
   * any answer is tried once more on a fresh connection.
   */
  keepAlive?: boolean;
}

export interface PinnedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  /** With `saveTo` and a 2xx answer: the bytes written to the file. */
  savedBytes?: number;
}

export class OutboundError extends Error {
  constructor(
    readonly kind: 'timeout' | 'connection' | 'aborted',
    message: string,
    /** A kept-alive connection the server had closed, failing before any answer: nothing reached the server. */
    readonly staleConnection = false,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** Keep-alive agents of GET requests, one per checked address, port and TLS name: at most this many (least recently used dropped). */
const MAX_AGENTS = 64;
const agents = new Map<string, HttpAgent>();

/**
 * The keep-alive agent of one pinned target: its sockets are connected to the checked address only,
 * so reusing one never reaches anything the SSRF check did not allow. Idle sockets close after 4 s
 * (below the usual 5 s of servers). Dropping the least recently used agent closes its idle sockets
 * only; requests running on it finish, their sockets closed then.
 */
function keepAliveAgent(target: ResolvedTarget, secure: boolean): HttpAgent {
  const key = `${target.url.protocol}//${target.address}:${target.url.port}|${target.url.hostname}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
  } else {
    const options = { keepAlive: true, maxFreeSockets: 8, timeout: 4000 };
    agent = secure ? new HttpsAgent(options) : new HttpAgent(options);
    if (agents.size >= MAX_AGENTS) {
      const [oldest, dropped] = agents.entries().next().value!;
      agents.delete(oldest);
      (dropped as HttpAgent & { keepAlive: boolean }).keepAlive = false;
      for (const socket of Object.values(dropped.freeSockets).flat()) socket?.destroy();
    }
  }
  agents.set(key, agent);
  return agent;
}

/**
 * One HTTP(S) request connected to an address that was already checked (no second DNS lookup,
 * so DNS rebinding cannot move it), never following redirects, with a whole-request timeout and a
 * cap on the bytes read back. TLS still verifies the certificate against the URL's host name.
 * `keepAlive` GETs reuse connections to the same checked address (keepAliveAgent).
 */
export async function requestPinned(req: PinnedRequest): Promise<PinnedResponse> {
  const keepAlive = req.keepAlive === true && (req.method ?? 'GET') === 'GET' && (req.body ?? null) === null;
  const started = Date.now();
  try {
    return await attempt(req, keepAlive);
  } catch (err) {
    if (!(err instanceof OutboundError && err.staleConnection)) throw err;
    return attempt({ ...req, timeoutMs: Math.max(1, req.timeoutMs - (Date.now() - started)) }, false);
  }
}

function attempt(req: PinnedRequest, keepAlive: boolean): Promise<PinnedResponse> {
  const { url, address, family } = req.target;
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const body = req.body ?? null;
  const length = body === null ? null : Buffer.isBuffer(body) ? body.length : body.size;
  if (req.signal?.aborted) return Promise.reject(new OutboundError('aborted', 'The request was aborted'));
  return new Promise((resolve, reject) => {
    let settled = false;
    let answered = false;
    let file: ReadStream | undefined;
    let out: WriteStream | undefined;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: OutboundError) => {
      if (settled) return;
      settle();
      file?.destroy();
      out?.destroy();
      outgoing.destroy();
      reject(err);
    };
    const onAbort = () => fail(new OutboundError('aborted', 'The request was aborted'));
    const outgoing = send(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: req.method ?? 'GET',
        headers: { ...req.headers, ...(length !== null ? { 'content-length': String(length) } : {}) },
        lookup: (_host, _opts, cb) => cb(null, [{ address, family }] as never, family as never),
        servername: secure ? url.hostname.replace(/^\[|\]$/g, '') : undefined,
        agent: keepAlive ? keepAliveAgent(req.target, secure) : false,
      },
      (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        if (req.saveTo && status >= 200 && status < 300) {
          out = createWriteStream(req.saveTo, req.saveAt === undefined ? undefined : { flags: 'r+', start: req.saveAt });
          saveBody(res, out, req.maxResponseBytes, (savedBytes, truncated) => {
            if (settled) return;
            settle();
            resolve({ status, headers: res.headers, body: Buffer.alloc(0), truncated, savedBytes });
          }, (message) => fail(new OutboundError('connection', message)));
          return;
        }
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
          bufferPassed(chunk.length);
        });
        const finish = () => {
          if (settled) return;
          settle();
          const whole = Buffer.concat(chunks);
          release(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: whole, truncated });
        };
        res.on('end', finish);
        res.on('error', (err) => (truncated ? undefined : fail(new OutboundError('connection', err.message))));
      },
    );
    const timer = setTimeout(() => fail(new OutboundError('timeout', `No complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.on('error', (err) => fail(new OutboundError('connection', err.message, outgoing.reusedSocket && !answered)));
    if (body === null || Buffer.isBuffer(body)) {
      outgoing.end(body ?? undefined);
      return;
    }
    if (body.size === 0) {
      outgoing.end();
      return;
    }
    // The file is sent as it is read; one that is shorter than announced would leave the server
    // waiting for the rest, so it fails the request instead.
    let sent = 0;
    file = createReadStream(body.path, { start: 0, end: body.size - 1 });
    file.on('data', (chunk) => (sent += chunk.length));
    file.on('error', (err) => fail(new OutboundError('connection', `The request body could not be read: ${err.message}`)));
    file.on('end', () => (sent < body.size ? fail(new OutboundError('connection', `The request body is ${sent} bytes, not the ${body.size} announced`)) : undefined));
    file.pipe(outgoing);
  });
}

/**
 * A response body into a file with backpressure, cut at `max` bytes (`done(size, true)`, the
 * connection dropped); `done` runs once the file is flushed and closed.
 */
function saveBody(res: IncomingMessage, out: WriteStream, max: number, done: (size: number, truncated: boolean) => void, failed: (message: string) => void): void {
  let size = 0;
  let cut = false;
  const close = (truncated: boolean) => out.end(() => done(size, truncated));
  res.on('data', (chunk: Buffer) => {
    if (cut) return;
    const room = max - size;
    if (chunk.length > room) {
      cut = true;
      size += room;
      out.write(chunk.subarray(0, room));
      res.destroy();
      close(true);
      return;
    }
    size += chunk.length;
    if (!out.write(chunk)) {
      res.pause();
      out.once('drain', () => res.resume());
    }
  });
  res.on('end', () => (cut ? undefined : close(false)));
  res.on('error', (err) => (cut ? undefined : failed(err.message)));
  out.on('error', (err) => failed(`The answer could not be saved: ${err.message}`));
}
