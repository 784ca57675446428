import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feedBinary, readBinary } from './binaries.js';
import { wavHeader } from './wav.js';

/** readBinary: the shipped ffmpeg's output read as it comes (the video compositor's decoder reads through it). */
describe('readBinary', () => {
  const all = async (it: AsyncIterable<Buffer>) => {
    const chunks: Buffer[] = [];
    for await (const chunk of it) chunks.push(chunk);
    return Buffer.concat(chunks).toString();
  };

  it('yields what the binary writes, and ends when it exits', async () => {
    expect(await all(readBinary('ffmpeg', ['-hide_banner', '-version']))).toMatch(/^ffmpeg version /);
  });

  it('a non-zero exit throws with the end of its stderr', async () => {
    await expect(all(readBinary('ffmpeg', ['-v', 'error', '-i', '/nonexistent/input.mp4', '-f', 'null', '-']))).rejects.toThrow(/ffmpeg failed: .*No such file or directory/);
  });

  it('an aborted read throws the abort, and a read stopped early returns at once', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(all(readBinary('ffmpeg', ['-hide_banner', '-version'], { signal: controller.signal }))).rejects.toThrow(/abort/i);
    const reader = readBinary('ffmpeg', ['-hide_banner', '-version']);
    expect((await reader.next()).done).toBe(false);
    expect(await reader.return(undefined)).toEqual({ done: true, value: undefined });
  });
});

/** feedBinary: pictures handed to the shipped ffmpeg as they are made (the compositor's encoder). */
describe('feedBinary', () => {
  it('lend: a buffer refilled for every frame once the pipe has it reaches ffmpeg as each frame was, not as the last', async () => {
    // 200 blocks of 10 KB of 16-bit PCM (under the stream's 16 KB mark, so a plain write would return
    // at once and leave them queued while ffmpeg starts), each filled with its own byte in the one buffer.
    const dir = await mkdtemp(join(tmpdir(), 'feed-binary-test-'));
    try {
      const out = join(dir, 'copy.wav');
      const feed = feedBinary('ffmpeg', ['-v', 'error', '-f', 'wav', '-i', 'pipe:0', '-c:a', 'copy', '-bitexact', out]);
      const block = Buffer.alloc(10_000);
      await feed.write(wavHeader(200 * block.length, 8_000));
      for (let k = 0; k < 200; k++) {
        block.fill(k);
        await feed.lend(block);
      }
      await feed.end();
      const copy = await readFile(out);
      const data = copy.subarray(copy.indexOf('data', 12, 'latin1') + 8);
      expect(data.length).toBe(200 * block.length);
      expect(Array.from({ length: 200 }, (_, k) => data[k * block.length + 5_000])).toEqual(Array.from({ length: 200 }, (_, k) => k));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('lend: a child that fails fails the call that lent to it, with its stderr', async () => {
    const feed = feedBinary('ffmpeg', ['-v', 'error', '-f', 'wav', '-i', 'pipe:0', '-f', 'null', '-']);
    await expect(feed.lend(Buffer.alloc(4 << 20))).rejects.toThrow(/ffmpeg failed: .*Invalid data/);
    await expect(feed.end()).rejects.toThrow(/ffmpeg failed/);
  });
});
