import { createHmac } from 'node:crypto';
import { ApiError } from './errors.js';
import { safeEqual } from './secrets.js';

/**
 * Opaque, tamper-evident page tokens (contract §1.6). A token is bound to the list it came
 * from (`scope`: endpoint, workspace and filters), so it cannot be replayed against another query.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  private sign(scope: string, body: string): string {
    return createHmac('sha256', this.key).update(scope).update('\n').update(body).digest().subarray(0, 16).toString('base64url');
  }

  encode(scope: string, position: unknown): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.sign(scope, body)}`;
  }

  decode<T>(scope: string, token: string): T {
    const invalid = () =>
      new ApiError('INVALID_LIST_QUERY', 'pageToken is not valid for this list; start again without it', {
        errors: { 'query.pageToken': ['pageToken is not valid for this list'] },
      });
    const [body, sig, extra] = token.split('.');
    if (!body || !sig || extra !== undefined || !safeEqual(sig, this.sign(scope, body))) throw invalid();
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    } catch {
      throw invalid();
    }
  }
}
