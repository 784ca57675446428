import type { FastifyRequest } from 'fastify';
import { ApiError } from '#libs/core';

/** The bytes of a request body as received, kept by the body parsers (app.ts) for signature checks (status callbacks). */
const RAW = Symbol('rawBody');

export function keepRawBody(req: object, body: Buffer): void {
  (req as { [RAW]?: Buffer })[RAW] = body;
}

export function rawBodyOf(req: FastifyRequest): Buffer | undefined {
  return (req as { [RAW]?: Buffer })[RAW];
}

/** Routes that take form-encoded bodies (Twilio's status callbacks); every other route refuses them (415) as before. */
export const FORM_ROUTES = /^\/[^?]*\/v1\/integrations\/messaging-provider\/status\/twilio\/[^/?]+(\?|$)/;

/** A form-encoded body of a FORM_ROUTES route as an object of strings (the last of a repeated name wins); 415 elsewhere. */
export function parseForm(url: string, body: Buffer): Record<string, string> {
  if (!FORM_ROUTES.test(url)) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'This route takes application/json');
  return Object.fromEntries(new URLSearchParams(body.toString('utf8')));
}
