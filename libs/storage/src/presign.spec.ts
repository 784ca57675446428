import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { loadConfig, type S3StorageConfig } from '#libs/core';
import { Presigner } from './presign.js';
import { S3Storage } from './s3.js';

// AWS's worked example: "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)",
// https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html (GET examplebucket/test.txt).
const AWS_EXAMPLE = {
  credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
  url: 'https://examplebucket.s3.amazonaws.com/test.txt',
  now: new Date('2013-05-24T00:00:00Z'),
  signed:
    'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
    '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z' +
    '&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
};

/** The AWS SDK's own signer, as S3's presigner drives it: an independent implementation to agree with. */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (d: SourceData) => (typeof d === 'string' ? d : ArrayBuffer.isView(d) ? Buffer.from(d.buffer, d.byteOffset, d.byteLength) : Buffer.from(d));
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret ? createHmac('sha256', bytesOf(secret)) : createHash('sha256'); // the signer makes its HMACs with a secret
  }
  update(chunk: SourceData) {
    this.hash.update(bytesOf(chunk));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}
async function sdkPresign(url: string, region: string, expiresIn: number, now: Date, credentials: { accessKeyId: string; secretAccessKey: string }): Promise<string> {
  const u = new URL(url);
  const signer = new SignatureV4({ service: 's3', region, credentials, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const signed = await signer.presign(
    { method: 'GET', protocol: u.protocol, hostname: u.hostname, ...(u.port ? { port: Number(u.port) } : {}), path: u.pathname, query: {}, headers: { host: u.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
    { signingDate: now, expiresIn, unsignableHeaders: new Set(['x-amz-content-sha256']), unhoistableHeaders: new Set(['x-amz-content-sha256']) },
  );
  return String(signed.query?.['X-Amz-Signature']);
}

describe('SigV4 query presigning (S3 driver URLs)', () => {
  it("gives AWS's documented example URL exactly", () => {
    const presigner = new Presigner(AWS_EXAMPLE.credentials);
    expect(presigner.presignGet({ url: AWS_EXAMPLE.url, region: 'us-east-1', expiresSec: 86400, now: AWS_EXAMPLE.now })).toBe(AWS_EXAMPLE.signed);
  });

  it("agrees with the AWS SDK's signer: on AWS's example, and on other hosts, ports, regions, keys, lifetimes and days", async () => {
    const sdk = await sdkPresign(AWS_EXAMPLE.url, 'us-east-1', 86400, AWS_EXAMPLE.now, AWS_EXAMPLE.credentials);
    expect(new URL(AWS_EXAMPLE.signed).searchParams.get('X-Amz-Signature')).toBe(sdk);
    const presigner = new Presigner({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
    const cases: [string, string, number, string][] = [
      ['http://127.0.0.1:9000/media/r/rnd_01JD/AbC-_9.png', 'us-east-1', 604800, '2026-03-01T23:59:59Z'],
      ['https://media.s3.eu-west-3.amazonaws.com/library/fonts/Inter-Bold.ttf', 'eu-west-3', 60, '2026-03-02T00:00:00Z'],
      ['http://minio:9000/b-1.x/work/chunks/rnd_1-tok/0.mp4', 'auto', 1, '2030-12-31T12:00:00Z'],
    ];
    for (const [url, region, ttl, at] of cases) {
      const ours = new URL(presigner.presignGet({ url, region, expiresSec: ttl, now: new Date(at) }));
      expect([url, ours.searchParams.get('X-Amz-Signature')]).toEqual([url, await sdkPresign(url, region, ttl, new Date(at), { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })]);
      expect(ours.searchParams.get('X-Amz-Expires')).toBe(String(ttl));
      expect(`${ours.origin}${ours.pathname}`).toBe(url);
    }
  });
});

describe('S3Storage URLs', () => {
  const base: S3StorageConfig = {
    driver: 's3', bucket: 'examplebucket', region: 'us-east-1', accessKeyId: AWS_EXAMPLE.credentials.accessKeyId,
    secretAccessKey: AWS_EXAMPLE.credentials.secretAccessKey, forcePathStyle: false, urlTtlSec: 86400, createBucket: false,
  };

  it('presigns virtual-hosted URLs on AWS, path-style ones on a configured endpoint', () => {
    const aws = new S3Storage({ ...base, endpoint: 'https://s3.amazonaws.com' }, () => AWS_EXAMPLE.now);
    expect(aws.url('test.txt')).toBe(AWS_EXAMPLE.signed);
    const regional = new S3Storage(base);
    expect(regional.url('r/rnd_1/a.png')).toMatch(/^https:\/\/examplebucket\.s3\.us-east-1\.amazonaws\.com\/r\/rnd_1\/a\.png\?X-Amz-Algorithm=/);
    const minio = new S3Storage({ ...base, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true });
    expect(minio.url('r/rnd_1/a.png')).toMatch(/^http:\/\/127\.0\.0\.1:9000\/examplebucket\/r\/rnd_1\/a\.png\?X-Amz-Algorithm=AWS4-HMAC-SHA256&/);
  });

  it('signs each URL when it is asked for, valid S3_URL_TTL_SEC from then', () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const storage = new S3Storage({ ...base, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, urlTtlSec: 3600 }, () => now);
    const first = new URL(storage.url('a.png'));
    now = new Date('2026-01-02T00:00:00Z');
    const second = new URL(storage.url('a.png'));
    expect([first.searchParams.get('X-Amz-Date'), second.searchParams.get('X-Amz-Date')]).toEqual(['20260101T000000Z', '20260102T000000Z']);
    expect(second.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(second.searchParams.get('X-Amz-Signature')).not.toBe(first.searchParams.get('X-Amz-Signature'));
  });

  it('recognises its own URLs, signed or not, expired or not, in both forms; nothing else', () => {
    const storage = new S3Storage({ ...base, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, publicUrl: 'https://cdn.example.com/media' });
    const signing = new S3Storage({ ...base, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true }, () => new Date('2001-01-01T00:00:00Z'));
    const key = 'r/rnd_01JD/AbCdEfGhIjKlMnOpQrStUv.png';
    expect(storage.url(key)).toBe(`https://cdn.example.com/media/${key}`);
    expect(storage.keyFromUrl(storage.url(key))).toBe(key);
    expect(storage.keyFromUrl(signing.url(key))).toBe(key); // long expired: still ours, read from the bucket
    expect(storage.keyFromUrl(`http://127.0.0.1:9000/examplebucket/${key}`)).toBe(key);
    for (const other of [
      `http://127.0.0.1:9000/otherbucket/${key}`, `http://127.0.0.1:9001/examplebucket/${key}`, `https://127.0.0.1:9000/examplebucket/${key}`,
      `https://cdn.example.com/${key}`, `https://cdn.example.com/media2/${key}`, `http://u:p@127.0.0.1:9000/examplebucket/${key}`,
      'http://127.0.0.1:9000/examplebucket/r/%2e%2e/%2e%2e/secret', 'http://127.0.0.1:9000/examplebucket/', 'not a url',
    ]) {
      expect([other, storage.keyFromUrl(other)]).toEqual([other, undefined]);
    }
    const hosted = new S3Storage({ ...base, endpoint: 'https://s3.example.net' });
    expect(hosted.keyFromUrl(hosted.url(key))).toBe(key);
    expect(hosted.url(key).startsWith(`https://examplebucket.s3.example.net/${key}?`)).toBe(true);
    expect(hosted.keyFromUrl(`https://s3.example.net/examplebucket/${key}`)).toBeUndefined();
  });
});

describe('S3 storage settings', () => {
  const env = (extra: Record<string, string>) => ({ DATA_DIR: '/tmp/mr-s3-config', REDIS_URL: 'redis://127.0.0.1:1', APP_SECRET: '0'.repeat(64), ...extra });
  const s3 = { STORAGE_DRIVER: 's3', S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'ak', S3_SECRET_ACCESS_KEY: 'sk' };

  it('reads the S3 settings with their defaults', () => {
    expect(loadConfig(env(s3)).storage).toEqual({
      driver: 's3', bucket: 'media', region: 'us-east-1', accessKeyId: 'ak', secretAccessKey: 'sk', forcePathStyle: false, urlTtlSec: 604800, createBucket: true,
    });
    expect(loadConfig(env({ ...s3, APP_ENV: 'production', SIGN_IN: 'off', S3_ENDPOINT: 'http://minio:9000/', S3_PUBLIC_URL: 'https://cdn.example.com/m/', S3_URL_TTL_SEC: '3600', S3_REGION: 'eu-west-3' })).storage).toEqual({
      driver: 's3', endpoint: 'http://minio:9000', bucket: 'media', region: 'eu-west-3', accessKeyId: 'ak', secretAccessKey: 'sk', forcePathStyle: true,
      publicUrl: 'https://cdn.example.com/m', urlTtlSec: 3600, createBucket: false,
    });
    expect(loadConfig(env({ ...s3, S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: 'false', S3_CREATE_BUCKET: 'false' })).storage).toMatchObject({ forcePathStyle: false, createBucket: false });
  });

  it('refuses a missing or malformed S3 setting, naming the variable', () => {
    const refused: [Record<string, string>, RegExp][] = [
      [{ S3_BUCKET: '' }, /^Configuration error: S3_BUCKET is required when STORAGE_DRIVER=s3/],
      [{ S3_BUCKET: 'b' }, /^Configuration error: S3_BUCKET must be 3–63/],
      [{ S3_BUCKET: 'Media_Files' }, /^Configuration error: S3_BUCKET /],
      [{ S3_ACCESS_KEY_ID: '' }, /^Configuration error: S3_ACCESS_KEY_ID is required/],
      [{ S3_SECRET_ACCESS_KEY: '' }, /^Configuration error: S3_SECRET_ACCESS_KEY is required/],
      [{ S3_ENDPOINT: 'minio:9000' }, /^Configuration error: S3_ENDPOINT /],
      [{ S3_ENDPOINT: 'http://minio:9000/bucket' }, /^Configuration error: S3_ENDPOINT must be an origin without a path/],
      [{ S3_PUBLIC_URL: 'https://cdn.example.com/?sig=1' }, /^Configuration error: S3_PUBLIC_URL must not carry a query/],
      [{ S3_URL_TTL_SEC: '604801' }, /^Configuration error: S3_URL_TTL_SEC must be an integer from 1 to 604800/],
      [{ S3_URL_TTL_SEC: '0' }, /^Configuration error: S3_URL_TTL_SEC /],
      [{ S3_FORCE_PATH_STYLE: 'yes' }, /^Configuration error: S3_FORCE_PATH_STYLE must be true or false/],
      [{ S3_CREATE_BUCKET: '1' }, /^Configuration error: S3_CREATE_BUCKET must be true or false/],
      [{ S3_REGION: 'EU West' }, /^Configuration error: S3_REGION /],
    ];
    for (const [extra, message] of refused) expect(() => loadConfig(env({ ...s3, ...extra }))).toThrow(message);
  });
});
