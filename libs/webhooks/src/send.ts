import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { OutboundRefused, resolveOutbound, type OutboundPolicy, type ResolvedTarget } from '#libs/outbound';
import type { DeliveryRequest } from './build.js';
import { RESPONSE_TIMEOUT_MS, type DeliveryErrorKind } from './retry.js';

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export interface SendOptions {
  /** `development` allows plain HTTP and loopback/private targets (decisions.md "Running it"). */
  policy: OutboundPolicy;
  /** For the whole attempt, DNS included (§6: an answer within 10 seconds). */
  timeoutMs?: number;
  /** At most this much of the response body is read; the connection is then closed. */
  maxResponseBytes?: number;
  /** DNS resolution (tests substitute it); the default asks the system resolver. */
  resolve?: Resolver;
}

interface Common {
  durationMs: number;
  /** The start of the response body as UTF-8 text ('' without an answer). */
  responseSnippet: string;
  /** True when the body was longer than `maxResponseBytes` and the rest was not read. */
  truncated: boolean;
}

/** An attempt's result: the receiver's HTTP status (classify it with `classifyResponse`), or why none came. */
export type DeliveryResult =
  | (Common & { status: number; error?: undefined; errorMessage?: undefined })
  | (Common & { status?: undefined; error: DeliveryErrorKind; errorMessage: string });

export const MAX_RESPONSE_BYTES = 64 * 1024;

const systemResolve: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` that answers with the address already checked, so no second DNS query can move the connection. */
function pinnedLookup(target: ResolvedTarget) {
  return (_host: string, options: LookupOptions, callback: LookupCallback): void => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

class Deadline extends Error {}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Deadline()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Sends one attempt (§6). The URL is checked by `resolveOutbound` after DNS resolution, every
 * attempt, and the connection is pinned to the checked address (TLS still sends SNI for, and
 * verifies, the URL's host name, since the request keeps that name and only its lookup is
 * replaced); a kept-alive connection is reused only when it goes to that same address; redirects
 * are never followed (a 3xx is a status like any other); the attempt is abandoned at `timeoutMs`;
 * at most `maxResponseBytes` of the answer are read. Never throws: every failure is a result.
 */
export async function sendDelivery(req: DeliveryRequest, opts: SendOptions): Promise<DeliveryResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? RESPONSE_TIMEOUT_MS;
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: DeliveryErrorKind, errorMessage: string): DeliveryResult =>
    ({ error, errorMessage, durationMs: elapsed(), responseSnippet: '', truncated: false });

  // resolveOutbound reports a resolver failure as "does not resolve"; remember that it was one, since
  // a DNS outage is worth retrying where a refused address is not.
  let dnsError: string | null = null;
  const resolve = opts.resolve ?? systemResolve;
  const tracked: Resolver = (host) => resolve(host).catch((err: unknown) => {
    dnsError = err instanceof Error ? err.message : String(err);
    throw err;
  });

  let target: ResolvedTarget;
  try {
    target = await withDeadline(resolveOutbound(req.url, opts.policy, tracked), timeoutMs);
  } catch (err) {
    if (err instanceof Deadline) return failed('timeout', `No answer within ${timeoutMs} ms (DNS lookup)`);
    if (dnsError !== null) return failed('connection', `DNS lookup failed: ${dnsError}`);
    if (err instanceof OutboundRefused) return failed('refused', err.message);
    return failed('connection', err instanceof Error ? err.message : String(err));
  }
  return exchange(req, target, {
    remainingMs: Math.max(0, timeoutMs - (performance.now() - started)),
    maxBytes: opts.maxResponseBytes ?? MAX_RESPONSE_BYTES,
    timeoutMs,
    elapsed,
    failed,
  });
}

interface ExchangeOptions {
  remainingMs: number;
  maxBytes: number;
  timeoutMs: number;
  elapsed: () => number;
  failed: (error: DeliveryErrorKind, message: string) => DeliveryResult;
}

/*
 * Why not `requestPinned` (libs/outbound/src/outbound-http.ts), the other pinned-request implementation:
 * it always opens a fresh connection (`agent: false`, no option to pass one), and keep-alive is
 * a large part of the delivery speed (docs/benchmarks.md, webhook fan-out); it also rejects a
 * timeout or a broken body after the status has arrived, where a delivery counts that as an answer
 * (§6: the status decides), and lets Node's synchronous refusal of a header value escape as a plain
 * error instead of a non-retryable `refused`. Merging them means giving `PinnedRequest` an `agent`
 * and an "answered" result in libs/core; until then this file keeps its own exchange. Both use the
 * one SSRF check (`resolveOutbound`) and pin the connection the same way (a lookup that answers
 * the checked address).
 */

/** Idle keep-alive connections are closed after this (Node shortens it to a server's `Keep-Alive: timeout` hint). */
const IDLE_SOCKET_MS = 4000;
/**
 * Idle connections kept per pinned target: a worker has up to WEBHOOK_CONCURRENCY jobs of up to
 * EVENT_SENDS_AT_ONCE sends each (800 by default) in flight. Fewer than that closes and reopens
 * connections between two waves of deliveries to one receiver; they still close after IDLE_SOCKET_MS.
 */
const MAX_FREE_SOCKETS = 256;
/** Pinned origins whose connections are kept; the least recently used one is dropped beyond this. */
const MAX_AGENTS = 256;
const agents = new Map<string, HttpAgent>();

/**
 * The keep-alive pool of one pinned target: the URL's origin AND the address its host was checked
 * to (`resolveOutbound`, before every attempt). A socket is therefore only reused for a request
 * whose own check chose that same address; when DNS moves the host, the next request gets a new
 * pool and a new connection to the newly checked address, through the pinned lookup. Connecting
 * (and TLS, with SNI and certificate checks for the URL's host) happens once per socket instead
 * of once per delivery.
 */
function agentFor(target: ResolvedTarget): HttpAgent {
  const key = `${target.url.protocol}//${target.url.host} ${target.address}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
  } else {
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' as const };
    agent = target.url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    // Forgetting the least recently used pool is enough: its requests in flight finish, and its
    // idle sockets close on their own after IDLE_SOCKET_MS.
    if (agents.size >= MAX_AGENTS) agents.delete(agents.keys().next().value as string);
  }
  agents.set(key, agent);
  return agent;
}

/** Closes every kept connection (tests, shutdown). */
export function closeDeliveryConnections(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/**
 * The HTTP exchange itself, on a kept connection to the checked address when one is free. A
 * response read to its end leaves the socket to the pool; anything else (timeout, cap reached,
 * error) destroys it.
 */
function exchange(req: DeliveryRequest, target: ResolvedTarget, o: ExchangeOptions): Promise<DeliveryResult> {
  const { url } = target;
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const headers: Record<string, string> = { ...req.headers };
  if (req.body) headers['Content-Length'] = String(req.body.length);
  else if (req.method !== 'GET') headers['Content-Length'] = '0';

  return new Promise((done) => {
    let settled = false;
    let response: IncomingMessage | undefined;
    let outgoing: ClientRequest | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;

    const settle = (result: DeliveryResult, keep = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) outgoing?.destroy();
      done(result);
    };
    // Once a status has arrived the receiver has answered; whatever happens to the body afterwards
    // (cap reached, too slow, cut off) only shortens the snippet.
    const answered = (res: IncomingMessage, complete = false) => settle({
      status: res.statusCode ?? 0,
      durationMs: o.elapsed(),
      responseSnippet: Buffer.concat(chunks).toString('utf8'),
      truncated,
    }, complete);
    const timer = setTimeout(() => {
      if (response) answered(response);
      else settle(o.failed('timeout', `No answer within ${o.timeoutMs} ms`));
    }, o.remainingMs);

    try {
      outgoing = (secure ? httpsRequest : httpRequest)(
        {
          protocol: url.protocol,
          hostname,
          port: url.port || (secure ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: req.method,
          headers,
          lookup: pinnedLookup(target),
          agent: agentFor(target),
        },
        (res) => {
          response = res;
          res.on('data', (chunk: Buffer) => {
            if (settled) return;
            const room = o.maxBytes - size;
            if (chunk.length > room) {
              chunks.push(chunk.subarray(0, room));
              size = o.maxBytes;
              truncated = true;
              answered(res);
              return;
            }
            chunks.push(chunk);
            size += chunk.length;
          });
          res.on('end', () => answered(res, true));
          res.on('error', () => answered(res));
          res.on('close', () => answered(res));
        },
      );
    } catch (err) {
      // Node refuses the request before sending (an invalid header value or method): the same
      // request would be refused again.
      settle(o.failed('refused', err instanceof Error ? err.message : String(err)));
      return;
    }
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      if (response) answered(response);
      else settle(o.failed('connection', err.code ? `${err.code}: ${err.message}` : err.message));
    });
    outgoing.end(req.body ?? undefined);
  });
}
