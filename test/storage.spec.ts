import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { loadConfig, type S3StorageConfig } from '#libs/core';
import { createStorage, InvalidStorageKeyError, LocalDiskStorage, outputKey, S3Storage, StoredFileNotFoundError, type ListedObject, type StorageDriver } from '#libs/storage';
import { pendingUploads, s3Env, testBucket } from './s3.js';

// Issue 14 "Storage for a fleet": the same cases against both drivers (local disk and an S3 bucket
// on the tests' s3rver), then what only one of them has (presigned URLs; the folder).

const readAll = async (s: Readable) => Buffer.concat(await s.toArray());
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const listAll = async (storage: StorageDriver, prefix: string) => {
  const out: ListedObject[] = [];
  for await (const o of storage.list(prefix)) out.push(o);
  return out.sort((a, b) => a.key.localeCompare(b.key));
};
/** The error a promise rejects with (fails the test when it resolves). */
const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a rejection'); }, (err: unknown) => err);
const ABORTED = { name: 'AbortError' };

/** `url` with one query parameter changed. */
function tamper(url: URL, name: string, value: (old: string) => string): URL {
  const u = new URL(url);
  u.searchParams.set(name, value(u.searchParams.get(name) ?? ''));
  return u;
}
/** `20260101T000000Z` one second later. */
const nextSecond = (stamp: string) => {
  const t = Date.UTC(+stamp.slice(0, 4), +stamp.slice(4, 6) - 1, +stamp.slice(6, 8), +stamp.slice(9, 11), +stamp.slice(11, 13), +stamp.slice(13, 15)) + 1000;
  return new Date(t).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
};

function s3Config(bucket = testBucket(), extra: Record<string, string> = {}): S3StorageConfig {
  const { storage } = loadConfig({ DATA_DIR: tmpdir(), REDIS_URL: 'redis://127.0.0.1:1', APP_SECRET: '0'.repeat(64), ...s3Env(bucket), ...extra });
  if (storage.driver !== 's3') throw new Error('expected the s3 driver');
  return storage;
}

interface Subject {
  storage: StorageDriver;
  /** Multipart uploads left open (S3), or temp files left behind (local). */
  leftovers(): Promise<string[]>;
  cleanup(): void;
}

const DRIVERS: [string, () => Subject][] = [
  ['local', () => {
    const base = mkdtempSync(join(tmpdir(), 'mr-conformance-'));
    const storage = new LocalDiskStorage(join(base, 'files'), 'https://media.example.com');
    const leftovers = async () => {
      try {
        return readdirSync(storage.root, { recursive: true, encoding: 'utf8' }).filter((p) => p.split('/').some((s) => s.startsWith('.')));
      } catch {
        return []; // no folder yet
      }
    };
    return { storage, leftovers, cleanup: () => rmSync(base, { recursive: true, force: true }) };
  }],
  ['s3', () => {
    const config = s3Config();
    return { storage: new S3Storage(config), leftovers: async () => pendingUploads(config.bucket), cleanup: () => undefined };
  }],
];

describe.each(DRIVERS)('storage conformance: %s driver', (_name, make) => {
  let subject: Subject;
  let storage: StorageDriver;
  beforeEach(() => {
    subject = make();
    storage = subject.storage;
  });
  afterEach(() => subject.cleanup());

  it('stores a buffer and a stream, answers the stored size and reads the same bytes back', async () => {
    const bytes = randomBytes(70_000);
    await expect(storage.put('r/rnd_1/a.png', bytes)).resolves.toEqual({ key: 'r/rnd_1/a.png', sizeBytes: 70_000 });
    expect((await readAll(await storage.read('r/rnd_1/a.png'))).equals(bytes)).toBe(true);
    const chunks = [Buffer.from('WEBVTT\n\n'), '00:00.000 --> 00:01.000\n', Buffer.from('hello\n')];
    await expect(storage.put('r/rnd_1/c.vtt', Readable.from(chunks))).resolves.toEqual({ key: 'r/rnd_1/c.vtt', sizeBytes: 38 });
    expect(await text(await storage.read('r/rnd_1/c.vtt'))).toBe('WEBVTT\n\n00:00.000 --> 00:01.000\nhello\n');
    await expect(storage.put('r/rnd_1/empty.txt', Buffer.alloc(0))).resolves.toEqual({ key: 'r/rnd_1/empty.txt', sizeBytes: 0 });
    expect((await storage.stat('r/rnd_1/empty.txt'))?.sizeBytes).toBe(0);
    // Written again: the new bytes.
    await storage.put('r/rnd_1/a.png', Buffer.from('second'));
    expect(await text(await storage.read('r/rnd_1/a.png'))).toBe('second');
  });

  it('streams a file larger than several upload parts (S3: multipart) without a stray byte', async () => {
    const part = randomBytes(1024 * 1024);
    const pieces = Array.from({ length: 19 }, (_, i) => Buffer.concat([part, Buffer.from([i])]));
    const whole = Buffer.concat(pieces);
    const stored = await storage.put('library/big.mp4', Readable.from(pieces), { contentType: 'video/mp4' });
    expect(stored).toEqual({ key: 'library/big.mp4', sizeBytes: whole.length });
    expect((await storage.stat('library/big.mp4'))?.sizeBytes).toBe(whole.length);
    expect(sha(await readAll(await storage.read('library/big.mp4')))).toBe(sha(whole));
    expect(await subject.leftovers()).toEqual([]);
  }, 60_000);

  it('stores a stream of small chunks over several parts byte for byte; a source that throws past the first part leaves nothing', async () => {
    // 12 MiB in 64 KiB chunks (S3: two full parts from many chunks each, then a partial one), no two chunks alike.
    const chunks = Array.from({ length: 192 }, (_, i) => Buffer.alloc(64 * 1024, `${i}:${'x'.repeat(i % 7)}`));
    const whole = Buffer.concat(chunks);
    async function* source(failAfter = Infinity) {
      for (const [i, chunk] of chunks.entries()) {
        if (i === failAfter) throw new Error('camera disconnected');
        await new Promise((r) => setImmediate(r));
        yield chunk;
      }
    }
    await expect(storage.put('library/long.mp4', Readable.from(source()))).resolves.toEqual({ key: 'library/long.mp4', sizeBytes: whole.length });
    expect(sha(await readAll(await storage.read('library/long.mp4')))).toBe(sha(whole));

    // Past the first part (96 chunks = 6 MiB): S3 has begun a multipart upload, which must go.
    expect(await rejection(storage.put('library/broken.mp4', Readable.from(source(96))))).toMatchObject({ message: 'camera disconnected' });
    expect(await storage.stat('library/broken.mp4')).toBeUndefined();
    expect((await listAll(storage, 'library/')).map((o) => o.key)).toEqual(['library/long.mp4']);
    expect(await subject.leftovers()).toEqual([]);
  }, 60_000);

  it('reads inclusive byte ranges, clamped at the end; a range past the end reads nothing', async () => {
    await storage.put('library/digits.txt', Buffer.from('0123456789'));
    expect(await text(await storage.read('library/digits.txt', { start: 2, end: 5 }))).toBe('2345');
    expect(await text(await storage.read('library/digits.txt', { start: 0, end: 0 }))).toBe('0');
    expect(await text(await storage.read('library/digits.txt', { start: 9, end: 9 }))).toBe('9');
    expect(await text(await storage.read('library/digits.txt', { start: 7, end: 100 }))).toBe('789');
    expect(await text(await storage.read('library/digits.txt', { start: 10, end: 20 }))).toBe('');
    await expect(storage.read('library/digits.txt', { start: 5, end: 4 })).rejects.toThrow(RangeError);
    await expect(storage.read('library/digits.txt', { start: -1, end: 4 })).rejects.toThrow(RangeError);
    await expect(storage.read('library/missing.txt', { start: 0, end: 4 })).rejects.toBeInstanceOf(StoredFileNotFoundError);
  });

  it('stats files with size, content type and time; undefined for what is not a stored file', async () => {
    const before = Date.now();
    await storage.put('r/rnd_1/out.jpg', Buffer.alloc(123));
    const stat = await storage.stat('r/rnd_1/out.jpg');
    expect(stat).toMatchObject({ sizeBytes: 123, contentType: 'image/jpeg' });
    // S3 keeps whole seconds.
    expect(stat!.modifiedAt.getTime()).toBeGreaterThanOrEqual(before - 2000);
    expect(stat!.modifiedAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    await expect(storage.stat('r/rnd_1/missing.jpg')).resolves.toBeUndefined();
    await expect(storage.stat('r/rnd_1')).resolves.toBeUndefined(); // a folder, or a prefix
    await expect(storage.read('r/rnd_1')).rejects.toBeInstanceOf(StoredFileNotFoundError);
    await expect(storage.read('r/rnd_1/missing.jpg')).rejects.toBeInstanceOf(StoredFileNotFoundError);
  });

  it('refuses a content type that contradicts the extension, storing nothing', async () => {
    await expect(storage.put('t/b.vtt', Buffer.from('x'), { contentType: 'text/vtt' })).resolves.toMatchObject({ sizeBytes: 1 });
    await expect(storage.put('t/b.png', Buffer.from('x'), { contentType: 'image/jpeg' })).rejects.toThrow(/image\/png/);
    await expect(storage.stat('t/b.png')).resolves.toBeUndefined();
  });

  it('deletes one file idempotently', async () => {
    await storage.put('r/rnd_1/a.png', Buffer.from('a'));
    await storage.put('r/rnd_2/a.png', Buffer.from('b'));
    await storage.delete('r/rnd_1/a.png');
    await storage.delete('r/rnd_1/a.png');
    await storage.delete('never/was.png');
    await expect(storage.stat('r/rnd_1/a.png')).resolves.toBeUndefined();
    expect((await listAll(storage, 'r/')).map((o) => o.key)).toEqual(['r/rnd_2/a.png']);
  });

  it('deletes by prefix: a whole folder, or the keys starting with a partial segment', async () => {
    for (const key of ['r/rnd_A/1.png', 'r/rnd_A/2.mp4', 'r/rnd_A/sub/3.jpg', 'r/rnd_AB/1.png', 'r/rnd_B/1.png', 'library/a.ttf']) await storage.put(key, Buffer.from(key));
    await storage.deletePrefix('r/rnd_A/');
    expect((await listAll(storage, 'r/')).map((o) => o.key)).toEqual(['r/rnd_AB/1.png', 'r/rnd_B/1.png']);
    await storage.put('r/rnd_A/3.png', Buffer.from('again'));
    await storage.deletePrefix('r/rnd_A');
    expect((await listAll(storage, 'r/')).map((o) => o.key)).toEqual(['r/rnd_B/1.png']);
    await storage.deletePrefix('r/nothing/');
    await storage.deletePrefix('nothing/at/all');
    await expect(storage.stat('library/a.ttf')).resolves.toMatchObject({ sizeBytes: 13 });
    for (const prefix of ['', '/', '../', 'r/../', '/r/', 'r//', '.hidden/']) {
      await expect(storage.deletePrefix(prefix)).rejects.toBeInstanceOf(InvalidStorageKeyError);
    }
    await expect(storage.stat('r/rnd_B/1.png')).resolves.toBeDefined();
  });

  it('lists what is stored under a prefix with sizes and times, in both prefix forms', async () => {
    const before = Date.now();
    for (const key of ['r/rnd_A/1.png', 'r/rnd_A/deep/er/2.mp4', 'r/rnd_AB/1.png', 'r/rnd_B/1.png', 'library/a.ttf']) await storage.put(key, Buffer.from(key));
    const folder = await listAll(storage, 'r/rnd_A/');
    expect(folder.map(({ key, sizeBytes }) => ({ key, sizeBytes }))).toEqual([{ key: 'r/rnd_A/1.png', sizeBytes: 13 }, { key: 'r/rnd_A/deep/er/2.mp4', sizeBytes: 21 }]);
    for (const o of folder) expect(o.modifiedAt.getTime()).toBeGreaterThanOrEqual(before - 2000);
    expect((await listAll(storage, 'r/rnd_A')).map((o) => o.key)).toEqual(['r/rnd_A/1.png', 'r/rnd_A/deep/er/2.mp4', 'r/rnd_AB/1.png']);
    expect((await listAll(storage, 'r/')).length).toBe(4);
    expect((await listAll(storage, 'lib')).map((o) => o.key)).toEqual(['library/a.ttf']);
    expect(await listAll(storage, 'nothing/')).toEqual([]);
    for (const prefix of ['', '/', '../', 'r/../x']) await expect(listAll(storage, prefix)).rejects.toBeInstanceOf(InvalidStorageKeyError);
  });

  it('lists and deletes past one page of keys (S3 answers 1,000 a page)', async () => {
    const keys = Array.from({ length: 1010 }, (_, i) => `work/chunks/rnd_P-tok/${String(i).padStart(4, '0')}.bin`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => storage.put(k, Buffer.from('x'))));
    await storage.put('work/chunks/rnd_Q-tok/keep.bin', Buffer.from('keep'));
    expect((await listAll(storage, 'work/chunks/rnd_P-tok/')).map((o) => o.key)).toEqual(keys);
    await storage.deletePrefix('work/chunks/rnd_P');
    expect((await listAll(storage, 'work/')).map((o) => o.key)).toEqual(['work/chunks/rnd_Q-tok/keep.bin']);
  }, 120_000);

  it('an aborted put leaves nothing behind: mid-stream, mid-multipart, after the last byte, before it starts', async () => {
    // Mid-stream, with the source still open (a client still sending).
    let abort = new AbortController();
    let source = new PassThrough();
    let writing = storage.put('a/mid.mp4', source, { signal: abort.signal });
    source.write(randomBytes(100_000));
    await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    expect(await rejection(writing)).toMatchObject(ABORTED);
    expect(source.destroyed).toBe(true);

    // Past the first part: S3 has a multipart upload under way, which must go.
    abort = new AbortController();
    source = new PassThrough();
    writing = storage.put('a/multipart.mp4', source, { signal: abort.signal });
    const caught = rejection(writing);
    for (let i = 0; i < 12; i++) source.write(randomBytes(1024 * 1024));
    if (storage instanceof S3Storage) {
      const deadline = Date.now() + 20_000;
      while ((await subject.leftovers()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await subject.leftovers()).toHaveLength(1); // the upload exists: the check below can see one
    } else {
      await new Promise((r) => setTimeout(r, 200));
    }
    abort.abort();
    expect(await caught).toMatchObject(ABORTED);

    // The whole file sent, then the abort before put settled: the file that landed goes again.
    abort = new AbortController();
    writing = storage.put('a/late.png', Readable.from([randomBytes(2000)]), { signal: abort.signal });
    await new Promise((r) => setImmediate(r));
    abort.abort();
    expect(await rejection(writing)).toMatchObject(ABORTED);

    // A buffer, and a signal aborted before the call.
    expect(await rejection(storage.put('a/before.png', Buffer.from('x'), { signal: AbortSignal.abort() }))).toMatchObject(ABORTED);

    expect(await listAll(storage, 'a/')).toEqual([]);
    expect(await subject.leftovers()).toEqual([]);
    // A put that was not aborted still lands.
    await expect(storage.put('a/ok.png', Readable.from([Buffer.from('ok')]), { signal: new AbortController().signal })).resolves.toMatchObject({ sizeBytes: 2 });
  }, 60_000);

  it('a source that fails mid-write: put rejects, the previous file stays, nothing is left over', async () => {
    await storage.put('library/clip.mp4', Buffer.from('old'));
    for (const sent of [100_000, 12 * 1024 * 1024]) { // within the first part; past it (S3: multipart)
      const source = new PassThrough();
      const writing = rejection(storage.put('library/clip.mp4', source));
      source.write(randomBytes(sent));
      // Fail it once the driver reads it (it has its error listener then), however long its setup takes.
      while (source.listenerCount('error') === 0) await new Promise((r) => setTimeout(r, 5));
      setTimeout(() => source.destroy(new Error('upstream reset')), 50);
      expect(await writing).toMatchObject({ message: 'upstream reset' });
      expect(await text(await storage.read('library/clip.mp4'))).toBe('old');
    }
    expect((await listAll(storage, 'library/')).map((o) => o.key)).toEqual(['library/clip.mp4']);
    expect(await subject.leftovers()).toEqual([]);
  }, 60_000);

  it('refuses keys that could leave the root or are not ours, in every method', async () => {
    const bad = [
      '../secret.txt', 'r/../../secret.txt', '/etc/passwd', '..', '.', 'r/./a.png', 'a\\..\\secret.txt', 'a\0b.png', '%2e%2e/secret.txt',
      '.hidden', 'r/.a.png.1234.tmp', 'r//a.png', 'r/a.png/', '', 'a b.png', 'é.png', `${'a/'.repeat(20)}x`, 'x'.repeat(600), 'a?b.png', 'a#b.png',
    ];
    for (const key of bad) {
      await expect(storage.put(key, Buffer.from('pwned'))).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(storage.stat(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(storage.read(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(storage.delete(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      expect(() => storage.url(key)).toThrow(InvalidStorageKeyError);
    }
  });

  it("names URLs whose key keyFromUrl gives back, and recognises no one else's", async () => {
    const key = outputKey('rnd_01JD', 'png');
    await storage.put(key, Buffer.from('png'));
    const url = storage.url(key);
    expect(storage.keyFromUrl(url)).toBe(key);
    expect(storage.keyFromUrl(`${url}${url.includes('?') ? '&' : '?'}download=1`)).toBe(key);
    const parsed = new URL(url);
    expect(storage.keyFromUrl(`https://elsewhere.example.com${parsed.pathname}`)).toBeUndefined();
    expect(storage.keyFromUrl(`${parsed.origin}/other${parsed.pathname}`)).toBeUndefined();
    expect(storage.keyFromUrl('not a url')).toBeUndefined();
  });

  it('is ready while it can store files', async () => {
    await expect(storage.checkReady()).resolves.toBeUndefined();
  });
});

describe('S3 driver: presigned URLs are fetched straight from the bucket', () => {
  const config = s3Config();
  const storage = new S3Storage(config);
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3f3c8d40000000049454e44ae426082', 'hex');
  const key = outputKey('rnd_01JDPRESIGN', 'png');
  beforeAll(() => storage.put(key, png));

  it('serves the bytes with their type to a plain HTTP GET', async () => {
    const url = storage.url(key);
    expect(url.startsWith(`${config.endpoint}/${config.bucket}/${key}?X-Amz-Algorithm=AWS4-HMAC-SHA256&`)).toBe(true);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
    const ranged = await fetch(url, { headers: { range: 'bytes=1-3' } });
    expect([ranged.status, await ranged.text()]).toEqual([206, 'PNG']);
  });

  it('refuses a tampered URL: another key, a longer lifetime, another signature, another access key', async () => {
    await storage.put('r/rnd_01JDPRESIGN/other.png', png);
    const url = new URL(storage.url(key));
    const tampered = [
      new URL(url.href.replace(key, 'r/rnd_01JDPRESIGN/other.png')),
      tamper(url, 'X-Amz-Expires', (ttl) => String(Number(ttl) - 1)),
      tamper(url, 'X-Amz-Date', nextSecond),
      tamper(url, 'X-Amz-Signature', (sig) => `${sig[0] === 'a' ? 'b' : 'a'}${sig.slice(1)}`),
    ];
    for (const u of tampered) {
      const res = await fetch(u);
      expect([u.href, res.status]).toEqual([u.href, 403]);
      expect(await res.text()).toContain('SignatureDoesNotMatch');
    }
    const stranger = new URL(url.href.replace('X-Amz-Credential=S3RVER', 'X-Amz-Credential=STRANGER'));
    expect((await fetch(stranger)).status).toBe(403);
    expect((await fetch(url)).status).toBe(200);
  });

  it('refuses an expired URL', async () => {
    const past = new S3Storage(s3Config(config.bucket, { S3_URL_TTL_SEC: '60' }), () => new Date(Date.now() - 61_000));
    const res = await fetch(past.url(key));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('Request has expired');
    const fresh = new S3Storage(s3Config(config.bucket, { S3_URL_TTL_SEC: '60' }), () => new Date(Date.now() - 50_000));
    expect((await fetch(fresh.url(key))).status).toBe(200);
    // Expired or not, the URL still names our file for the renderers.
    expect(storage.keyFromUrl(past.url(key))).toBe(key);
  });

  it('names <S3_PUBLIC_URL>/<key> when a public base URL is set, and knows both forms', () => {
    const publicStorage = new S3Storage(s3Config(config.bucket, { S3_PUBLIC_URL: 'https://cdn.example.com/media/' }));
    expect(publicStorage.url(key)).toBe(`https://cdn.example.com/media/${key}`);
    expect(publicStorage.keyFromUrl(publicStorage.url(key))).toBe(key);
    expect(publicStorage.keyFromUrl(storage.url(key))).toBe(key);
  });
});

describe('S3 driver: the bucket', () => {
  it('creates a missing bucket on first use when allowed, once, and is then ready', async () => {
    const config = s3Config();
    const storage = new S3Storage(config);
    await Promise.all([storage.put('a/1.txt', Buffer.from('1')), storage.put('a/2.txt', Buffer.from('2')), storage.stat('a/3.txt')]);
    expect((await listAll(storage, 'a/')).map((o) => o.key)).toEqual(['a/1.txt', 'a/2.txt']);
    await expect(storage.checkReady()).resolves.toBeUndefined();
  });

  it('refuses to work in a missing bucket it may not create, naming the bucket, and is not ready', async () => {
    const config = s3Config(testBucket(), { S3_CREATE_BUCKET: 'false' });
    const storage = new S3Storage(config);
    const named = new RegExp(`^S3 bucket "${config.bucket}" at ${config.endpoint}: the bucket does not exist`);
    await expect(storage.checkReady()).rejects.toThrow(named);
    await expect(storage.put('a/1.txt', Buffer.from('1'))).rejects.toThrow(named);
    // Created by the operator meanwhile: the driver uses it.
    await new S3Storage({ ...config, createBucket: true }).checkReady();
    await expect(storage.put('a/1.txt', Buffer.from('1'))).resolves.toMatchObject({ sizeBytes: 1 });
  });

  it('names the bucket and the endpoint when the server cannot be reached', async () => {
    const storage = new S3Storage(s3Config(testBucket(), { S3_ENDPOINT: 'http://127.0.0.1:1' }));
    await expect(storage.checkReady()).rejects.toThrow(/^S3 bucket "t-[0-9a-f]+" at http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
  });

  it('is what createStorage builds for STORAGE_DRIVER=s3', () => {
    const config = loadConfig({ DATA_DIR: tmpdir(), REDIS_URL: 'redis://127.0.0.1:1', APP_SECRET: '0'.repeat(64), ...s3Env() });
    expect(createStorage(config)).toBeInstanceOf(S3Storage);
  });
});

describe('local driver: readiness names the folder', () => {
  it('is not ready when the folder cannot be written', async () => {
    const base = mkdtempSync(join(tmpdir(), 'mr-ready-'));
    writeFileSync(join(base, 'files'), 'a file where the folder should be');
    const storage = new LocalDiskStorage(join(base, 'files'), 'https://media.example.com');
    await expect(storage.checkReady()).rejects.toThrow(`storage folder ${join(base, 'files')}: `);
    rmSync(base, { recursive: true, force: true });
  });
});
