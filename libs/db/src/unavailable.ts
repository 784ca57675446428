import { ConnectionException } from '@mikro-orm/core';

/** Socket failures of a database client: the server is down, unreachable or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs of a server that refuses or ends connections: admin/crash shutdown, starting up, too many connections (and class 08). */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres' own words for a connection lost or never made. */
const CLIENT_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|permission denied for database/;

/**
 * Whether a query failed because the database cannot be reached (PostgreSQL down, restarting, or
 * refusing this service's connections): the API answers 503 DEPENDENCY_UNAVAILABLE, not 500.
 * SQLite's "database is locked" is not this: `retryBusy` handles it. The error and its causes are read.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined, depth = 0; e && typeof e === 'object' && depth < 4; e = e.cause as typeof e, depth++) {
    if (e instanceof ConnectionException) return true;
    const code = typeof e.code === 'string' ? e.code : '';
    if (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')) return true;
    if (typeof e.message === 'string' && CLIENT_MESSAGES.test(e.message)) return true;
  }
  return false;
}
