/**
 * Normalises a phone number in international form to E.164: `+49 (151) 123-45678` → `+4915112345678`.
 * A leading `00` counts as `+`. Returns null for anything else.
 */
export function normalisePhone(raw: string): string | null {
  const compact = raw.trim().replace(/[\s().-]/g, '').replace(/^00/, '+');
  return /^\+[1-9]\d{6,14}$/.test(compact) ? compact : null;
}

/** `+49151…678` for lists that should not show whole numbers. */
export function maskPhone(phone: string): string {
  return phone.length > 7 ? `${phone.slice(0, 6)}…${phone.slice(-3)}` : phone;
}
