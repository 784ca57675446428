import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, clientAddress, ipAllowed, type AppConfig } from '#libs/core';
import { KeyAuthenticator, keyMode, looksLikeApiKey, RequestMeter, type CachedKey } from '#libs/keys';
import { APP_CONFIG } from '#libs/app';
import { bearerToken } from './bearer.js';
import type { RouteAuth } from './decorators.js';

/** Reloads allowed per request when the workspace's auth version keeps moving. */
const MAX_RELOADS = 3;

type KeyRoute = Extract<RouteAuth, { kind: 'key' }>;

/**
 * API keys (§5, §7, §8): the presented key → its cached record, checked in the contract's order
 * (missing → unknown/revoked/expired → scope → IP → suspension), then metered: one Redis script per
 * workspace and key mode per event-loop turn counts the request in the plan's minute window (429
 * RATE_LIMIT_EXCEEDED with Retry-After) and its month (402 LIMIT_APIREQUESTS), and compares the
 * workspace's auth version; a stale record is read again and checked again. A refusal read from the
 * cache is confirmed against the current auth version before it is answered.
 */
@Injectable()
export class KeyAuthentication {
  constructor(
    private readonly authenticator: KeyAuthenticator,
    private readonly meter: RequestMeter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async authenticate(req: FastifyRequest, reply: FastifyReply, route: KeyRoute): Promise<CachedKey> {
    const raw = this.rawKey(req);
    if (!raw) throw new ApiError('NO_API_KEY', 'Send an API key in x-api-key or Authorization: Bearer');
    if (!keyMode(raw)) throw new ApiError('INVALID_API_KEY', 'The API key is not valid');
    const hash = this.authenticator.hash(raw);
    let entry = await this.checked(req, route, hash, await this.authenticator.lookup(hash));
    for (let reloads = 0; ; reloads++) {
      const outcome = await this.meter.count(entry);
      if (outcome.state === 'stale') {
        if (reloads >= MAX_RELOADS) throw new ApiError('INTERNAL_ERROR', 'Workspace settings kept changing; try again');
        entry = await this.checked(req, route, hash, await this.authenticator.load(hash));
        continue;
      }
      const headers = {
        'x-ratelimit-limit': String(outcome.limit),
        'x-ratelimit-remaining': String(outcome.remaining),
        'x-ratelimit-reset': String(Math.ceil(outcome.resetAt / 1000)),
      };
      if (outcome.state === 'rate') {
        throw new ApiError('RATE_LIMIT_EXCEEDED', `Rate limit of ${outcome.limit} requests per minute exceeded`, { headers: { ...headers, 'retry-after': String(outcome.retryAfterSec) } });
      }
      if (outcome.state === 'month') {
        throw new ApiError('LIMIT_APIREQUESTS', `The ${entry.plan.name} plan's ${entry.plan.apiRequestsPerMonth} API requests for this month are used up`, { headers });
      }
      reply.headers(headers);
      return entry;
    }
  }

  private async checked(req: FastifyRequest, route: KeyRoute, hash: string, found: CachedKey | null): Promise<CachedKey> {
    let entry = found;
    for (let reloads = 0; ; reloads++) {
      const failure = this.check(entry, route, req);
      if (!failure) break;
      if (!entry || entry.revoked || reloads >= MAX_RELOADS || !(await this.authenticator.isStale(entry))) throw failure;
      entry = await this.authenticator.load(hash);
    }
    const ok = entry as CachedKey;
    req.principal = { kind: 'key', keyId: ok.keyId, key: ok.row, workspaceId: ok.workspaceId, mode: ok.mode, plan: ok.plan, scopes: ok.scopes };
    return ok;
  }

  /**
   * True when the request presents a dashboard session instead of a key: no x-api-key and a bearer
   * value that is not shaped like a key (decisions.md "Sessions"). The key path reads one header more.
   */
  carriesSession(req: FastifyRequest): boolean {
    if (req.headers['x-api-key']) return false;
    const token = bearerToken(req.headers.authorization);
    return token !== null && !looksLikeApiKey(token);
  }

  private rawKey(req: FastifyRequest): string | null {
    const header = req.headers['x-api-key'];
    if (typeof header === 'string' && header) return header.trim();
    const token = bearerToken(req.headers.authorization);
    if (!token) return null;
    if (!looksLikeApiKey(token)) {
      // Only routes that refuse sessions (@KeyOnly) get here with one.
      throw new ApiError('NO_API_KEY', 'This endpoint takes an API key (pk_live_… or pk_test_…); a session token was sent');
    }
    return token;
  }

  /** The first failing check in contract order, or null. */
  private check(entry: CachedKey | null, route: KeyRoute, req: FastifyRequest): ApiError | null {
    if (!entry) return new ApiError('INVALID_API_KEY', 'The API key is not valid');
    if (entry.revoked) return new ApiError('INVALID_API_KEY', 'The API key has been revoked');
    if (entry.expiresAt !== null && Date.now() >= entry.expiresAt) return new ApiError('INVALID_API_KEY', 'The API key has expired');
    const missing = route.scopes.filter((s) => !entry.scopes.has(s));
    if (missing.length) return new ApiError('INSUFFICIENT_SCOPE', `The API key lacks the scope ${missing.join(', ')}`);
    if (entry.ipRules.length) {
      const ip = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.config.trustedProxies);
      if (!ipAllowed(entry.ipRules, ip)) return new ApiError('IP_NOT_ALLOWED', 'The caller\'s address is not on the API key\'s allowlist');
    }
    if (entry.suspended) return new ApiError('ORG_SUSPENDED', 'The workspace is suspended');
    return null;
  }
}
