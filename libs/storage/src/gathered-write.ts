import type { Readable } from 'node:stream';

/** How far a stream is read ahead of the disk: the chunks gathered for the next write, at most. */
export const WRITE_AHEAD_BYTES = 1024 * 1024;

/** What writeGathered writes to: a FileHandle (its current position), or a stand-in in tests. */
export interface VectorWriter {
  writev(buffers: Buffer[]): Promise<{ bytesWritten: number }>;
}

/**
 * Writes a stream to `file` and answers its size. The chunks that arrive while a write is under way
 * are gathered and written together by the next one (one writev), so reading the source and writing
 * the disk overlap, and a stream of small chunks (64 KiB from a socket) costs a few large writes
 * instead of one each. The source waits while WRITE_AHEAD_BYTES are gathered. A failed write stops
 * the reading (the loop throws: the source is destroyed); no write is left under way when this settles.
 */
export async function writeGathered(file: VectorWriter, source: Readable): Promise<number> {
  let size = 0;
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;
  let writing: Promise<void> | undefined;
  let failure: { err: unknown } | undefined;
  // Never rejects (a failure is kept for the loop); `writing` is cleared in the same turn the last batch is found written.
  const flush = async () => {
    try {
      while (gathered.length) {
        const chunks = gathered;
        gathered = [];
        gatheredBytes = 0;
        await writeAll(file, chunks);
      }
    } catch (err) {
      failure ??= { err };
    } finally {
      writing = undefined;
    }
  };
  try {
    for await (const chunk of source) {
      if (failure) throw failure.err;
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      gathered.push(buf);
      gatheredBytes += buf.length;
      size += buf.length;
      writing ??= flush();
      if (gatheredBytes >= WRITE_AHEAD_BYTES) await writing;
    }
  } finally {
    while (writing) await writing;
  }
  if (failure) throw failure.err;
  return size;
}

/** All of `chunks` at the file's position: after a short write (a signal, the disk filling up) the rest goes on from where it stopped. */
async function writeAll(file: VectorWriter, chunks: Buffer[]): Promise<void> {
  let rest = chunks;
  for (;;) {
    const total = rest.reduce((n, c) => n + c.length, 0);
    const { bytesWritten } = await file.writev(rest);
    if (bytesWritten >= total) return;
    rest = [Buffer.concat(rest).subarray(bytesWritten)];
  }
}
