import type { Readable } from 'node:stream';

export interface PutOptions {
  /** Checked against the type the key's extension gives (the type a file is served with). */
  contentType?: string;
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

/** Inclusive byte positions, as in HTTP's `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

export class StoredFileNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No stored file "${key}"`);
    this.name = 'StoredFileNotFoundError';
  }
}

/**
 * Where rendered outputs and library media live. Keys are validated by every method
 * (`InvalidStorageKeyError`); a key is written once and read many times.
 */
export interface StorageDriver {
  /** Stores the bytes under `key`; readers see the old file or the whole new one, never a part. */
  put(key: string, bytes: Buffer | Readable, opts?: PutOptions): Promise<StoredObject>;
  /** undefined when nothing is stored under `key`. */
  stat(key: string): Promise<StoredStat | undefined>;
  /** The file's bytes, or the inclusive `range` of them; rejects with StoredFileNotFoundError. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes one file; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Removes every file whose key starts with `prefix` (see `assertValidPrefix`). */
  deletePrefix(prefix: string): Promise<void>;
  /** The public URL clients download the file from. */
  url(key: string): string;
  /** The key a URL of `url()` names; undefined for any other URL. */
  keyFromUrl(url: string): string | undefined;
}
