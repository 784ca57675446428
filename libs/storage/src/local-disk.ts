import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { addAbortSignal, type Readable } from 'node:stream';
import { contentTypeFor, servedContentType } from './content-type.js';
import { writeGathered } from './gathered-write.js';
import {
  assertValidRange, StoredFileNotFoundError, type ByteRange, type ListedObject, type PutOptions, type ReadOptions, type StorageDriver, type StoredObject, type StoredStat,
} from './driver.js';
import { assertValidKey, assertValidPrefix, isValidKey } from './keys.js';
import { storedFileUrl, storedKeyFromUrl } from './public-url.js';

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The embedded driver: files under one folder (`<DATA_DIR>/files`), one file per key, the key's
 * segments as folders. The content type is the key's extension; nothing else is kept beside a file.
 */
export class LocalDiskStorage implements StorageDriver {
  constructor(
    readonly root: string,
    private readonly publicUrl: string,
  ) {}

  private pathOf(key: string): string {
    assertValidKey(key);
    return join(this.root, ...key.split('/'));
  }

  /**
   * Atomic: the bytes go to a hidden temp file in the target's folder, are fsynced, then renamed
   * over the target (and the folder fsynced), so a reader sees the old file or the whole new one.
   * A stream is written as it arrives, in gathered writes (writeGathered).
   * An abort removes the temp file (or the target, when it came after the rename).
   */
  async put(key: string, bytes: Buffer | Readable, opts: PutOptions = {}): Promise<StoredObject> {
    const target = this.pathOf(key);
    servedContentType(key, opts.contentType);
    const { signal } = opts;
    signal?.throwIfAborted();
    if (signal && !Buffer.isBuffer(bytes)) addAbortSignal(signal, bytes);
    const dir = dirname(target);
    if (opts.fresh && Buffer.isBuffer(bytes) && !signal) {
      const written = await this.putFresh(dir, target, bytes);
      if (written) return { key, sizeBytes: written };
    }
    const temp = join(dir, `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
    const file = await this.createInFolder(dir, temp);
    let sizeBytes: number;
    try {
      if (Buffer.isBuffer(bytes)) {
        await file.writeFile(bytes);
        sizeBytes = bytes.length;
      } else {
        sizeBytes = await writeGathered(file, bytes);
      }
      await file.sync();
      await file.close();
      signal?.throwIfAborted();
      await rename(temp, target);
    } catch (err) {
      await file.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw err;
    }
    await syncFolder(dir);
    if (signal?.aborted) {
      await this.delete(key);
      signal.throwIfAborted();
    }
    return { key, sizeBytes };
  }

  /**
   * `put` with `fresh`: the bytes written at the target itself, then the file's data and the folder's
   * entry synced at once (nobody reads the key before the caller records it, so no reader can see a
   * part). Answers undefined, having written nothing, when a file is already there.
   */
  private async putFresh(dir: string, target: string, bytes: Buffer): Promise<number | undefined> {
    let file: FileHandle;
    try {
      file = await this.createInFolder(dir, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw err;
    }
    try {
      await file.writeFile(bytes);
      await Promise.all([file.sync(), syncFolder(dir)]);
      await file.close();
    } catch (err) {
      await file.close().catch(() => undefined);
      await rm(target, { force: true });
      throw err;
    }
    return bytes.length;
  }

  /** Opens a new file, making its folder; retried when a concurrent delete prunes the empty folder in between. */
  private async createInFolder(dir: string, path: string): Promise<FileHandle> {
    for (let attempt = 1; ; attempt++) {
      await mkdir(dir, { recursive: true });
      try {
        return await open(path, 'wx', 0o644);
      } catch (err) {
        if (!isMissing(err) || attempt >= 3) throw err;
      }
    }
  }

  async stat(key: string): Promise<StoredStat | undefined> {
    const path = this.pathOf(key);
    try {
      const s = await stat(path);
      if (!s.isFile()) return undefined;
      return { sizeBytes: s.size, contentType: contentTypeFor(key), modifiedAt: s.mtime };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange, opts: ReadOptions = {}): Promise<Readable> {
    const path = this.pathOf(key);
    assertValidRange(range);
    let file: FileHandle;
    try {
      file = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) throw new StoredFileNotFoundError(key);
      throw err;
    }
    if (!(await file.stat()).isFile()) {
      await file.close();
      throw new StoredFileNotFoundError(key);
    }
    return file.createReadStream({ start: range?.start, end: range?.end, ...(opts.chunkBytes ? { highWaterMark: opts.chunkBytes } : {}) });
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    await this.pruneEmptyFolders(dirname(path));
  }

  async deletePrefix(prefix: string): Promise<void> {
    assertValidPrefix(prefix);
    if (prefix.endsWith('/')) {
      const dir = join(this.root, ...prefix.slice(0, -1).split('/'));
      await rm(dir, { recursive: true, force: true });
      await this.pruneEmptyFolders(dirname(dir));
      return;
    }
    const dir = join(this.root, ...prefix.split('/').slice(0, -1));
    const start = prefix.slice(prefix.lastIndexOf('/') + 1);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    await Promise.all(names.filter((n) => n.startsWith(start)).map((n) => rm(join(dir, n), { recursive: true, force: true })));
    await this.pruneEmptyFolders(dir);
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertValidPrefix(prefix);
    const segments = prefix.split('/');
    // `a/b/`: everything under a/b; `a/b`: the entries of a whose name starts with b.
    const start = segments.pop() ?? '';
    yield* this.walk(segments, start);
  }

  /** The files under the folder `segments` whose names start with `start`, depth first; hidden temp files are not keys. */
  private async *walk(segments: string[], start = ''): AsyncGenerator<ListedObject> {
    let entries;
    try {
      entries = await readdir(join(this.root, ...segments), { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const entry of entries) {
      const key = [...segments, entry.name].join('/');
      if (!entry.name.startsWith(start) || !isValidKey(key)) continue;
      if (entry.isDirectory()) {
        yield* this.walk([...segments, entry.name]);
      } else if (entry.isFile()) {
        const s = await stat(join(this.root, ...segments, entry.name)).catch((err: unknown) => {
          if (isMissing(err)) return undefined; // deleted meanwhile
          throw err;
        });
        if (s) yield { key, sizeBytes: s.size, modifiedAt: s.mtime };
      }
    }
  }

  /** Writes and removes a hidden probe file in the root. */
  async checkReady(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
      const probe = join(this.root, `.ready-${process.pid}-${randomBytes(4).toString('hex')}`);
      await writeFile(probe, 'ok');
      await rm(probe);
    } catch (err) {
      throw new Error(`storage folder ${this.root}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Removes `dir` and its parents while they are empty, up to (not including) the root. */
  private async pruneEmptyFolders(dir: string): Promise<void> {
    for (let current = dir; relative(this.root, current) && !relative(this.root, current).startsWith('..'); current = dirname(current)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (or already gone): stop
      }
    }
  }

  url(key: string): string {
    return storedFileUrl(this.publicUrl, key);
  }

  keyFromUrl(url: string): string | undefined {
    return storedKeyFromUrl(url, this.publicUrl);
  }
}

async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
