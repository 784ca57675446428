import { readBinary } from './binaries.js';

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
