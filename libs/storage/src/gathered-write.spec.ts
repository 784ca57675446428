import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { WRITE_AHEAD_BYTES, writeGathered, type VectorWriter } from './gathered-write.js';

const CHUNK = 64 * 1024;
const tick = () => new Promise((r) => setTimeout(r, 20));

/** A file whose writes finish when the test says so (`release`), then each a moment later, as a disk's; what each write got is kept. */
class HeldFile implements VectorWriter {
  readonly writes: Buffer[][] = [];
  readonly bytes: Buffer[] = [];
  private waiting: (() => void)[] = [];
  held = true;
  shortOnce = 0;
  failOn?: number;

  async writev(buffers: Buffer[]): Promise<{ bytesWritten: number }> {
    this.writes.push([...buffers]);
    if (this.writes.length === this.failOn) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    if (this.held) await new Promise<void>((r) => this.waiting.push(r));
    else await new Promise((r) => setImmediate(r));
    const total = buffers.reduce((n, b) => n + b.length, 0);
    if (this.shortOnce) {
      const written = this.shortOnce;
      this.shortOnce = 0;
      this.bytes.push(Buffer.concat(buffers).subarray(0, written));
      return { bytesWritten: written };
    }
    this.bytes.push(Buffer.concat(buffers));
    return { bytesWritten: total };
  }

  release(): void {
    this.held = false;
    for (const r of this.waiting.splice(0)) r();
  }
}

/** `count` chunks of 64 KiB made as they are read (a socket's pace: as fast as they are taken); `read` counts them. */
function source(count: number) {
  const made: Buffer[] = [];
  const stream = new Readable({
    highWaterMark: CHUNK,
    read() {
      if (made.length === count) return void this.push(null);
      const chunk = randomBytes(CHUNK);
      made.push(chunk);
      this.push(chunk);
    },
  });
  return { stream, made };
}

describe('writeGathered (the local driver writing a stream)', () => {
  it('gathers what arrives during a write into the next one, reads at most WRITE_AHEAD_BYTES ahead, and writes every byte in order', async () => {
    const file = new HeldFile();
    const { stream, made } = source(200); // 12.5 MiB
    const writing = writeGathered(file, stream);
    await tick();
    // The first chunk's write is under way; the source was read on meanwhile, then made to wait.
    expect(file.writes).toHaveLength(1);
    expect(file.writes[0]).toHaveLength(1);
    const ahead = made.length;
    expect(ahead * CHUNK).toBeGreaterThanOrEqual(WRITE_AHEAD_BYTES);
    expect(ahead * CHUNK).toBeLessThanOrEqual(WRITE_AHEAD_BYTES + 3 * CHUNK);
    await tick();
    expect(made.length).toBe(ahead);

    file.release();
    await expect(writing).resolves.toBe(200 * CHUNK);
    // Everything gathered while the first write waited went in one write, and far fewer writes than chunks in all.
    expect(file.writes[1].length).toBeGreaterThanOrEqual(WRITE_AHEAD_BYTES / CHUNK);
    expect(file.writes.length).toBeLessThan(100);
    expect(Buffer.concat(file.bytes).equals(Buffer.concat(made))).toBe(true);
  });

  it('takes strings and chunks of any size, and an empty stream', async () => {
    const file = new HeldFile();
    file.release();
    const parts = ['WEBVTT\n\n', Buffer.from('00:00.000 --> 00:01.000\n'), randomBytes(3 * CHUNK + 17), 'é\n'];
    await expect(writeGathered(file, Readable.from(parts))).resolves.toBe(8 + 24 + 3 * CHUNK + 17 + 3);
    expect(Buffer.concat(file.bytes).equals(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))))).toBe(true);

    const empty = new HeldFile();
    await expect(writeGathered(empty, Readable.from([]))).resolves.toBe(0);
    expect(empty.writes).toEqual([]);
  });

  it('goes on after a short write from the first byte not written', async () => {
    const file = new HeldFile();
    file.release();
    file.shortOnce = 1000;
    const { stream, made } = source(40);
    await expect(writeGathered(file, stream)).resolves.toBe(40 * CHUNK);
    expect(Buffer.concat(file.bytes).equals(Buffer.concat(made))).toBe(true);
  });

  it('a failed write rejects with its error without waiting for the source to end, and stops the source', async () => {
    const file = new HeldFile();
    file.release();
    file.failOn = 2;
    const endless = new Readable({
      read() {
        setTimeout(() => this.push(randomBytes(CHUNK)), 1);
      },
    });
    await expect(writeGathered(file, endless)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(endless.destroyed).toBe(true);
    await tick();
    expect(file.writes).toHaveLength(2); // nothing written after the failure
  });

  it('a source that fails rejects with its error once the write under way has finished', async () => {
    const file = new HeldFile();
    const failing = new Readable({ read() {} });
    const writing = writeGathered(file, failing);
    failing.push(randomBytes(CHUNK));
    await tick();
    failing.destroy(new Error('upstream reset'));
    let settled = false;
    void writing.catch(() => undefined).finally(() => (settled = true));
    await tick();
    expect(settled).toBe(false); // its file handle is still being written: the caller may not close it yet
    file.release();
    await expect(writing).rejects.toThrow('upstream reset');
  });
});
