// The number of attempts and the pauses between them (§6 "Retries") are job options of
// `webhooks.deliver`: DELIVERY_ATTEMPTS and DELIVERY_RETRY_DELAYS_MS in libs/queue.
/** The receiver must answer within this (§6, §8). */
export const RESPONSE_TIMEOUT_MS = 10_000;

/**
 * Why an attempt got no HTTP status: `timeout` (no answer in time), `connection` (DNS, connect,
 * TLS or reset), `refused` (the target or the request was refused before sending: SSRF check,
 * a header value that cannot be sent).
 */
export type DeliveryErrorKind = 'timeout' | 'connection' | 'refused';
export type AttemptOutcome = 'success' | 'retry' | 'fail';

/**
 * 2xx succeeds; 3xx (redirects are not followed), 429, 5xx, timeouts and connection errors are
 * retried; any other 4xx and a refusal end the delivery. A status outside 200–599 is treated as a
 * broken answer and retried.
 */
export function classifyResponse(outcome: number | { status: number } | { error: DeliveryErrorKind }): AttemptOutcome {
  if (typeof outcome === 'object' && 'error' in outcome) return outcome.error === 'refused' ? 'fail' : 'retry';
  const status = typeof outcome === 'number' ? outcome : outcome.status;
  if (status >= 200 && status < 300) return 'success';
  if (status === 429) return 'retry';
  if (status >= 400 && status < 500) return 'fail';
  return 'retry';
}
