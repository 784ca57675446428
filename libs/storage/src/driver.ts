import type { Readable } from 'node:stream';

export interface PutOptions {
  /** Checked against the type the key's extension gives (the type a file is served with). */
  contentType?: string;
  /**
   * Aborting stops the write and leaves nothing behind: no file, no object, no pending multipart
   * upload; `put` rejects with an error named `AbortError`. A stream source is destroyed. An abort
   * that comes before `put` settles wins: a file that landed meanwhile is removed again.
   */
  signal?: AbortSignal;
  /**
   * The key is new and nothing reads it before the caller records it (a render's output, settled
   * after the write): a local file is then written in place (no temporary file and rename) and
   * its data and folder entry made durable together. Ignored by S3 (a PUT is whole already), and
   * when a file is already there (written as usual, replacing it whole).
   */
  fresh?: boolean;
}

export interface ReadOptions {
  /** The size of the chunks a local file is read in (default 64 KiB): a caller that gathers a whole small file reads it in one. */
  chunkBytes?: number;
}

export interface StoredObject {
  key: string;
  sizeBytes: number;
}

export interface StoredStat {
  sizeBytes: number;
  contentType: string;
  modifiedAt: Date;
}

/** One stored file as `list` yields it. */
export interface ListedObject {
  key: string;
  sizeBytes: number;
  modifiedAt: Date;
}

/** Inclusive byte positions, as in HTTP's `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Refuses a range `read` cannot serve (the same for every driver). */
export function assertValidRange(range: ByteRange | undefined): void {
  if (range && !(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.end >= range.start)) {
    throw new RangeError(`Invalid byte range ${range.start}-${range.end}`);
  }
}

export class StoredFileNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No stored file "${key}"`);
    this.name = 'StoredFileNotFoundError';
  }
}

/**
 * Where rendered outputs, chunks and library media live (`local`: one folder; `s3`: a bucket a
 * fleet shares). Keys are validated by every method (`InvalidStorageKeyError`); a key is written
 * once and read many times. docs/storage.md.
 */
export interface StorageDriver {
  /** Stores the bytes under `key`; readers see the old file or the whole new one, never a part. Answers the stored size. */
  put(key: string, bytes: Buffer | Readable, opts?: PutOptions): Promise<StoredObject>;
  /** undefined when nothing is stored under `key`. */
  stat(key: string): Promise<StoredStat | undefined>;
  /** The file's bytes, or the inclusive `range` of them (clamped at the end); rejects with StoredFileNotFoundError. */
  read(key: string, range?: ByteRange, opts?: ReadOptions): Promise<Readable>;
  /** Removes one file; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Removes every file whose key starts with `prefix` (see `assertValidPrefix`). */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Every stored file whose key starts with `prefix` (validated as for `deletePrefix`), in no
   * particular order: for sweepers that remove what no record owns. Files written or deleted
   * while it runs may or may not be seen.
   */
  list(prefix: string): AsyncIterable<ListedObject>;
  /** The URL clients download the file from (`local`: `<PUBLIC_URL>/files/<key>`; `s3`: presigned or `<S3_PUBLIC_URL>/<key>`). */
  url(key: string): string;
  /** The key a URL of `url()` names, whatever its signature or age; undefined for any other URL. */
  keyFromUrl(url: string): string | undefined;
  /** Readiness: resolves when files can be stored now; else rejects with a message naming the folder or bucket. */
  checkReady(): Promise<void>;
}
