import type { MikroORM } from '@mikro-orm/core';
import { encryptSecret } from '#libs/core';
import { queries, sql, type Tables } from '#libs/db';
import type { WebhookEndpoint } from './entities.js';
import type { HeaderPair } from './types.js';

/*
 * Configured header values are credentials (an `Authorization: Bearer …` to the customer's own
 * server): sealed at rest like the signing secret (AES-GCM, the key derived from APP_SECRET), shown
 * only masked, never read back by the routes; the deliverer unseals them at send time (decisions.md
 * "Stored secrets and limits (issue 28)").
 */

/** A configured header as stored: its name, its value sealed, and the masked value the routes show. */
export interface SealedHeader {
  key: string;
  sealed: string;
  masked: string;
}

/** A header stored before values were sealed: sealed when a process opens the database (`sealPlainHeaders`), read as is until then. */
export interface PlainHeader {
  key: string;
  value: string;
}

export type StoredHeader = SealedHeader | PlainHeader;

/** What stands for the hidden part of a value. Not Latin-1, so no header value a caller can send contains it. */
export const MASK = '••••';

/** Authentication scheme words kept in front of the mask (`Bearer ••••1a2b`): they name the kind of credential, not the credential. */
const SCHEMES = new Set(['basic', 'bearer', 'digest', 'token', 'negotiate', 'apikey', 'key']);

/** The last four characters are shown only of a secret part at least this long (of a shorter one they would give away too much). */
const TAIL_FROM = 12;

/**
 * The masked form of a value: a leading authentication scheme word (Basic, Bearer, Digest, Token,
 * Negotiate, ApiKey, Key; any case) followed by a space is kept, the rest becomes `••••` plus its
 * last four characters when it is 12 characters or longer. `Bearer sk_live_51Hx…1a2b` → `Bearer
 * ••••1a2b`; `hunter2` → `••••`; an empty value stays empty.
 */
export function maskHeaderValue(value: string): string {
  if (value === '') return '';
  const scheme = /^(\S+) +(\S[\s\S]*)$/.exec(value);
  const kept = scheme && SCHEMES.has(scheme[1]!.toLowerCase()) ? scheme : null;
  const secret = kept ? kept[2]! : value;
  return `${kept ? `${kept[1]} ` : ''}${MASK}${secret.length >= TAIL_FROM ? secret.slice(-4) : ''}`;
}

/** True for a value as the routes show it (it carries the mask): on update, it stands for the stored value. */
export function isMaskedValue(value: string): boolean {
  return value.includes(MASK);
}

const isSealed = (h: StoredHeader): h is SealedHeader => 'sealed' in h;

/** A stored header's value as the routes show it. */
const maskedOf = (h: StoredHeader): string => (isSealed(h) ? h.masked : maskHeaderValue(h.value));

/** The headers as the routes show them: names and masked values. */
export function maskedHeaders(stored: readonly StoredHeader[]): HeaderPair[] {
  return stored.map((h) => ({ key: h.key, value: maskedOf(h) }));
}

/** The headers with their real values, for a delivery (`unseal` may cache). */
export function openHeaders(stored: readonly StoredHeader[], unseal: (sealed: string) => string): HeaderPair[] {
  return stored.map((h) => ({ key: h.key, value: isSealed(h) ? unseal(h.sealed) : h.value }));
}

function seal(key: string, value: string, sealKey: Buffer): SealedHeader {
  return { key, sealed: encryptSecret(sealKey, value), masked: maskHeaderValue(value) };
}

/** Stored headers, every value sealed (a plain one is sealed now). */
export function sealStored(stored: readonly StoredHeader[], sealKey: Buffer): SealedHeader[] {
  return stored.map((h) => (isSealed(h) ? h : seal(h.key, h.value, sealKey)));
}

/**
 * The headers of a create or an update (the list replaces the stored one, §4.6), sealed. A value
 * exactly as the routes show it for the same name (case-insensitive) keeps the stored value, so a
 * list read and sent back changes nothing; any other masked value is refused (`errors` by path):
 * the real value is never read back, so a mask cannot stand for a value that is not stored.
 */
export function sealHeaders(
  given: readonly HeaderPair[],
  stored: readonly StoredHeader[],
  sealKey: Buffer,
): { headers: SealedHeader[]; errors: Record<string, string[]> } {
  const errors: Record<string, string[]> = {};
  const headers = given.map(({ key, value }, i) => {
    if (!isMaskedValue(value)) return seal(key, value, sealKey);
    const kept = stored.find((h) => h.key.toLowerCase() === key.toLowerCase() && maskedOf(h) === value);
    if (!kept) {
      errors[`headers[${i}].value`] = [`is a masked value (${MASK}) that stands for no stored value of ${key}: send the real value`];
      return { key, sealed: '', masked: '' };
    }
    return { ...(isSealed(kept) ? kept : seal(kept.key, kept.value, sealKey)), key };
  });
  return { headers, errors };
}

type EndpointTable = Tables<typeof WebhookEndpoint>;
const endpoints = queries<EndpointTable>();

/** Endpoints whose stored headers may hold a plain value (`"value"` appears in their JSON text), every workspace's. */
const WITH_PLAIN = endpoints.prepare((db) => db
  .selectFrom('webhook_endpoint').select(['id', 'headers', sql<string>`cast(headers as text)`.as('text')])
  .where(sql<boolean>`cast(headers as text) like '%"value"%'`), { allWorkspaces: true });

/** Replaces a row's headers when they are still the ones read (a change made meanwhile wins). */
const RESEAL = endpoints.prepare((db, p: { id: string; headers: SealedHeader[]; text: string }) => db
  .updateTable('webhook_endpoint').set({ headers: p.headers as never })
  .where('id', '=', p.id).where(sql<boolean>`cast(headers as text) = ${p.text}`));

/**
 * Seals the header values of endpoints stored before they were sealed (issue 28). Run by every
 * process that opens the database (libs/app ServicesModule's `ORM` provider), after the schema migrations: the
 * first start of this version leaves no plain value at rest; later starts find none and write
 * nothing. Answers the number of endpoints sealed.
 */
export async function sealPlainHeaders(orm: MikroORM, sealKey: Buffer): Promise<number> {
  const em = orm.em.fork();
  let sealed = 0;
  for (const row of await WITH_PLAIN.all(em, {})) {
    const stored = row.headers as unknown as StoredHeader[];
    if (stored.every(isSealed)) continue;
    sealed += await RESEAL.run(em, { id: row.id, headers: sealStored(stored, sealKey), text: row.text });
  }
  return sealed;
}
