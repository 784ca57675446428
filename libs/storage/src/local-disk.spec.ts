import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { loadConfig } from '#libs/core';
import { createStorage } from './create.js';
import { StoredFileNotFoundError } from './driver.js';
import { InvalidStorageKeyError, outputKey } from './keys.js';
import { LocalDiskStorage } from './local-disk.js';

const readAll = async (s: Readable) => Buffer.concat(await s.toArray());

describe('LocalDiskStorage (issue 5: output storage)', () => {
  let base: string;
  let root: string;
  let storage: LocalDiskStorage;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'mr-storage-'));
    root = join(base, 'files');
    storage = new LocalDiskStorage(root, 'https://media.example.com');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  // What every driver does is test/storage.spec.ts (the conformance suite); here, what is the folder's own.
  it('lays a file out as <root>/<the key\'s segments>', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    await expect(storage.put('r/rnd_1/a.png', bytes)).resolves.toEqual({ key: 'r/rnd_1/a.png', sizeBytes: 70_000 });
    expect(readFileSync(join(root, 'r', 'rnd_1', 'a.png')).equals(bytes)).toBe(true);
  });

  it('writes atomically: while a write is under way readers see the previous file, never a part', async () => {
    await storage.put('library/clip.mp4', Buffer.alloc(1000, 'a'));
    const source = new PassThrough();
    const writing = storage.put('library/clip.mp4', source);
    source.write(Buffer.alloc(600, 'b'));
    await new Promise((r) => setTimeout(r, 50));
    expect((await readAll(await storage.read('library/clip.mp4'))).toString()).toBe('a'.repeat(1000));
    expect((await storage.stat('library/clip.mp4'))?.sizeBytes).toBe(1000);
    // the part written so far sits in a hidden temp file beside the target
    expect(readdirSync(join(root, 'library')).filter((n) => n.startsWith('.'))).toHaveLength(1);
    source.end(Buffer.alloc(600, 'b'));
    await expect(writing).resolves.toEqual({ key: 'library/clip.mp4', sizeBytes: 1200 });
    expect((await readAll(await storage.read('library/clip.mp4'))).toString()).toBe('b'.repeat(1200));
    expect(readdirSync(join(root, 'library'))).toEqual(['clip.mp4']);
  });

  it('a fresh key (issue 33: a render\'s output) is written in place, no temp file; one already there is replaced whole', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    await expect(storage.put('r/rnd_2/output.png', bytes, { fresh: true })).resolves.toEqual({ key: 'r/rnd_2/output.png', sizeBytes: 70_000 });
    expect(readdirSync(join(root, 'r', 'rnd_2'))).toEqual(['output.png']);
    expect(readFileSync(join(root, 'r', 'rnd_2', 'output.png')).equals(bytes)).toBe(true);
    // Read back in 64 KiB chunks, or whole in one when asked (format=binary).
    expect((await (await storage.read('r/rnd_2/output.png')).toArray()).map((c: Buffer) => c.length)).toEqual([65_536, 4_464]);
    const whole = await (await storage.read('r/rnd_2/output.png', undefined, { chunkBytes: 70_000 })).toArray();
    expect([whole.length, Buffer.concat(whole).equals(bytes)]).toEqual([1, true]);
    // A second write of the same key (an earlier run's file): the whole new file, as `put` writes it.
    await expect(storage.put('r/rnd_2/output.png', Buffer.alloc(10, 'z'), { fresh: true })).resolves.toEqual({ key: 'r/rnd_2/output.png', sizeBytes: 10 });
    expect(readFileSync(join(root, 'r', 'rnd_2', 'output.png')).toString()).toBe('z'.repeat(10));
    expect(readdirSync(join(root, 'r', 'rnd_2'))).toEqual(['output.png']);
  });

  it('writes nothing anywhere for a key that could leave the root', async () => {
    writeFileSync(join(base, 'secret.txt'), 'keep');
    for (const key of ['../secret.txt', 'r/../../secret.txt', '/etc/passwd', 'a\\..\\secret.txt', '%2e%2e/secret.txt']) {
      await expect(storage.put(key, Buffer.from('pwned'))).rejects.toBeInstanceOf(InvalidStorageKeyError);
    }
    expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe('keep');
    expect(existsSync(root)).toBe(false);
  });

  it('finds no stored file at a folder or under a file', async () => {
    await storage.put('r/rnd_1/out.jpg', Buffer.alloc(123));
    await expect(storage.stat('r/rnd_1')).resolves.toBeUndefined();
    await expect(storage.stat('r/rnd_1/out.jpg/x')).resolves.toBeUndefined();
    await expect(storage.read('r/rnd_1')).rejects.toBeInstanceOf(StoredFileNotFoundError);
    await expect(storage.read('r/rnd_1/out.jpg/x')).rejects.toBeInstanceOf(StoredFileNotFoundError);
  });

  it('derives the content type from the extension', async () => {
    const cases: Record<string, string> = {
      'a.png': 'image/png', 'a.JPG': 'image/jpeg', 'a.jpeg': 'image/jpeg', 'a.pdf': 'application/pdf', 'a.mp4': 'video/mp4',
      'a.gif': 'image/gif', 'a.webp': 'image/webp', 'a.svg': 'image/svg+xml', 'a.vtt': 'text/vtt; charset=utf-8',
      'a.srt': 'application/x-subrip; charset=utf-8', 'a.json': 'application/json', 'a.mp3': 'audio/mpeg', 'a.wav': 'audio/wav',
      'a.ttf': 'font/ttf', 'a.otf': 'font/otf', 'a.woff2': 'font/woff2', 'a.html': 'application/octet-stream', 'noext': 'application/octet-stream',
    };
    for (const [name, type] of Object.entries(cases)) {
      await storage.put(`t/${name}`, Buffer.from('x'));
      expect([name, (await storage.stat(`t/${name}`))?.contentType]).toEqual([name, type]);
    }
  });

  it('removes the folders a delete leaves empty', async () => {
    await storage.put('r/rnd_1/a.png', Buffer.from('a'));
    await storage.put('r/rnd_2/a.png', Buffer.from('b'));
    await storage.delete('r/rnd_1/a.png');
    expect(readdirSync(join(root, 'r'))).toEqual(['rnd_2']);
    await storage.delete('r/rnd_2/a.png');
    expect(readdirSync(root)).toEqual([]);
  });

  it('removes the folders a prefix delete leaves empty', async () => {
    for (const key of ['r/rnd_A/1.png', 'r/rnd_A/sub/2.mp4', 'r/rnd_AB/1.png', 'r/rnd_B/1.png']) await storage.put(key, Buffer.from(key));
    await storage.deletePrefix('r/rnd_A/');
    expect(readdirSync(join(root, 'r')).sort()).toEqual(['rnd_AB', 'rnd_B']);
    await storage.deletePrefix('r/rnd_');
    expect(readdirSync(root)).toEqual([]);
  });

  it('keeps working when a concurrent delete prunes the folder a write is about to use', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `r/rnd_X/${i}.png`);
    await Promise.all(keys.flatMap((k) => [storage.put(k, Buffer.from(k)), storage.delete(k.replace('.png', '.gif'))]));
    for (const k of keys) await expect(storage.stat(k)).resolves.toMatchObject({ sizeBytes: k.length });
  });

  it('names public URLs under <PUBLIC_URL>/files/ and recognises only its own', () => {
    const key = outputKey('rnd_01JD', 'png');
    expect(storage.url(key)).toBe(`https://media.example.com/files/${key}`);
    expect(storage.keyFromUrl(storage.url(key))).toBe(key);
    expect(storage.keyFromUrl(`${storage.url(key)}?download=1`)).toBe(key);
    expect(storage.keyFromUrl(`https://media.example.com:443/files/${key}`)).toBe(key);
    expect(storage.keyFromUrl(`http://media.example.com/files/${key}`)).toBeUndefined();
    expect(storage.keyFromUrl(`https://media.example.com.evil.test/files/${key}`)).toBeUndefined();
    expect(storage.keyFromUrl(`https://media.example.com/api/files/${key}`)).toBeUndefined();
    expect(storage.keyFromUrl('https://media.example.com/files/r/%2e%2e/%2e%2e/app.sqlite')).toBeUndefined();
    expect(storage.keyFromUrl('https://media.example.com/files/r/..%2f..%2fapp.sqlite')).toBeUndefined();
    expect(storage.keyFromUrl('not a url')).toBeUndefined();
  });
});

describe('createStorage and the storage settings', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'mr-storage-cfg-'));
    mkdirSync(dataDir, { recursive: true });
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = (extra: Record<string, string> = {}) => ({ DATA_DIR: dataDir, REDIS_URL: 'redis://127.0.0.1:1', APP_SECRET: '0'.repeat(64), ...extra });

  it('stores under <DATA_DIR>/files with URLs from PUBLIC_URL', async () => {
    const storage = createStorage(loadConfig(env({ PUBLIC_URL: 'https://cdn.example.com/media/' })));
    await storage.put('library/x.png', Buffer.from('png'));
    expect(readFileSync(join(dataDir, 'files', 'library', 'x.png'), 'utf8')).toBe('png');
    expect(storage.url('library/x.png')).toBe('https://cdn.example.com/media/files/library/x.png');
    expect(storage.keyFromUrl('https://cdn.example.com/files/library/x.png')).toBeUndefined();
  });

  it('defaults PUBLIC_URL to HOST and PORT, a reachable address for a wildcard HOST', () => {
    expect(loadConfig(env()).publicUrl).toBe('http://127.0.0.1:3000');
    expect(loadConfig(env({ HOST: '0.0.0.0', PORT: '8080' })).publicUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig(env({ HOST: '::1' })).publicUrl).toBe('http://[::1]:3000');
  });

  it('refuses a malformed PUBLIC_URL or an unknown STORAGE_DRIVER, naming the variable', () => {
    for (const bad of ['media.example.com', 'ftp://media.example.com', 'https://media.example.com/?a=1', 'https://x.test/#f', 'https://u:p@x.test']) {
      expect(() => loadConfig(env({ PUBLIC_URL: bad }))).toThrow(/^Configuration error: PUBLIC_URL /);
    }
    expect(() => loadConfig(env({ STORAGE_DRIVER: 'gcs' }))).toThrow('Configuration error: STORAGE_DRIVER must be one of local, s3 (got "gcs")');
  });
});
