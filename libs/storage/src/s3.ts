import { Readable, addAbortSignal } from 'node:stream';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command,
  PutObjectCommand, S3Client, UploadPartCommand, type BucketLocationConstraint, type CompletedPart, type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import type { S3StorageConfig } from '#libs/core';
import { contentTypeFor, servedContentType } from './content-type.js';
import {
  assertValidRange, StoredFileNotFoundError, type ByteRange, type ListedObject, type PutOptions, type StorageDriver, type StoredObject, type StoredStat,
} from './driver.js';
import { assertValidKey, assertValidPrefix, isValidKey } from './keys.js';
import { Presigner } from './presign.js';
import { keyUnderBase } from './public-url.js';

/**
 * Multipart part size (S3's smallest) and parts sent at once: a stream's upload holds QUEUE_SIZE + 1
 * part buffers (those under way and the one being filled), 15 MiB (docs/storage.md).
 */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;
/** Idle part buffers a driver keeps for the next puts (20 MiB at most). */
const POOL_IDLE = 4;
/** Keys per ListObjectsV2 page and per DeleteObjects call (S3's maximum for both). */
const PAGE = 1000;
/** Readiness and the bucket check give up after this. */
const CHECK_TIMEOUT_MS = 5_000;

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const statusOf = (err: unknown) => (err as SdkError).$metadata?.httpStatusCode;
const isMissing = (err: unknown) => statusOf(err) === 404 || ['NotFound', 'NoSuchKey', 'NoSuchBucket'].includes((err as SdkError).name ?? '');
const errorText = (err: unknown) => {
  const e = err as SdkError;
  return e.message && e.message !== 'UnknownError' ? e.message : (e.code ?? e.name ?? String(err));
};

/**
 * Part buffers used again from one put to the next: a fresh 5 MiB buffer per part lives through its
 * UploadPart, is promoted, and goes only at a full collection (docs/benchmarks.md). Taking never
 * waits: an empty pool allocates, so one slow upload never holds up another; giving back keeps
 * POOL_IDLE of them. A buffer whose request failed is not given back (its socket write may not be done).
 */
class PartPool {
  private readonly idle: Buffer[] = [];

  take(): Buffer {
    return this.idle.pop() ?? Buffer.allocUnsafeSlow(PART_SIZE);
  }

  give(buffer: Buffer): void {
    if (this.idle.length < POOL_IDLE) this.idle.push(buffer);
  }
}

/** A stream's chunk as bytes (object-mode streams may carry strings). */
const chunkBytes = (chunk: unknown): Uint8Array => {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return chunk;
  throw new TypeError(`a stored stream carries bytes or strings, not ${typeof chunk}`);
};

/**
 * An S3-compatible bucket (AWS S3, MinIO, …) shared by every process of a deployment. Objects are
 * named by their key as is; the content type is the key's extension, as for `local`. The bucket
 * is checked (and, with `createBucket`, created) once per process before the first operation.
 * Downloads never pass through the API: `url(key)` presigns a GET (SigV4, in-process, valid
 * `urlTtlSec`) or names the key under `publicUrl`.
 */
export class S3Storage implements StorageDriver {
  readonly client: S3Client;
  private readonly presigner: Presigner;
  /** `<endpoint>/<bucket>` (path style) or `<scheme>://<bucket>.<endpoint host>`: where objects are addressed. */
  private readonly bucketUrl: string;
  private readonly endpoint: string;
  private bucketReady?: Promise<void>;
  private readonly parts = new PartPool();

  constructor(
    private readonly config: S3StorageConfig,
    /** The time URLs are signed at (tests sign in the past). */
    private readonly clock: () => Date = () => new Date(),
  ) {
    const credentials = { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey };
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      credentials,
      // Checksums only where S3 requires them: S3-compatible servers do not all read the
      // aws-chunked bodies with trailing checksums the SDK sends by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: CHECK_TIMEOUT_MS },
    });
    this.presigner = new Presigner(credentials);
    this.endpoint = config.endpoint ?? `https://s3.${config.region}.amazonaws.com`;
    const endpoint = new URL(this.endpoint);
    this.bucketUrl = config.forcePathStyle ? `${endpoint.origin}/${config.bucket}` : `${endpoint.protocol}//${config.bucket}.${endpoint.host}`;
  }

  private get bucket(): string {
    return this.config.bucket;
  }

  /** The bucket, checked once per process (again after a failure). */
  private ready(): Promise<void> {
    this.bucketReady ??= this.ensureBucket().catch((err: unknown) => {
      this.bucketReady = undefined;
      throw err;
    });
    return this.bucketReady;
  }

  /**
   * HeadBucket; a missing bucket is created when the configuration allows it (S3_CREATE_BUCKET),
   * else refused naming the bucket. Another process creating it at the same moment is fine.
   */
  async ensureBucket(): Promise<void> {
    const signal = () => ({ abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), signal());
      return;
    } catch (err) {
      if (!isMissing(err)) throw this.named(err);
    }
    if (!this.config.createBucket) throw this.named(new Error('the bucket does not exist (create it, or set S3_CREATE_BUCKET=true)'));
    try {
      const location = this.config.region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: this.config.region as BucketLocationConstraint } };
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket, ...location }), signal());
    } catch (err) {
      // Created by another process meanwhile (BucketAlreadyOwnedByYou, or BucketAlreadyExists on some servers)?
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), signal()).catch(() => {
        throw this.named(err);
      });
    }
  }

  /** An error whose message names the bucket and where it is. */
  private named(err: unknown): Error {
    return new Error(`S3 bucket "${this.bucket}" at ${this.endpoint}: ${errorText(err)}`, { cause: err });
  }

  async checkReady(): Promise<void> {
    await this.ensureBucket();
  }

  /**
   * A buffer is one PutObject. A stream is copied into part buffers of the driver's pool: one that
   * ends within the first part is one PutObject, else a multipart upload (putParts). A failure or an
   * abort aborts the multipart upload; an abort that comes after the object landed deletes it again.
   */
  async put(key: string, bytes: Buffer | Readable, opts: PutOptions = {}): Promise<StoredObject> {
    assertValidKey(key);
    const contentType = servedContentType(key, opts.contentType);
    const { signal } = opts;
    signal?.throwIfAborted();
    await this.ready();
    let sizeBytes: number;
    try {
      if (Buffer.isBuffer(bytes)) {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType }));
        sizeBytes = bytes.length;
      } else {
        // The abort destroys the source: reading it fails, and the multipart upload is aborted.
        if (signal) addAbortSignal(signal, bytes);
        sizeBytes = await this.putParts(key, bytes, contentType, signal);
      }
    } catch (err) {
      signal?.throwIfAborted();
      throw err;
    }
    if (signal?.aborted) {
      // The last request was under way when the abort came: the object landed, and goes again.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
      signal.throwIfAborted();
    }
    return { key, sizeBytes };
  }

  /**
   * The stream's chunks are copied into a pooled part buffer; a full one goes up by UploadPart (the
   * multipart upload begun at the first), at most QUEUE_SIZE at once: with as many under way, the
   * stream is not read until one is done (backpressure), whose buffer is filled next. Each request's
   * body is the filled slice, which the SDK has done with when the request resolves. Answers the bytes read.
   */
  private async putParts(key: string, source: Readable, contentType: string, signal: AbortSignal | undefined): Promise<number> {
    const target = { Bucket: this.bucket, Key: key };
    const done: CompletedPart[] = [];
    const underWay = new Set<Promise<void>>();
    let uploadId: string | undefined;
    let buffer: Buffer | undefined = this.parts.take();
    let filled = 0;
    let sizeBytes = 0;
    const sendPart = (part: Buffer, length: number, id: string) => {
      const PartNumber = done.length + 1;
      done.push({ PartNumber });
      const sending = this.client.send(new UploadPartCommand({ ...target, UploadId: id, PartNumber, Body: part.subarray(0, length) })).then((out) => {
        done[PartNumber - 1].ETag = out.ETag;
        this.parts.give(part);
      });
      underWay.add(sending);
      // A failed part stops the reading (the loop below then fails with its error).
      sending.then(() => underWay.delete(sending), (err: unknown) => source.destroy(err as Error));
    };
    try {
      for await (const chunk of source) {
        let bytes = chunkBytes(chunk);
        sizeBytes += bytes.length;
        while (bytes.length > 0) {
          buffer ??= this.parts.take();
          const n = Math.min(bytes.length, PART_SIZE - filled);
          buffer.set(bytes.subarray(0, n), filled);
          filled += n;
          bytes = bytes.subarray(n);
          if (filled < PART_SIZE) continue;
          uploadId ??= await this.createUpload(target, contentType);
          sendPart(buffer, filled, uploadId);
          buffer = undefined;
          filled = 0;
          while (underWay.size >= QUEUE_SIZE) await Promise.race(underWay);
        }
      }
      signal?.throwIfAborted();
      if (uploadId === undefined) {
        const part = buffer ?? this.parts.take();
        buffer = undefined;
        await this.client.send(new PutObjectCommand({ ...target, Body: part.subarray(0, filled), ContentType: contentType }));
        this.parts.give(part);
      } else {
        if (buffer && filled > 0) sendPart(buffer, filled, uploadId);
        buffer = undefined;
        await Promise.all(underWay);
        signal?.throwIfAborted();
        await this.client.send(new CompleteMultipartUploadCommand({ ...target, UploadId: uploadId, MultipartUpload: { Parts: done } }));
      }
      return sizeBytes;
    } catch (err) {
      source.destroy();
      if (buffer) this.parts.give(buffer); // never handed to the SDK
      if (uploadId !== undefined) {
        await Promise.allSettled(underWay);
        // The put's own error is the answer; an upload the abort missed is the lifecycle rule's (docs/storage.md).
        await this.client.send(new AbortMultipartUploadCommand({ ...target, UploadId: uploadId })).catch(() => undefined);
      }
      throw err;
    }
  }

  private async createUpload(target: { Bucket: string; Key: string }, contentType: string): Promise<string> {
    const out = await this.client.send(new CreateMultipartUploadCommand({ ...target, ContentType: contentType }));
    if (!out.UploadId) throw new Error(`CreateMultipartUpload of "${target.Key}" answered no upload id`);
    return out.UploadId;
  }

  async stat(key: string): Promise<StoredStat | undefined> {
    assertValidKey(key);
    await this.ready();
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { sizeBytes: head.ContentLength ?? 0, contentType: contentTypeFor(key), modifiedAt: head.LastModified ?? new Date(0) };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** A ranged GetObject for a range; a range that starts past the end reads nothing, as on disk. */
  async read(key: string, range?: ByteRange): Promise<Readable> {
    assertValidKey(key);
    assertValidRange(range);
    await this.ready();
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
      if (!(out.Body instanceof Readable)) throw new Error(`GetObject of "${key}" answered no stream`);
      return out.Body;
    } catch (err) {
      if (isMissing(err)) throw new StoredFileNotFoundError(key);
      if (range && statusOf(err) === 416) return Readable.from([]);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.ready();
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Lists the first page under the prefix and deletes it, until nothing is left (no page token to go stale). */
  async deletePrefix(prefix: string): Promise<void> {
    assertValidPrefix(prefix);
    await this.ready();
    for (;;) {
      const page = await this.page(prefix);
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) return;
      const out = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
      if (out.Errors?.length) {
        const first = out.Errors[0];
        throw new Error(`Could not delete ${out.Errors.length} object(s) under "${prefix}", e.g. "${first.Key}": ${first.Code} ${first.Message ?? ''}`.trim());
      }
      if (!page.IsTruncated) return;
    }
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertValidPrefix(prefix);
    await this.ready();
    let token: string | undefined;
    do {
      const page = await this.page(prefix, token);
      for (const o of page.Contents ?? []) {
        // Objects put into the bucket by other means than ours may not be keys: not ours to list.
        if (o.Key && isValidKey(o.Key)) yield { key: o.Key, sizeBytes: o.Size ?? 0, modifiedAt: o.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private page(prefix: string, token?: string): Promise<ListObjectsV2CommandOutput> {
    return this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: PAGE, ...(token ? { ContinuationToken: token } : {}) }));
  }

  /** `<S3_PUBLIC_URL>/<key>`, or a GET presigned now, valid `urlTtlSec`. */
  url(key: string): string {
    assertValidKey(key);
    if (this.config.publicUrl) return `${this.config.publicUrl}/${key}`;
    return this.presigner.presignGet({ url: `${this.bucketUrl}/${key}`, region: this.config.region, expiresSec: this.config.urlTtlSec, now: this.clock() });
  }

  /** Either form, signed or not, expired or not: our own files are read from the bucket, never over HTTP. */
  keyFromUrl(url: string): string | undefined {
    return keyUnderBase(url, this.bucketUrl) ?? (this.config.publicUrl ? keyUnderBase(url, this.config.publicUrl) : undefined);
  }
}
