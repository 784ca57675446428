import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { Pool, type Dispatcher } from 'undici';
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
 * (§6: the status decides), and lets a synchronous refusal of a header value escape as a plain
 * error instead of a non-retryable `refused`. Both use the one SSRF check (`resolveOutbound`) and
 * pin the connection the same way (a lookup that answers the checked address).
 *
 * Why undici's `Pool` and not `node:http` with a keep-alive agent: per delivery, Node's client
 * (a `ClientRequest`, an `IncomingMessage` stream, the agent's socket bookkeeping) cost ~60–90 µs
 * more CPU than undici's dispatcher on this 2-core machine, at the webhook fan-out's ~450 µs a
 * delivery (decisions.md "Speed (issue 33): webhooks-speed").
 */

/** Idle keep-alive connections are closed after this (undici shortens it to a server's `Keep-Alive: timeout` hint). */
const IDLE_SOCKET_MS = 4000;
/** Pinned origins whose connections are kept; the least recently used one is closed beyond this. */
const MAX_POOLS = 256;
const pools = new Map<string, Pool>();

/**
 * The keep-alive pool of one pinned target: the URL's origin AND the address its host was checked
 * to (`resolveOutbound`, before every attempt). A socket is therefore only reused for a request
 * whose own check chose that same address; when DNS moves the host, the next request gets a new
 * pool and a new connection to the newly checked address, through the pinned lookup. Connecting
 * (and TLS, with SNI and certificate checks for the URL's host, which the pool keeps as its
 * origin) happens once per socket instead of once per delivery. No limit on connections: a worker
 * has at most WEBHOOK_CONCURRENCY × EVENT_SENDS_AT_ONCE requests in flight.
 */
function poolFor(target: ResolvedTarget): Pool {
  const key = `${target.url.origin} ${target.address}`;
  let pool = pools.get(key);
  if (pool) {
    pools.delete(key);
  } else {
    pool = new Pool(target.url.origin, {
      connect: { lookup: pinnedLookup(target), timeout: RESPONSE_TIMEOUT_MS },
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MS,
    });
    // The least recently used pool finishes its requests in flight, then closes its connections.
    if (pools.size >= MAX_POOLS) {
      const [oldest, old] = pools.entries().next().value as [string, Pool];
      pools.delete(oldest);
      old.close().catch(() => undefined);
    }
  }
  pools.set(key, pool);
  return pool;
}

/** Closes every kept connection (tests, shutdown). */
export function closeDeliveryConnections(): void {
  for (const pool of pools.values()) pool.destroy().catch(() => undefined);
  pools.clear();
}

/** Why an exchange was cut short by us (the deadline or the answer's cap), not by the network. */
class Abandoned extends Error {}

/**
 * The HTTP exchange itself, on a kept connection to the checked address when one is free. A
 * response read to its end leaves the socket to the pool; anything else (timeout, cap reached,
 * error) aborts the request, which closes its socket.
 */
function exchange(req: DeliveryRequest, target: ResolvedTarget, o: ExchangeOptions): Promise<DeliveryResult> {
  const { url } = target;
  return new Promise((done) => {
    let settled = false;
    let status: number | undefined;
    let controller: Dispatcher.DispatchController | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;

    const settle = (result: DeliveryResult, complete = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!complete && controller && !controller.aborted) controller.abort(new Abandoned());
      done(result);
    };
    // Once a status has arrived the receiver has answered; whatever happens to the body afterwards
    // (cap reached, too slow, cut off) only shortens the snippet.
    const answered = (complete = false) => settle({
      status: status as number,
      durationMs: o.elapsed(),
      responseSnippet: Buffer.concat(chunks).toString('utf8'),
      truncated,
    }, complete);
    const timer = setTimeout(() => {
      if (status !== undefined) answered();
      else settle(o.failed('timeout', `No answer within ${o.timeoutMs} ms`));
    }, o.remainingMs);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        // Abandoned while still waiting for a connection: nothing of it is sent.
        if (settled) c.abort(new Abandoned());
      },
      onResponseStart(_c, statusCode) {
        // An informational answer (102 Processing, 103 Early Hints) is not the receiver's answer:
        // undici passes it here too, before the final one.
        if (statusCode < 200) return;
        status = statusCode;
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        const room = o.maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = o.maxBytes;
          truncated = true;
          answered();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      },
      onResponseEnd() {
        answered(true);
      },
      onResponseError(_c, err: Error & { code?: string }) {
        if (settled) return;
        if (status !== undefined) answered();
        // undici refuses a request it cannot send as asked (an invalid header value or method)
        // before sending anything: the same request would be refused again.
        else if (err.code === 'UND_ERR_INVALID_ARG') settle(o.failed('refused', err.message));
        else settle(o.failed('connection', err.code && !err.code.startsWith('UND_ERR') ? `${err.code}: ${err.message}` : err.message));
      },
    };
    poolFor(target).dispatch({
      path: `${url.pathname}${url.search}`,
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      body: req.body ?? null,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    }, handler);
  });
}
