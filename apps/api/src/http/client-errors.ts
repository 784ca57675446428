import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, newId, validationFailed, type ErrorCode, type FieldErrors } from '#libs/core';
import { errorBody, sendError } from './exception.filter.js';

/**
 * Bad input that never reaches a DTO (decisions.md "HTTP and errors"): what the HTTP server, the
 * router and the JSON parser refuse, and the NUL character, answered in the §7 envelope instead of
 * the server's bare replies or a database error (the one place each is decided; wired in app.ts).
 */

/** Deepest nesting of arrays and objects in a JSON body; deeper answers 400 INVALID_REQUEST. */
export const MAX_JSON_DEPTH = 64;

/** Whether the JSON text nests arrays and objects deeper than `max`: one pass over the text, before it is parsed. */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** The too-deep body as the JSON parser's error (the exception filter writes it). */
export const tooDeep = () => new ApiError('INVALID_REQUEST', `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/** Paths of the strings (values or keys) holding U+0000, e.g. `params.id`, `query.search`, `edit.timeline[0].name`. */
function nulPaths(value: unknown, path: string, out: FieldErrors): FieldErrors {
  if (typeof value === 'string') {
    if (value.includes('\0')) out[path] = [NUL_MESSAGE];
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulPaths(v, `${path}[${i}]`, out));
  } else if (typeof value === 'object' && value !== null && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (k.includes('\0')) out[at] = [NUL_MESSAGE];
      else nulPaths(v, at, out);
    }
  }
  return out;
}

/**
 * preValidation hook: a NUL character anywhere in the path's parameters, the query or a JSON body is
 * 422 VALIDATION_FAILED by path, on every route and both databases alike (PostgreSQL refuses it in
 * text; SQLite would cut the statement short). The body's depth is bounded by the JSON parser.
 */
export async function refuseNul(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const errors = nulPaths(req.params, 'params', {});
  nulPaths(req.query, 'query', errors);
  nulPaths(req.body, '', errors);
  if (Object.keys(errors).length === 0) return undefined;
  sendError(validationFailed(errors), req, reply);
  return reply;
}

/** Fastify's `frameworkErrors`: the router's refusals (a path segment over `maxParamLength`: 414; a bad %-escape: 400) in the envelope. */
export function frameworkError(err: Error, req: FastifyRequest, reply: FastifyReply): void {
  sendError(err, req, reply);
}

const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['HEADERS_TOO_LARGE', 'The request line and headers are larger than this server reads'],
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'The request was not received in time'],
};

/**
 * The HTTP server's `clientError` hook (Fastify's `clientErrorHandler`): a request the HTTP parser
 * refuses (a URL or headers over the size it reads, a malformed request, a timeout) gets the
 * envelope on the socket, which is then closed, as Node and Fastify do with their bare replies.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message] = CLIENT_ERRORS[err.code ?? ''] ?? ['INVALID_REQUEST', 'The request is not valid HTTP'];
  if (socket.writable) {
    const requestId = newId('request');
    const error = new ApiError(code, message);
    const body = JSON.stringify(errorBody(error, requestId));
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
