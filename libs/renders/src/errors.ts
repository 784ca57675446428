import { ApiError, isErrorCode } from '#libs/core';
import type { Render, RenderErrorInfo } from './entities.js';

/**
 * How a failure is written on the render (its `error`, decisions.md "Render record"): a refusal the
 * caller caused (an ApiError: an unknown font, unreachable media, an unsupported asset, a plan
 * ceiling) keeps its code, message and `errors`; anything else is a fault of ours, INTERNAL_ERROR with
 * `internal` as its message (the cause goes to the log, not to the caller).
 */
export function renderError(err: unknown, stage: string, internal = 'The renderer failed; the credits were released'): RenderErrorInfo {
  if (!(err instanceof ApiError)) return { code: 'INTERNAL_ERROR', message: internal, stage };
  return { code: err.code, message: err.message, stage, ...(err.extras.errors ? { errors: err.extras.errors } : {}) };
}

/** An error's first line with what changes between runs (numbers, hex tokens: ports, ids, times) taken out. */
function failureShape(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/[0-9a-f]{8,}/gi, '#').replace(/\d+(\.\d+)?/g, '#').trim();
}

/** What of an internal error may be shown: its first line, without URLs or file paths (ours), at most 200 characters. */
function shownCause(message: string): string {
  const line = (message.split('\n')[0] ?? '').replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, '<url>').replace(/(^|[\s"'(=])\/[^\s"')]+/g, '$1<file>').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Failures that say the machine, not the edit, failed: a system error (`code` ECONNREFUSED, ENOSPC…),
 * a time-out, a dropped connection, a browser that crashed or closed, a download marked transient.
 * The same one twice is an outage, not an edit that can never render: it keeps its runs.
 */
const INFRASTRUCTURE_WORDS = /\b(socket hang up|timed? ?out|timeout|target closed|session closed|protocol error|crash(ed)?|browser has disconnected|out of memory|heap)\b/i;
const ERRNO = /\bE(CONN[A-Z]+|TIMEDOUT|PIPE|AI_AGAIN|NOTFOUND|NOSPC|MFILE|NFILE|HOSTUNREACH|NETUNREACH|NOMEM|IO|BUSY|AGAIN)\b/;
const INFRASTRUCTURE = { test: (text: string) => INFRASTRUCTURE_WORDS.test(text) || ERRNO.test(text) };

export function isInfrastructureFailure(err: unknown): boolean {
  const e = err as { code?: unknown; transient?: unknown; message?: unknown } | undefined;
  if (e?.transient === true) return true;
  if (typeof e?.code === 'string' && /^E[A-Z0-9_]+$/.test(e.code)) return true;
  return INFRASTRUCTURE.test(typeof e?.message === 'string' ? e.message : String(err));
}

/**
 * How a failed run of a video job ends its render (issue 27), or undefined to run it again: a
 * refusal the edit caused (an ApiError) keeps its code; a fault of ours that repeats the run before's
 * (`previous`, BullMQ's failedReason) to the letter, but for numbers, and is no infrastructure
 * failure (isInfrastructureFailure), is an edit that can never render: 422 RENDER_FAILED with the
 * cause, not a third run; after `maxRuns` runs, INTERNAL_ERROR.
 */
export function runFailure(err: unknown, stage: string, attempt: number, maxRuns: number, previous?: string): RenderErrorInfo | undefined {
  if (err instanceof ApiError) return renderError(err, stage);
  const message = err instanceof Error ? err.message : String(err);
  if (previous && attempt > 1 && !isInfrastructureFailure(err) && !INFRASTRUCTURE.test(previous) && failureShape(previous) === failureShape(message)) {
    return { code: 'RENDER_FAILED', message: `The render failed the same way on two runs, so it is not run again: ${shownCause(message)}; the credits were released`, stage };
  }
  if (attempt >= maxRuns) return renderError(err, stage, `The render failed ${attempt} times; the credits were released`);
  return undefined;
}

/** The message of a still whose worker died (WORKER_LOST): it is never drawn again (issue 27). */
export const STILL_WORKER_LOST = 'The worker drawing this still stopped; it is not drawn again (a render may cost at most one worker); the credits were released';

/** The HTTP answer of a failed render: its recorded error, with the render's id and status as `data`. */
export function renderFailure(row: Pick<Render, 'id' | 'status' | 'error'>): ApiError {
  const e = row.error ?? { code: 'INTERNAL_ERROR', message: 'The render failed', stage: 'rendering' };
  return new ApiError(isErrorCode(e.code) ? e.code : 'INTERNAL_ERROR', e.message, { ...(e.errors ? { errors: e.errors } : {}), data: { id: row.id, status: row.status } });
}
