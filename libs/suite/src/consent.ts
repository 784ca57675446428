import { createHash, randomBytes } from 'node:crypto';
import { ApiError, decryptSecret, deriveKey, encryptSecret, type AppConfig } from '#libs/core';
import { ProviderError } from '#libs/integrations';
import { GarbledAnswer, postToken, type GoogleDeps } from './google.js';

/** The scopes workspace-suite asks for: Sheets, Drive (every file, to list and import), contacts (read), the account's email. */
export const SUITE_SCOPES = [
  'openid', 'email',
  'https://www.googleapis.com/auth/spreadsheets',
  'https://www.googleapis.com/auth/drive',
  'https://www.googleapis.com/auth/contacts.readonly',
] as const;
/** How long an authorization URL may be used (its verifier kept in Redis). */
export const CONSENT_TTL_S = 600;
/** How long the code exchange may take. */
const EXCHANGE_MS = 30_000;

/** What is kept, sealed, under the state until the code comes back. */
interface PendingConsent {
  workspaceId: string;
  provider: 'workspace-suite';
  verifier: string;
  redirectUri: string;
  baseUrl: string | null;
}

export interface ConsentDeps extends GoogleDeps {
  config: GoogleDeps['config'] & Pick<AppConfig, 'appSecret'>;
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). */
export function codeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * The authorization-code + PKCE connect flow of workspace-suite (RFC 6749 §4.1, RFC 7636) for the
 * CLI: `authorize` makes the consent URL (S256 challenge, state, offline access, consent prompt)
 * and keeps the verifier sealed in Redis under the state for CONSENT_TTL_S; `exchange` takes the
 * code and state back once (the entry is deleted as it is read) and trades them at the token
 * endpoint for tokens, which the caller stores sealed (IntegrationsService.connect).
 */
export class GoogleConsent {
  private readonly sealKey: Buffer;

  constructor(private readonly deps: ConsentDeps) {
    this.sealKey = deriveKey(deps.config.appSecret, 'encryption');
  }

  async authorize(workspaceId: string, opts: { baseUrl: string | null; redirectUri: string | null }): Promise<{ authorizationUrl: string; state: string; expiresAt: string; redirectUri: string }> {
    const { google } = this.deps.config;
    if (!google.clientId || !google.clientSecret) throw new ApiError('ENGINE_NOT_CONFIGURED', 'This deployment has no Google OAuth client: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET');
    const redirectUri = opts.redirectUri ?? google.redirectUri;
    const verifier = randomBytes(48).toString('base64url');
    const state = randomBytes(24).toString('base64url');
    const pending: PendingConsent = { workspaceId, provider: 'workspace-suite', verifier, redirectUri, baseUrl: opts.baseUrl };
    await this.deps.redis.set(this.deps.redisKeys.oauthConsent(state), encryptSecret(this.sealKey, JSON.stringify(pending)), 'EX', CONSENT_TTL_S);
    const url = new URL(opts.baseUrl ? `${opts.baseUrl.replace(/\/+$/, '')}/auth` : google.authUrl);
    for (const [k, v] of Object.entries({
      client_id: google.clientId, redirect_uri: redirectUri, response_type: 'code', scope: SUITE_SCOPES.join(' '), state,
      code_challenge: codeChallenge(verifier), code_challenge_method: 'S256', access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true',
    })) url.searchParams.set(k, v);
    return { authorizationUrl: url.toString(), state, redirectUri, expiresAt: new Date(Date.now() + CONSENT_TTL_S * 1000).toISOString() };
  }

  /**
   * The code of the consent `state` names, for `workspaceId`: tokens (with a refresh token) and the
   * base URL the authorization used. A state unknown, expired, used or of another workspace → 422
   * `state`; Google refusing the code (invalid_grant: wrong verifier, used or expired code) → 422 `code`.
   */
  async exchange(workspaceId: string, code: string, state: string): Promise<{ credentials: { accessToken: string; refreshToken: string; expiresAt?: string }; baseUrl: string | null }> {
    const { google } = this.deps.config;
    const sealed = await this.deps.redis.getdel(this.deps.redisKeys.oauthConsent(state));
    let pending: PendingConsent | null = null;
    try {
      pending = sealed ? (JSON.parse(decryptSecret(this.sealKey, sealed)) as PendingConsent) : null;
    } catch { /* refused below */ }
    if (!pending || pending.workspaceId !== workspaceId) {
      throw new ApiError('VALIDATION_FAILED', 'No authorization is pending under this state for this workspace (unknown, used, or older than 10 minutes): run integration:authorize again', {
        errors: { state: ['unknown, used or expired'] },
      });
    }
    const { verifier, redirectUri, baseUrl } = pending;
    let tokens;
    try {
      tokens = await postToken(this.deps, baseUrl, { timeoutMs: EXCHANGE_MS, secret: code, subject: 'the authorization code' }, () => ({
        grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: google.clientId ?? '', client_secret: google.clientSecret ?? '',
      }));
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'auth') throw new ApiError('VALIDATION_FAILED', `The authorization server refused the code: ${err.message}`, { errors: { code: [err.message] } });
      if (err instanceof ProviderError && err.kind === 'unavailable') throw new ApiError('PROVIDER_UNAVAILABLE', `${err.message}; try again shortly`);
      if (err instanceof ProviderError || err instanceof GarbledAnswer) throw new ApiError('PROVIDER_ERROR', err.message);
      throw err;
    }
    if (!tokens.refreshToken) throw new ApiError('PROVIDER_ERROR', 'The authorization server granted no refresh token (access_type=offline and prompt=consent were asked for); revoke the app\'s access in the Google account and authorize again');
    return { credentials: { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, ...(tokens.expiresAt ? { expiresAt: tokens.expiresAt } : {}) }, baseUrl };
  }
}
