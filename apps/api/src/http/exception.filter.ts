import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, dependencyUnavailable, type Dependency, type ErrorCode, type ErrorEnvelope } from '#libs/core';
import { isDatabaseUnavailable } from '#libs/db';
import { isRedisUnavailable } from '#libs/redis';

const logger = new Logger('http');

/** A dependency that cannot be reached, recognised from the error a driver threw (the one place: 503, not 500). */
function unavailable(exception: unknown): Dependency | undefined {
  if (isRedisUnavailable(exception)) return 'redis';
  if (isDatabaseUnavailable(exception)) return 'database';
  return undefined;
}

/** When each dependency's outage was last logged: one line a minute while it lasts (Redis clients also log their own). */
const outageLogged = new Map<Dependency, number>();

const HTTP_STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'INVALID_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

function describe400(err: { code?: string; message: string }): string {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case undefined:
      return `The body is not valid JSON: ${err.message}`;
    default:
      return err.message;
  }
}

/** Maps anything thrown to a contract error: the one place errors are worded for HTTP. */
export function toApiError(exception: unknown, req?: FastifyRequest): ApiError {
  if (exception instanceof ApiError) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = HTTP_STATUS_CODES[status];
    if (code === 'NOT_FOUND') return new ApiError(code, `No route ${req?.method ?? ''} ${req?.url ?? ''}`.trim());
    if (code) return new ApiError(code, exception.message);
  }
  const fst = exception as { statusCode?: number; code?: string; message?: string } | null;
  if (fst && typeof fst.statusCode === 'number' && typeof fst.code === 'string' && fst.code.startsWith('FST_')) {
    const code = HTTP_STATUS_CODES[fst.statusCode];
    if (code === 'INVALID_REQUEST') return new ApiError(code, describe400({ code: fst.code, message: fst.message ?? '' }));
    if (code === 'PAYLOAD_TOO_LARGE') return new ApiError(code, 'The request body is larger than this endpoint accepts');
    if (code === 'URI_TOO_LONG') return new ApiError(code, 'A path segment is longer than this API reads (ids are at most 100 characters)');
    if (code) return new ApiError(code, fst.message ?? code);
  }
  if (exception instanceof SyntaxError && fst?.statusCode === 400) {
    return new ApiError('INVALID_REQUEST', describe400({ message: exception.message }));
  }
  const dependency = unavailable(exception);
  if (dependency) return dependencyUnavailable(dependency);
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred; quote the request id when reporting it');
}

/** The §1/§7 envelope of an error (also written by the HTTP server's client-error hook, client-errors.ts). */
export function errorBody(err: ApiError, requestId: string): ErrorEnvelope {
  const body: ErrorEnvelope = { success: false, code: err.code, message: err.message, data: err.extras.data ?? null };
  if (err.extras.errors) body.errors = err.extras.errors;
  if (err.extras.checks) body.checks = err.extras.checks;
  if (err.status >= 500) body.requestId = requestId;
  return body;
}

export function sendError(exception: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const err = toApiError(exception, req);
  if (err.code === 'INTERNAL_ERROR' && err !== exception) {
    logger.error(`${req.id} ${req.method} ${req.url}: ${(exception as Error)?.stack ?? String(exception)}`);
  }
  const dependency = err.code === 'DEPENDENCY_UNAVAILABLE' && err !== exception ? (err.extras.data as { dependency: Dependency }).dependency : undefined;
  if (dependency && Date.now() - (outageLogged.get(dependency) ?? 0) > 60_000) {
    outageLogged.set(dependency, Date.now());
    logger.warn(`${req.id} ${req.method} ${req.url}: ${dependency} unavailable, answering 503 (${(exception as Error)?.message ?? String(exception)})`);
  }
  if (err.extras.headers) void reply.headers(err.extras.headers);
  void reply.status(err.status).send(errorBody(err, String(req.id)));
}

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}
