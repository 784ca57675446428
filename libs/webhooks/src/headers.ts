/** RFC 9110 token: the characters a header name may use. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

/**
 * Header names a configured header may not use, lowercase. Besides `X-Service-*` (§6: never
 * overridable), the ones the delivery itself controls:
 * - framing and hop-by-hop headers (Host, Content-Length, Transfer-Encoding, Connection, Keep-Alive,
 *   Proxy-Connection, TE, Trailer, Upgrade, Expect): the transport sets them, and a wrong one desyncs
 *   or stalls the request;
 * - Content-Type and Content-Encoding: `bodyFormat` sets the encoding (§6), and a multipart body is
 *   unreadable without its own boundary;
 * - User-Agent: `service-webhooks/1.0` is part of the contract (§6, §9).
 */
const MANAGED = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer',
  'upgrade', 'expect', 'content-type', 'content-encoding', 'user-agent',
]);

/** True when a configured header may not use `name` (compared case-insensitively). */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('x-service-') || MANAGED.has(lower);
}
