import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { CursorCodec } from './cursor.js';
import { ApiError, ERROR_STATUS } from './errors.js';
import { isId, newId } from './ids.js';
import { decryptSecret, deriveKey, encryptSecret } from './secrets.js';

describe('ids', () => {
  it('are prefixed, random and sort by creation time', () => {
    const a = newId('render', 1_700_000_000_000);
    const b = newId('render', 1_700_000_000_001);
    expect(a).toMatch(/^rnd_[0-9A-Z]{26}$/);
    expect(a < b).toBe(true);
    expect(newId('render', 5)).not.toBe(newId('render', 5));
    expect(isId('render', a)).toBe(true);
    expect(isId('template', a)).toBe(false);
  });
});

describe('cursor tokens (§1.6)', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 7));
  it('round-trip within their scope', () => {
    const token = codec.encode('credits:org_1', { at: '2026-01-01', id: 'led_1' });
    expect(codec.decode('credits:org_1', token)).toEqual({ at: '2026-01-01', id: 'led_1' });
  });
  it('refuse tampering and another scope with 422 INVALID_LIST_QUERY', () => {
    const token = codec.encode('credits:org_1', { id: 'led_1' });
    const [body, sig] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ id: 'led_9' })).toString('base64url')}.${sig}`;
    for (const [scope, t] of [['credits:org_1', forged], ['credits:org_2', token], ['credits:org_1', body], ['credits:org_1', 'x.y.z']]) {
      expect(() => codec.decode(scope, t)).toThrow(ApiError);
      try {
        codec.decode(scope, t);
      } catch (err) {
        expect((err as ApiError).code).toBe('INVALID_LIST_QUERY');
      }
    }
  });
});

describe('errors (§7)', () => {
  it('map every contract code to its status', () => {
    expect(ERROR_STATUS.TEMPLATE_NOT_OWNED).toBe(403);
    expect(ERROR_STATUS.INVALID_LIST_QUERY).toBe(422);
    expect(ERROR_STATUS.ENGINE_NOT_CONFIGURED).toBe(503);
    expect(ERROR_STATUS.INTEGRATION_NOT_CONNECTED).toBe(409);
    expect(new ApiError('RATE_LIMIT_EXCEEDED', 'x').status).toBe(429);
  });
});

describe('sealed secrets', () => {
  it('round-trip and refuse tampering', () => {
    const key = deriveKey(Buffer.alloc(32, 1), 'encryption');
    const sealed = encryptSecret(key, 'whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(decryptSecret(key, sealed)).toBe('whsec_abc');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_abd').toString('base64url');
    expect(() => decryptSecret(key, parts.join('.'))).toThrow();
  });
});

describe('configuration', () => {
  const base = { REDIS_URL: 'redis://127.0.0.1:6379', DATA_DIR: mkdtempSync(join(tmpdir(), 'cfg-')) };

  it('uses embedded defaults: SQLite under the data folder, development, port 3000', () => {
    const c = loadConfig(base);
    expect(c.env).toBe('development');
    expect(c.port).toBe(3000);
    expect(c.prefix).toBe('api');
    expect(c.database).toEqual({ kind: 'sqlite', file: join(base.DATA_DIR, 'app.sqlite') });
    // The development secret is generated once and kept.
    expect(readFileSync(join(base.DATA_DIR, 'app-secret'), 'utf8')).toBe(c.appSecret.toString('hex'));
    expect(loadConfig(base).appSecret.equals(c.appSecret)).toBe(true);
  });

  it('starts in production with Twilio for sign-in codes, or with sign-in turned off (issue 28)', () => {
    const production = { ...base, APP_ENV: 'production', APP_SECRET: 'a'.repeat(64) };
    const twilio = { SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+15005550006' };
    expect(loadConfig({ ...production, ...twilio })).toMatchObject({ signIn: true, sms: { provider: 'twilio', accountSid: 'AC1', from: '+15005550006' } });
    expect(loadConfig({ ...production, SIGN_IN: 'off' })).toMatchObject({ signIn: false, sms: { provider: 'outbox' } });
    expect(() => loadConfig(production)).toThrow(/SMS_PROVIDER must be twilio in production \(it is not set\).*SIGN_IN=off/);
    expect(loadConfig(base)).toMatchObject({ signIn: true, sms: { provider: 'outbox' } });
  });

  it("keeps §6's webhook retry schedule and a 30 s delivery lock unless told otherwise (the tests shorten both)", () => {
    expect(loadConfig(base)).toMatchObject({ webhookLockMs: 30_000 });
    expect(loadConfig(base).webhookRetryDelaysMs).toBeUndefined();
    expect(loadConfig({ ...base, WEBHOOK_LOCK_MS: '5000', WEBHOOK_RETRY_DELAYS_MS: '100, 200,300,400' })).toMatchObject({ webhookLockMs: 5000, webhookRetryDelaysMs: [100, 200, 300, 400] });
  });

  it('switches to PostgreSQL with a postgres:// DATABASE_URL', () => {
    expect(loadConfig({ ...base, DATABASE_URL: 'postgres://u:p@db:5432/app' }).database).toEqual({ kind: 'postgresql', url: 'postgres://u:p@db:5432/app' });
  });

  it.each([
    [{ APP_ENV: 'staging' }, 'APP_ENV'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ REDIS_URL: '' }, 'REDIS_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ TRUSTED_PROXIES: '10.0.0.0/99' }, 'TRUSTED_PROXIES'],
    [{ APP_SECRET: 'abcd' }, 'APP_SECRET'],
    [{ APP_ENV: 'production' }, 'APP_SECRET'],
    [{ SIGN_IN: 'maybe' }, 'SIGN_IN'],
    // Issue 28: production with the outbox (the default, or said) would text no sign-in code to anyone.
    [{ APP_ENV: 'production', APP_SECRET: 'a'.repeat(64) }, 'SMS_PROVIDER'],
    [{ APP_ENV: 'production', APP_SECRET: 'a'.repeat(64), SMS_PROVIDER: 'outbox' }, 'SMS_PROVIDER'],
    [{ APP_ENV: 'production', APP_SECRET: 'a'.repeat(64), SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 't' }, 'TWILIO_FROM'],
    [{ WEBHOOK_LOCK_MS: '500' }, 'WEBHOOK_LOCK_MS'],
    // §6's 5 attempts: 4 waits, no more, no fewer; and production keeps §6's schedule.
    [{ WEBHOOK_RETRY_DELAYS_MS: '100,200,300' }, 'WEBHOOK_RETRY_DELAYS_MS'],
    [{ WEBHOOK_RETRY_DELAYS_MS: '100,200,300,400,500' }, 'WEBHOOK_RETRY_DELAYS_MS'],
    [{ APP_ENV: 'production', APP_SECRET: 'a'.repeat(64), SIGN_IN: 'off', WEBHOOK_RETRY_DELAYS_MS: '100,200,300,400' }, 'WEBHOOK_RETRY_DELAYS_MS'],
  ])('stops on a malformed or missing variable, naming it: %j', (env, name) => {
    let caught: unknown;
    try {
      loadConfig({ ...base, ...env });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(name);
    expect((caught as Error).message).toContain(name);
  });
});
