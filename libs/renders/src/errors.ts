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

/** The message of a still whose worker died (WORKER_LOST): it is never drawn again (issue 27). */
export const STILL_WORKER_LOST = 'The worker drawing this still stopped; it is not drawn again (a render may cost at most one worker); the credits were released';

/** The HTTP answer of a failed render: its recorded error, with the render's id and status as `data`. */
export function renderFailure(row: Pick<Render, 'id' | 'status' | 'error'>): ApiError {
  const e = row.error ?? { code: 'INTERNAL_ERROR', message: 'The render failed', stage: 'rendering' };
  return new ApiError(isErrorCode(e.code) ? e.code : 'INTERNAL_ERROR', e.message, { ...(e.errors ? { errors: e.errors } : {}), data: { id: row.id, status: row.status } });
}
