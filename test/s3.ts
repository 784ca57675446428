/**
 * The tests' S3-compatible server: scripts/test.sh starts s3rver (scripts/s3rver.mjs) and exports
 * TEST_S3_URL (its endpoint) and TEST_S3_DIR (where it keeps its buckets).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export function testS3Url(): string {
  const url = process.env.TEST_S3_URL;
  if (!url) throw new Error('TEST_S3_URL is not set: run the tests through `npm test`');
  return url;
}

/** A fresh bucket name (s3rver wants 3–63 characters, as S3 does). */
export const testBucket = () => `t-${randomBytes(6).toString('hex')}`;

/** The settings of STORAGE_DRIVER=s3 against the tests' server, in a bucket of its own (created on first use). */
export function s3Env(bucket = testBucket()): Record<string, string> {
  return { STORAGE_DRIVER: 's3', S3_ENDPOINT: testS3Url(), S3_BUCKET: bucket, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER', S3_CREATE_BUCKET: 'true' };
}

/** Multipart uploads begun and neither completed nor aborted (s3rver keeps their parts in <bucket>/._S3rver_uploads/<id>). */
export function pendingUploads(bucket: string): string[] {
  const dir = process.env.TEST_S3_DIR;
  if (!dir) throw new Error('TEST_S3_DIR is not set: run the tests through `npm test`');
  const uploads = join(dir, bucket, '._S3rver_uploads');
  return existsSync(uploads) ? readdirSync(uploads) : [];
}
