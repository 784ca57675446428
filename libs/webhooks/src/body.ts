import { createHash } from 'node:crypto';

/** A top-level payload value as a form field: strings as they are, nested values as JSON text, null as ''. */
export function fieldText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `application/x-www-form-urlencoded`: one field per top-level key (§6 "Shaping the request"). */
export function encodeForm(payload: Record<string, unknown>): Buffer {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(payload)) params.append(key, fieldText(value));
  return Buffer.from(params.toString(), 'utf8');
}

/** A field name inside `name="…"`, escaped as the HTML form encoder does. */
function quoteName(name: string): string {
  return name.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

/**
 * The boundary of a multipart body: derived from the event id and attempt (so a delivery is
 * reproducible), re-derived in the unlikely case that it occurs inside a field.
 */
export function multipartBoundary(seed: string, parts: string[]): string {
  for (let round = 0; ; round++) {
    const boundary = `service-webhooks-${createHash('sha256').update(`${seed}:${round}`).digest('hex').slice(0, 32)}`;
    if (!parts.some((p) => p.includes(boundary))) return boundary;
  }
}

/** `multipart/form-data` (RFC 7578): one part per top-level key, CRLF line ends. */
export function encodeMultipart(payload: Record<string, unknown>, seed: string): { body: Buffer; boundary: string } {
  const fields = Object.entries(payload).map(([key, value]) => [key, fieldText(value)] as const);
  const boundary = multipartBoundary(seed, fields.flatMap(([k, v]) => [k, v]));
  const chunks = fields.map(([key, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quoteName(key)}"\r\n\r\n${value}\r\n`);
  chunks.push(`--${boundary}--\r\n`);
  return { body: Buffer.from(chunks.join(''), 'utf8'), boundary };
}
