import { AsyncLocalStorage } from 'node:async_hooks';
import { ConsoleLogger, type LogLevel } from '@nestjs/common';

// Logs that follow a render (issue 30): every line of the API and the worker about a request or a job
// carries the ids of what it is about (request, render, asset, transcription, campaign, job), read
// from the async context the request or job runs in, so `grep rnd_…` shows a render's whole life
// across processes. JSON lines in production, readable lines in development; what looks like a
// secret is masked before a line is written. docs/decisions.md "Fleet (issue 30): logs".

/** The ids a log line carries (only those known where it is written). */
export interface LogContext {
  requestId?: string;
  renderId?: string;
  assetId?: string;
  transcriptionId?: string;
  campaignId?: string;
  eventId?: string;
  deliveryId?: string;
  jobId?: string;
  queue?: string;
}

/** What a request id may be: a caller's `X-Request-Id` is kept when it matches, and a job carries it on. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const context = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `ids` added to the log context (its own copy: a sibling does not see them). */
export function withLogContext<T>(ids: LogContext, fn: () => T): T {
  return context.run({ ...context.getStore(), ...ids }, fn);
}

/** Adds ids to the current context (a render's id once the request made it). */
export function addLogContext(ids: LogContext): void {
  const store = context.getStore();
  if (store) Object.assign(store, ids);
}

export function currentLogContext(): LogContext {
  return { ...context.getStore() };
}

/**
 * What a secret looks like in a message, and its mask: API keys, bearer and basic credentials, webhook
 * signing secrets, Google's access and refresh tokens, one-time codes named as such, and key=value
 * pairs whose key names a secret.
 */
const SECRETS: [RegExp, string][] = [
  [/\bpk_(live|test)_[A-Za-z0-9]{8,}/g, 'pk_$1_[redacted]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]'],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, 'whsec_[redacted]'],
  [/\bya29\.[\w.-]{8,}/g, 'ya29.[redacted]'],
  [/\b1\/\/[\w.-]{10,}/g, '1//[redacted]'],
  [/\b(code|otp|password|secret|token|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token)(["']?\s*[:=]\s*["']?)[^\s"',;&]{4,}/gi, '$1$2[redacted]'],
];

/** `text` with what looks like a secret masked. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const [pattern, mask] of SECRETS) out = out.replace(pattern, mask);
  return out;
}

/** The application's logger: Nest's console logger, JSON or text, with the context's ids and without secrets. */
export class AppLogger extends ConsoleLogger {
  constructor(opts: { json: boolean; logLevels: LogLevel[] }) {
    super({ json: opts.json, logLevels: opts.logLevels, ...(opts.json ? {} : { colors: false }) });
  }

  protected override getJsonLogObject(message: unknown, options: Parameters<ConsoleLogger['getJsonLogObject']>[1]): ReturnType<ConsoleLogger['getJsonLogObject']> {
    const record = super.getJsonLogObject(typeof message === 'string' ? scrubSecrets(message) : message, options);
    return { ...record, ...context.getStore() };
  }

  protected override stringifyMessage(message: unknown, logLevel: LogLevel): string {
    const ids = Object.values(context.getStore() ?? {}).filter(Boolean);
    const text = scrubSecrets(super.stringifyMessage(message, logLevel));
    return ids.length ? `[${ids.join(' ')}] ${text}` : text;
  }
}

/** The log levels Nest prints for LOG_LEVEL. */
export function nestLogLevels(level: string): LogLevel[] {
  const order: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
  const cut = { fatal: 1, error: 2, warn: 3, info: 4, debug: 5, trace: 6 }[level] ?? 3;
  return order.slice(0, cut);
}
