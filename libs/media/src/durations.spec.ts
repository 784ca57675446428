import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ApiError } from '#libs/core';
import { MediaProber, PROBE_LIMITS, rangeReader, type DurationSource } from './durations.js';
import { noisyMp4, rangeMediaServer, redBlue, sampleMedia, type RangeMediaServer } from '#testing/media';

// Issue 27 ("One request cannot exhaust a worker"): `length: "auto"` media are measured by range
// reads under a byte cap, a few at once, reused per workspace (decisions.md "Hostile input (issue 27): outbound").
describe('MediaProber: measuring `length: "auto"` media under limits', () => {
  let server: RangeMediaServer;
  let plain: RangeMediaServer;
  let files: Record<string, Buffer>;
  let dir: string;
  const storage = { keyFromUrl: () => undefined, stat: () => Promise.resolve(undefined), read: () => Promise.reject(new Error('no storage')) };
  const reader = rangeReader({ env: 'development' }, storage);
  const prober = (limits = {}) => new MediaProber(reader, { dir, limits });
  const clip = (src: string, i = 0, type: DurationSource['type'] = 'video'): DurationSource => ({ src, type, path: `edit.timeline.tracks[0].clips[${i}].asset.src` });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'probe-spec-'));
    files = {
      '/start.mp4': await noisyMp4(60, 'start'),
      '/end.mp4': await noisyMp4(60, 'end'),
      '/clip.webm': await sampleMedia.webm(3),
      '/tone.mp3': await sampleMedia.mp3(30),
      '/tone.wav': await sampleMedia.wav(60),
      '/tone.m4a': await sampleMedia.m4a(20),
      '/picture.png': await redBlue(64, 48),
      '/long.wav': await sampleMedia.wav(600),
    };
    server = await rangeMediaServer(files, { delayMs: 40 });
    plain = await rangeMediaServer(files, { ranges: false });
  }, 120_000);
  afterAll(async () => {
    await server.close();
    await plain.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.reset();
    plain.reset();
  });

  it('measures mp4 (moov first and last), webm, mp3, wav and m4a reading a few hundred KB of each, whatever its size', async () => {
    expect(files['/end.mp4']!.length).toBeGreaterThan(PROBE_LIMITS.maxBytesPerProbe);
    const p = prober();
    const srcs = ['/start.mp4', '/end.mp4', '/clip.webm', '/tone.mp3', '/tone.wav', '/tone.m4a'].map((f) => `${server.origin}${f}`);
    const durations = await p.durations('ws_a', srcs.map((s, i) => clip(s, i, s.endsWith('.mp4') || s.endsWith('.webm') ? 'video' : 'audio')));
    expect(Object.fromEntries([...durations].map(([src, d]) => [new URL(src).pathname, Math.round(d * 10) / 10]))).toEqual({
      '/start.mp4': 2, '/end.mp4': 2, '/clip.webm': 3, '/tone.mp3': 30, '/tone.wav': 60, '/tone.m4a': 20,
    });
    for (const [path, bytes] of server.bytesSent) expect([path, bytes <= 2 * PROBE_LIMITS.stepBytes]).toEqual([path, true]);
    // moov at the end: the head, then the tail; the others: the head alone.
    expect(server.requests.get('/end.mp4')).toBe(2);
    expect(server.requests.get('/start.mp4')).toBe(1);
    expect(server.total().bytes).toBeLessThan(3 * 1024 * 1024);
    expect(server.maxOpen).toBeLessThanOrEqual(PROBE_LIMITS.perRequest);
    expect(readdirSync(dir).flatMap((owner) => readdirSync(join(dir, owner)))).toEqual([]); // the temporary files are gone
  }, 60_000);

  it('reuses what it learnt, per workspace: the same URLs again read nothing; another workspace reads them itself', async () => {
    const p = prober();
    const sources = [clip(`${server.origin}/start.mp4`, 0), clip(`${server.origin}/tone.wav`, 1, 'audio')];
    await p.durations('ws_a', sources);
    const first = server.total().requests;
    expect(first).toBe(2);
    expect([...(await p.durations('ws_a', sources)).values()]).toEqual([2, 60]);
    expect(server.total().requests).toBe(first);
    await p.durations('ws_b', sources);
    expect(server.total().requests).toBe(2 * first);
    // Past the time to live it reads again.
    let now = Date.now();
    const timed = new MediaProber(reader, { dir, now: () => now });
    await timed.durations('ws_a', sources.slice(0, 1));
    now += PROBE_LIMITS.cacheTtlMs + 1;
    await timed.durations('ws_a', sources.slice(0, 1));
    expect(server.total().requests).toBe(2 * first + 2);
  }, 60_000);

  it(`refuses more than ${PROBE_LIMITS.maxMediaPerRequest} distinct files with 422 VALIDATION_FAILED naming the clip and the limit, before reading any`, async () => {
    const sources = Array.from({ length: 200 }, (_, i) => clip(`${server.origin}/start.mp4?n=${i}`, i));
    const err = await prober().durations('ws_a', sources).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('VALIDATION_FAILED');
    const path = `edit.timeline.tracks[0].clips[${PROBE_LIMITS.maxMediaPerRequest}].length`;
    expect((err as ApiError).extras).toEqual({ errors: { [path]: [expect.stringContaining(`at most ${PROBE_LIMITS.maxMediaPerRequest} distinct media files`)] } });
    expect(server.total().requests).toBe(0);
    // The same file used by many clips is one file.
    const same = Array.from({ length: 200 }, (_, i) => clip(`${server.origin}/start.mp4`, i));
    expect((await prober().durations('ws_a', same)).size).toBe(1);
  }, 60_000);

  it('runs at most `perRequest` probes at once for a request and `perProcess` in the process', async () => {
    const p = prober({ perRequest: 2, perProcess: 3 });
    const many = (ws: string) => Array.from({ length: 6 }, (_, i) => clip(`${server.origin}/tone.wav?${ws}=${i}`, i, 'audio'));
    await p.durations('ws_a', many('a'));
    expect(server.maxOpen).toBe(2);
    server.reset();
    await Promise.all(['a', 'b', 'c'].map((ws) => p.durations(`ws_${ws}`, many(`${ws}2`))));
    expect(server.maxOpen).toBe(3);
  }, 60_000);

  it('gives each workspace its share: one workspace\'s requests hold at most `perWorkspace` slots, so another\'s probe goes ahead of its queue', async () => {
    const p = prober({ perRequest: 2, perWorkspace: 2, perProcess: 4 });
    const many = (tag: string, n: number) => Array.from({ length: n }, (_, i) => clip(`${server.origin}/tone.wav?${tag}=${i}`, i, 'audio'));
    let hogDone = false;
    // Two requests of one workspace: 12 files, 2 at a time (each answer is held 40 ms).
    const hog = Promise.all([p.durations('ws_hog', many('h1', 6)), p.durations('ws_hog', many('h2', 6))]).then(() => (hogDone = true));
    await new Promise((r) => setTimeout(r, 20));
    await p.durations('ws_other', many('o', 1));
    expect(hogDone).toBe(false); // without the share, the other workspace waited behind all twelve
    await hog;
    expect(server.maxOpen).toBeLessThanOrEqual(3);
  }, 60_000);

  it('against a server that ignores ranges: reads at most the per-probe cap of a file, and still measures by the size it announced', async () => {
    const cap = 1024 * 1024;
    const durations = await prober({ maxBytesPerProbe: cap }).durations('ws_a', [clip(`${plain.origin}/long.wav`, 0, 'audio'), clip(`${plain.origin}/start.mp4`, 1)]);
    expect([durations.get(`${plain.origin}/long.wav`), durations.get(`${plain.origin}/start.mp4`)].map((d) => Math.round(d!))).toEqual([600, 2]);
    // The client stops at the cap (53 MB on offer); the server got rid of little more than the loopback socket's buffers hold.
    expect(files['/long.wav']!.length).toBeGreaterThan(50 * 1024 * 1024);
    expect(plain.bytesSent.get('/long.wav')).toBeLessThan(cap + 8 * 1024 * 1024);
  }, 60_000);

  it('reads our own stored files by range reads of storage, not over HTTP, and answers a missing one as MEDIA_UNAVAILABLE', async () => {
    const ranges: string[] = [];
    const bytes = files['/end.mp4']!;
    const stored = rangeReader({ env: 'production' }, {
      keyFromUrl: (url) => (url.startsWith('https://media.example/files/') ? url.slice('https://media.example/files/'.length) : undefined),
      stat: (key) => Promise.resolve(key === 'assets/ws_a/clip.mp4' ? { sizeBytes: bytes.length, contentType: 'video/mp4', modifiedAt: new Date() } : undefined),
      read: (_key, range) => {
        ranges.push(`${range!.start}-${range!.end}`);
        return Promise.resolve(Readable.from([bytes.subarray(range!.start, range!.end + 1)]));
      },
    });
    const p = new MediaProber(stored, { dir });
    expect([...(await p.durations('ws_a', [clip('https://media.example/files/assets/ws_a/clip.mp4')])).values()]).toEqual([2]);
    expect(ranges).toEqual([`0-${PROBE_LIMITS.stepBytes - 1}`, `${bytes.length - PROBE_LIMITS.stepBytes}-${bytes.length - 1}`]);
    await expect(p.durations('ws_a', [clip('https://media.example/files/assets/ws_a/gone.mp4')])).rejects.toMatchObject({ code: 'MEDIA_UNAVAILABLE', extras: { errors: { 'edit.timeline.tracks[0].clips[0].asset.src': ['No stored file at this URL'] } } });
  }, 60_000);

  it('gives a whole probe one deadline: a slow server holds a slot that long at most, however many reads the file needs', async () => {
    // Each answer is held 700 ms; a file whose index is at its end needs two reads (1.4 s) and a
    // 1 s deadline. With a deadline per read, each read fit and the slot was held for both.
    const slow = await rangeMediaServer({ '/end.mp4': files['/end.mp4']! }, { delayMs: 700 });
    try {
      const started = Date.now();
      const err = await prober({ timeoutMs: 1000 }).durations('ws_a', [clip(`${slow.origin}/end.mp4`)]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('MEDIA_UNAVAILABLE');
      expect(JSON.stringify((err as ApiError).extras)).toContain('could not be measured within 1 s');
      expect(Date.now() - started).toBeLessThan(2000);
      // The same file with time enough is measured: the deadline, not the file, refused it.
      expect([...(await prober({ timeoutMs: 5000 }).durations('ws_a', [clip(`${slow.origin}/end.mp4`)])).values()].map(Math.round)).toEqual([2]);
    } finally {
      await slow.close();
    }
  });

  it('a luma picture needs no duration; a file of the wrong kind, a missing one or one over the file cap is 422 MEDIA_UNAVAILABLE naming each path', async () => {
    const ok = await prober().durations('ws_a', [clip(`${server.origin}/picture.png`, 0, 'luma')]);
    expect(ok.size).toBe(0);
    const err = await prober({ maxFileBytes: 4 * 1024 * 1024 }).durations('ws_a', [
      clip(`${server.origin}/picture.png`, 0, 'video'), clip(`${server.origin}/gone.mp4`, 1), clip(`${server.origin}/end.mp4`, 2),
    ]).catch((e: unknown) => e as ApiError);
    expect(err).toMatchObject({ code: 'MEDIA_UNAVAILABLE' });
    expect((err as ApiError).extras).toEqual({ errors: {
      'edit.timeline.tracks[0].clips[0].asset.src': ['Expected video, got image/png'],
      'edit.timeline.tracks[0].clips[1].asset.src': ['The server answered 404'],
      'edit.timeline.tracks[0].clips[2].asset.src': ['The file is larger than 4 MB'],
    } });
    expect(server.bytesSent.get('/end.mp4')).toBeLessThanOrEqual(PROBE_LIMITS.stepBytes);
  }, 60_000);
});
