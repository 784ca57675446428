import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 by query parameters for a GET (S3's "presigned URL"): synchronous, so
 * `url(key)` can sign while a record is shown. Only what a download link needs: GET, the `host`
 * header signed, the payload unsigned.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 */
export interface PresignCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface PresignRequest {
  /** The object's URL: origin and encoded path, no query. */
  url: string;
  region: string;
  expiresSec: number;
  now: Date;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SERVICE = 's3';

/** RFC 3986 encoding of a query name or value, as SigV4 wants it (`encodeURIComponent` leaves !'()* alone). */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

/** `20130524T000000Z` */
function amzDate(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

export class Presigner {
  /** The day's signing key (four HMACs) is kept while the day lasts. */
  private signingKey?: { scope: string; key: Buffer };

  constructor(private readonly credentials: PresignCredentials) {}

  private keyFor(day: string, region: string): Buffer {
    const scope = `${day}/${region}`;
    if (this.signingKey?.scope !== scope) {
      const kDate = hmac(`AWS4${this.credentials.secretAccessKey}`, day);
      this.signingKey = { scope, key: hmac(hmac(hmac(kDate, region), SERVICE), 'aws4_request') };
    }
    return this.signingKey.key;
  }

  /** The URL with its X-Amz-* query: valid for `expiresSec` from `now`. */
  presignGet({ url, region, expiresSec, now }: PresignRequest): string {
    const target = new URL(url);
    const stamp = amzDate(now);
    const day = stamp.slice(0, 8);
    const scope = `${day}/${region}/${SERVICE}/aws4_request`;
    const query = [
      ['X-Amz-Algorithm', ALGORITHM],
      ['X-Amz-Credential', `${this.credentials.accessKeyId}/${scope}`],
      ['X-Amz-Date', stamp],
      ['X-Amz-Expires', String(expiresSec)],
      ['X-Amz-SignedHeaders', 'host'],
    ]
      .map(([name, value]) => `${encode(name)}=${encode(value)}`)
      .sort()
      .join('&');
    // Method, canonical URI (the path as sent: S3 does not encode it twice), query, headers, signed headers, payload.
    const canonicalRequest = ['GET', target.pathname, query, `host:${target.host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
    const stringToSign = [ALGORITHM, stamp, scope, sha256Hex(canonicalRequest)].join('\n');
    const signature = createHmac('sha256', this.keyFor(day, region)).update(stringToSign, 'utf8').digest('hex');
    return `${target.origin}${target.pathname}?${query}&X-Amz-Signature=${signature}`;
  }
}
