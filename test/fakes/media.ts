import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { runBinary } from '#libs/media';

/**
 * Real media files for tests, made at test time with the shipped ffmpeg or by hand: every accepted
 * format, and the bad inputs of the media library (a decompression bomb, a ten-hour silent MP3, a
 * video without frames).
 */

/**
 * Runs the shipped ffmpeg with `args` (lavfi sources allowed) writing `out.<ext>`, and returns the
 * file. `inputs` are written beside it first; an argument equal to one of their names becomes its path.
 */
export async function ffmpegFile(args: readonly string[], ext: string, inputs: Record<string, Buffer> = {}): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'media-fixture-'));
  try {
    for (const [name, bytes] of Object.entries(inputs)) await writeFile(join(dir, name), bytes);
    const out = join(dir, `out.${ext}`);
    const resolved = args.map((a) => (a in inputs ? join(dir, a) : a));
    await runBinary('ffmpeg', ['-v', 'error', '-nostdin', '-y', ...resolved, out], { timeoutMs: 60_000 });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A picture whose left half is red and right half blue (a thumbnail keeps both, in that order). */
export function redBlue(width: number, height: number): Promise<Buffer> {
  const half = Math.ceil(width / 2);
  return sharp({ create: { width, height, channels: 3, background: '#ff0000' } })
    .composite([{ input: { create: { width: width - half, height, channels: 3, background: '#0000ff' } }, left: half, top: 0 }])
    .png()
    .toBuffer();
}

const tone = (seconds: number) => ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`];

/** A `seconds`-long video of redBlue at 10 frames a second, encoded with `codec`. */
async function pictureVideo(seconds: number, width: number, height: number, ext: string, codec: string[]): Promise<Buffer> {
  const args = ['-loop', '1', '-framerate', '10', '-t', String(seconds), '-i', 'picture.png', '-vf', 'format=yuv420p', ...codec];
  return ffmpegFile(args, ext, { 'picture.png': await redBlue(width, height) });
}
const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast'];

/** Tones and pictures in every accepted audio and video container. */
export const sampleMedia = {
  mp3: (seconds = 1) => ffmpegFile([...tone(seconds), '-c:a', 'libmp3lame', '-b:a', '64k'], 'mp3'),
  wav: (seconds = 1) => ffmpegFile([...tone(seconds), '-c:a', 'pcm_s16le'], 'wav'),
  ogg: (seconds = 1) => ffmpegFile([...tone(seconds), '-c:a', 'libopus'], 'ogg'),
  /** ftyp brand M4A, as iTunes and ffmpeg's ipod muxer write it. */
  m4a: (seconds = 1) => ffmpegFile([...tone(seconds), '-c:a', 'aac', '-brand', 'M4A ', '-f', 'mp4'], 'm4a'),
  /** An mp4 (brand isom) whose only track is audio. */
  audioOnlyMp4: (seconds = 1) => ffmpegFile([...tone(seconds), '-c:a', 'aac'], 'mp4'),
  flac: (seconds = 1) => Promise.resolve(flacTone(seconds)),
  /** A WAV: a tone, then silence. */
  toneThenSilence: (toneSeconds: number, silentSeconds: number) => ffmpegFile([...tone(toneSeconds), '-af', `apad=pad_dur=${silentSeconds}`, '-c:a', 'pcm_s16le'], 'wav'),
  /** Moov first (faststart): the first kilobytes describe every frame. */
  mp4: (seconds = 1, width = 64, height = 48) => pictureVideo(seconds, width, height, 'mp4', [...X264, '-movflags', '+faststart']),
  mov: (seconds = 1, width = 64, height = 48) => pictureVideo(seconds, width, height, 'mov', X264),
  webm: (seconds = 1, width = 64, height = 48) => pictureVideo(seconds, width, height, 'webm', ['-c:v', 'libvpx-vp9', '-deadline', 'realtime']),
  /** Matroska that is not WebM (refused). */
  mkv: (seconds = 1) => pictureVideo(seconds, 64, 48, 'mkv', X264),
  /** A WebM whose only track is audio (Opus), as browsers record voice. */
  audioOnlyWebm: (seconds = 1) => ffmpegFile([...tone(seconds), '-c:a', 'libopus'], 'webm'),
};

/**
 * A silent MP3 of about `hours` hours at 8 kbit/s (36 MB for 10 hours): one second of silence
 * encoded once, its frames repeated. Decoding it all would take minutes; its duration is plain
 * from the header and the size.
 */
export async function silentMp3(hours: number): Promise<Buffer> {
  const second = await ffmpegFile(['-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '1', '-c:a', 'libmp3lame', '-b:a', '8k', '-write_xing', '0', '-id3v2_version', '0'], 'mp3');
  return Buffer.concat(Array.from({ length: Math.ceil(hours * 3600) }, () => second));
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/**
 * A well-formed PNG that claims `width` × `height` RGB pixels (a decompression bomb at 50 000 ×
 * 50 000: 7.5 GB decoded) with a few rows of real data: a reader that decodes before checking the
 * size runs out of memory or time.
 */
export function pngBomb(width = 50_000, height = 50_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = deflateSync(Buffer.alloc((width * 3 + 1) * 4));
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), pngChunk('IHDR', ihdr), pngChunk('IDAT', rows), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A FLAC file of a 440 Hz tone (44.1 kHz, mono, 16-bit) in verbatim subframes, CRCs included. */
export function flacTone(seconds: number): Buffer {
  const rate = 44_100;
  const block = 4096;
  const total = Math.round(seconds * rate);
  const info = Buffer.alloc(38);
  info.writeUInt32BE(34, 0); // last block: no; type 0 (STREAMINFO); 34 bytes
  info.writeUInt16BE(block, 4);
  info.writeUInt16BE(block, 6);
  // sample rate (20 bits), channels − 1 (3), bits − 1 (5), total samples (36)
  const packed = (BigInt(rate) << 44n) | (0n << 41n) | (15n << 36n) | BigInt(total);
  info.writeBigUInt64BE(packed, 14);
  info[0] = 0x80; // the last metadata block
  const frames: Buffer[] = [];
  for (let start = 0, n = 0; start < total; start += block, n++) {
    const size = Math.min(block, total - start);
    const header = Buffer.from([0xff, 0xf8, 0x70, 0x08, ...utf8Number(n), (size - 1) >> 8, (size - 1) & 0xff]);
    const body = Buffer.alloc(1 + size * 2);
    body[0] = 0x02; // verbatim subframe
    for (let i = 0; i < size; i++) body.writeInt16BE(Math.round(Math.sin((2 * Math.PI * 440 * (start + i)) / rate) * 0.3 * 32767), 1 + i * 2);
    const frame = Buffer.concat([header, Buffer.from([crc8(header)]), body]);
    const crc = Buffer.alloc(2);
    crc.writeUInt16BE(crc16(frame));
    frames.push(frame, crc);
  }
  return Buffer.concat([Buffer.from('fLaC', 'latin1'), info, ...frames]);
}

function utf8Number(n: number): number[] {
  if (n < 0x80) return [n];
  if (n < 0x800) return [0xc0 | (n >> 6), 0x80 | (n & 0x3f)];
  return [0xe0 | (n >> 12), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
}

function crc8(bytes: Buffer): number {
  let c = 0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 0x80 ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff;
  }
  return c;
}

function crc16(bytes: Buffer): number {
  let c = 0;
  for (const b of bytes) {
    c ^= b << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x8005) & 0xffff : (c << 1) & 0xffff;
  }
  return c;
}

/** The tables of an sfnt (TrueType/OpenType) font, in directory order. */
function sfntTables(sfnt: Buffer): { tag: string; data: Buffer; checksum: number }[] {
  return Array.from({ length: sfnt.readUInt16BE(4) }, (_, i) => {
    const at = 12 + i * 16;
    const offset = sfnt.readUInt32BE(at + 8);
    return { tag: sfnt.toString('latin1', at, at + 4), checksum: sfnt.readUInt32BE(at + 4), data: sfnt.subarray(offset, offset + sfnt.readUInt32BE(at + 12)) };
  });
}

const pad4 = (n: number) => (n + 3) & ~3;

/** A WOFF 1.0 of an sfnt font: each table compressed with zlib where that makes it smaller. */
export function woffFromSfnt(sfnt: Buffer): Buffer {
  const tables = sfntTables(sfnt);
  const header = Buffer.alloc(44 + tables.length * 20);
  const bodies: Buffer[] = [];
  let offset = header.length;
  tables.forEach(({ tag, data, checksum }, i) => {
    const packed = deflateSync(data);
    const stored = packed.length < data.length ? packed : data;
    const at = 44 + i * 20;
    header.write(tag, at, 'latin1');
    header.writeUInt32BE(offset, at + 4);
    header.writeUInt32BE(stored.length, at + 8);
    header.writeUInt32BE(data.length, at + 12);
    header.writeUInt32BE(checksum, at + 16);
    bodies.push(stored, Buffer.alloc(pad4(stored.length) - stored.length));
    offset += pad4(stored.length);
  });
  header.write('wOFF', 0, 'latin1');
  header.writeUInt32BE(sfnt.readUInt32BE(0), 4);
  header.writeUInt32BE(offset, 8);
  header.writeUInt16BE(tables.length, 12);
  header.writeUInt32BE(12 + 16 * tables.length + tables.reduce((s, t) => s + pad4(t.data.length), 0), 16);
  header.writeUInt16BE(1, 20);
  return Buffer.concat([header, ...bodies]);
}

/** A WOFF2 of an sfnt font with every table stored as is (the null transform): one brotli stream. */
export function woff2FromSfnt(sfnt: Buffer): Buffer {
  const tables = sfntTables(sfnt);
  const directory: number[] = [];
  for (const { tag, data } of tables) {
    // Tag index 63: the tag follows; transform version 3 for glyf and loca is their null transform.
    directory.push(0x3f | (tag === 'glyf' || tag === 'loca' ? 0xc0 : 0), ...Buffer.from(tag, 'latin1'), ...base128(data.length));
  }
  const stream = brotliCompressSync(Buffer.concat(tables.map((t) => t.data)), { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
  const header = Buffer.alloc(48);
  const length = header.length + directory.length + stream.length;
  header.write('wOF2', 0, 'latin1');
  header.writeUInt32BE(sfnt.readUInt32BE(0), 4);
  header.writeUInt32BE(length, 8);
  header.writeUInt16BE(tables.length, 12);
  header.writeUInt32BE(12 + 16 * tables.length + tables.reduce((s, t) => s + pad4(t.data.length), 0), 16);
  header.writeUInt32BE(stream.length, 20);
  header.writeUInt16BE(1, 24);
  return Buffer.concat([header, Buffer.from(directory), stream]);
}

function base128(n: number): number[] {
  const bytes = [n & 0x7f];
  for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) bytes.unshift(0x80 | (n & 0x7f));
  return bytes;
}

/** A minimal, valid Lottie animation (one shape layer) with `overrides` merged at the top level. */
export function lottieJson(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    v: '5.7.4',
    fr: 30,
    ip: 0,
    op: 60,
    w: 512,
    h: 256,
    nm: 'test',
    ddd: 0,
    assets: [],
    layers: [{ ddd: 0, ind: 1, ty: 4, nm: 'box', sr: 1, ks: {}, ao: 0, shapes: [], ip: 0, op: 60, st: 0, bm: 0 }],
    ...overrides,
  });
}

/** An sfnt of `tables` behind a fresh table directory (each table padded to 4 bytes). */
export function sfntFromTables(flavor: number, tables: readonly { tag: string; data: Buffer }[]): Buffer {
  const header = Buffer.alloc(12 + 16 * tables.length);
  header.writeUInt32BE(flavor, 0);
  header.writeUInt16BE(tables.length, 4);
  const bodies: Buffer[] = [];
  let offset = header.length;
  tables.forEach(({ tag, data }, i) => {
    const at = 12 + i * 16;
    header.write(tag, at, 'latin1');
    header.writeUInt32BE(offset, at + 8);
    header.writeUInt32BE(data.length, at + 12);
    bodies.push(data, Buffer.alloc(pad4(data.length) - data.length));
    offset += pad4(data.length);
  });
  return Buffer.concat([header, ...bodies]);
}

/** The sfnt with a new name table: `family` as name IDs 1 and 16 (Windows, English), "Regular" as ID 2. */
export function withFamilyName(sfnt: Buffer, family: string): Buffer {
  const records: [number, string][] = [[1, family], [2, 'Regular'], [16, family]];
  const strings = records.map(([, text]) => Buffer.from(text, 'utf16le').swap16());
  const name = Buffer.alloc(6 + 12 * records.length);
  name.writeUInt16BE(records.length, 2);
  name.writeUInt16BE(name.length, 4);
  let at = 0;
  records.forEach(([id], i) => {
    const rec = 6 + 12 * i;
    name.writeUInt16BE(3, rec);
    name.writeUInt16BE(1, rec + 2);
    name.writeUInt16BE(0x409, rec + 4);
    name.writeUInt16BE(id, rec + 6);
    name.writeUInt16BE(strings[i]!.length, rec + 8);
    name.writeUInt16BE(at, rec + 10);
    at += strings[i]!.length;
  });
  const tables = sfntTables(sfnt).map((t) => (t.tag === 'name' ? { tag: 'name', data: Buffer.concat([name, ...strings]) } : t));
  return sfntFromTables(sfnt.readUInt32BE(0), tables);
}

/** One WOFF 1.0 directory entry; `offset` counts from the end of the directory. */
interface WoffEntry { tag: string; offset: number; compLength: number; origLength: number }

/** A WOFF 1.0 of `entries` over `body` (the bytes after the directory), as a hostile file lays them out. */
function woffOf(flavor: number, entries: readonly WoffEntry[], body: Buffer): Buffer {
  const start = 44 + 20 * entries.length;
  const header = Buffer.alloc(start);
  header.write('wOFF', 0, 'latin1');
  header.writeUInt32BE(flavor, 4);
  header.writeUInt32BE(start + body.length, 8);
  header.writeUInt16BE(entries.length, 12);
  header.writeUInt32BE(12 + 16 * entries.length + entries.reduce((s, e) => s + pad4(e.origLength), 0), 16);
  header.writeUInt16BE(1, 20);
  entries.forEach((e, i) => {
    const at = 44 + 20 * i;
    header.write(e.tag, at, 'latin1');
    header.writeUInt32BE(start + e.offset, at + 4);
    header.writeUInt32BE(e.compLength, at + 8);
    header.writeUInt32BE(e.origLength, at + 12);
  });
  return Buffer.concat([header, body]);
}

/** The tables a font cannot lack (head, cmap, maxp, name) of `sfnt`, each deflated, laid end to end. */
function woffCore(sfnt: Buffer): { entries: WoffEntry[]; body: Buffer } {
  const entries: WoffEntry[] = [];
  const parts: Buffer[] = [];
  let offset = 0;
  for (const { tag, data } of sfntTables(sfnt).filter((t) => ['head', 'cmap', 'maxp', 'name'].includes(t.tag))) {
    const deflated = deflateSync(data, { level: 9 });
    const packed = deflated.length < data.length ? deflated : data;
    entries.push({ tag, offset, compLength: packed.length, origLength: data.length });
    parts.push(packed, Buffer.alloc(pad4(packed.length) - packed.length));
    offset += pad4(packed.length);
  }
  return { entries, body: Buffer.concat(parts) };
}

/** Hostile WOFF 1.0 files built from a real font's essential tables (issue 27). */
export const hostileWoff = {
  /**
   * A decompression bomb: `copies` extra tables that all point at one deflated blob of `tableBytes`
   * zeros. 8 × 16 MiB: 16 KB of deflated zeros (25 KB with DejaVu Sans's tables) that inflate to 128 MiB,
   * each table within any per-table limit.
   */
  bomb(sfnt: Buffer, copies = 8, tableBytes = 16 * 1024 * 1024): Buffer {
    const { entries, body } = woffCore(sfnt);
    const blob = deflateSync(Buffer.alloc(tableBytes), { level: 9 });
    for (let i = 0; i < copies; i++) entries.push({ tag: `zz${String(i).padStart(2, '0')}`, offset: body.length, compLength: blob.length, origLength: tableBytes });
    return woffOf(sfnt.readUInt32BE(0), entries, Buffer.concat([body, blob]));
  },
  /** A second table whose compressed bytes are the name table's (the two ranges overlap). */
  overlapping(sfnt: Buffer): Buffer {
    const { entries, body } = woffCore(sfnt);
    const name = entries.find((e) => e.tag === 'name')!;
    return woffOf(sfnt.readUInt32BE(0), [...entries, { ...name, tag: 'zz00' }], body);
  },
  /** A table whose compressed bytes start inside the header and table directory. */
  intoDirectory(sfnt: Buffer): Buffer {
    const { entries, body } = woffCore(sfnt);
    const start = 44 + 20 * (entries.length + 1);
    return woffOf(sfnt.readUInt32BE(0), [...entries, { tag: 'zz00', offset: -start, compLength: 16, origLength: 16 }], body);
  },
  /** A table that starts beyond the end of the file. */
  pastTheEnd(sfnt: Buffer): Buffer {
    const { entries, body } = woffCore(sfnt);
    return woffOf(sfnt.readUInt32BE(0), [...entries, { tag: 'zz00', offset: body.length + 64, compLength: 16, origLength: 16 }], body);
  },
  /** A table that claims more compressed bytes than it inflates to. */
  compLongerThanOrig(sfnt: Buffer): Buffer {
    const { entries, body } = woffCore(sfnt);
    const name = entries.find((e) => e.tag === 'name')!;
    name.origLength = name.compLength - 1;
    return woffOf(sfnt.readUInt32BE(0), entries, body);
  },
};
/**
 * An H.264 MP4 of noise that barely compresses (about `frames` × 200 KB: lossless 480×270), with its
 * moov atom at the start (`faststart`) or, as most cameras and encoders leave it, at the end.
 */
export async function noisyMp4(frames: number, moov: 'start' | 'end'): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'media-fixture-'));
  try {
    for (let i = 0; i < frames; i++) {
      const noise = Buffer.alloc(480 * 270 * 3);
      for (let j = 0; j < noise.length; j += 4) noise.writeUInt32LE((Math.random() * 0xffffffff) >>> 0, j);
      await sharp(noise, { raw: { width: 480, height: 270, channels: 3 } }).png({ compressionLevel: 0 }).toFile(join(dir, `f${String(i).padStart(4, '0')}.png`));
    }
    const out = join(dir, 'out.mp4');
    await runBinary('ffmpeg', ['-v', 'error', '-nostdin', '-y', '-framerate', '30', '-i', join(dir, 'f%04d.png'), '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-pix_fmt', 'yuv420p', ...(moov === 'start' ? ['-movflags', '+faststart'] : []), out], { timeoutMs: 120_000 });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What a RangeMediaServer saw: requests per path, bytes sent per path, the most connections open at once. */
export interface RangeMediaServer {
  origin: string;
  requests: Map<string, number>;
  bytesSent: Map<string, number>;
  maxOpen: number;
  total(): { requests: number; bytes: number };
  reset(): void;
  close(): Promise<void>;
}

/**
 * A loopback media server that counts what it serves: `files` by path, answering `Range: bytes=a-b`
 * and `bytes=-n` with 206 (unless `ranges` is false: then every answer is the whole file with its
 * Content-Length, as servers that ignore ranges do), each answer held `delayMs` first so that
 * concurrent requests overlap.
 */
export async function rangeMediaServer(files: Record<string, Buffer>, opts: { ranges?: boolean; delayMs?: number } = {}): Promise<RangeMediaServer> {
  const { createServer } = await import('node:http');
  let open = 0;
  const state = {
    requests: new Map<string, number>(),
    bytesSent: new Map<string, number>(),
    maxOpen: 0,
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    state.requests.set(path, (state.requests.get(path) ?? 0) + 1);
    open++;
    state.maxOpen = Math.max(state.maxOpen, open);
    let sent = 0;
    let closed = false;
    res.on('close', () => {
      closed = true;
      open--;
      state.bytesSent.set(path, (state.bytesSent.get(path) ?? 0) + sent);
    });
    setTimeout(() => {
      const file = files[path];
      if (!file) return void res.writeHead(404).end();
      const m = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ''));
      let body = file;
      if (m && opts.ranges !== false) {
        const start = m[1] ? Number(m[1]) : Math.max(0, file.length - Number(m[2]));
        const end = m[1] && m[2] ? Math.min(Number(m[2]), file.length - 1) : file.length - 1;
        if (start >= file.length) return void res.writeHead(416, { 'content-range': `bytes */${file.length}` }).end();
        body = file.subarray(start, end + 1);
        res.writeHead(206, { 'content-type': 'application/octet-stream', 'content-length': body.length, 'content-range': `bytes ${start}-${end}/${file.length}`, 'accept-ranges': 'bytes' });
      } else {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.length });
      }
      // 64 KiB at a time with backpressure, so `sent` is what the client took (plus the socket's buffers), not what was queued.
      const next = () => {
        while (!closed && sent < body.length) {
          const chunk = body.subarray(sent, sent + 65536);
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', next);
        }
        if (!closed) res.end();
      };
      next();
    }, opts.delayMs ?? 0);
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    get requests() { return state.requests; },
    get bytesSent() { return state.bytesSent; },
    get maxOpen() { return state.maxOpen; },
    total: () => ({ requests: [...state.requests.values()].reduce((a, b) => a + b, 0), bytes: [...state.bytesSent.values()].reduce((a, b) => a + b, 0) }),
    reset: () => {
      state.requests.clear();
      state.bytesSent.clear();
      state.maxOpen = 0;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A HEIC picture (HEVC-coded HEIF, what a phone uploads) of `png`, made with Debian's heif-enc
 * (libheif-examples, installed by scripts/test.sh), lossless so that its colours are exact enough
 * to sample.
 */
export async function heicFromPng(png: Buffer, quality = 95): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'heic-fixture-'));
  try {
    await writeFile(join(dir, 'in.png'), png);
    await new Promise<void>((resolve, reject) => {
      execFile('heif-enc', ['-q', String(quality), '-o', join(dir, 'out.heic'), join(dir, 'in.png')], (err, _out, stderr) => (err ? reject(new Error(`heif-enc failed: ${stderr}`)) : resolve()));
    });
    return await readFile(join(dir, 'out.heic'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A HEIC holding several pictures (heif-enc writes them in order, the first primary) whose primary
 * is made `primary` by rewriting the `pitm` box with that picture's item id (read with heif-info).
 */
export async function heicOfPictures(pngs: Buffer[], primary: number): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'heic-fixture-'));
  try {
    const inputs = await Promise.all(pngs.map(async (png, i) => {
      const file = join(dir, `in-${i}.png`);
      await writeFile(file, png);
      return file;
    }));
    const run = (bin: string, args: string[]) => new Promise<string>((resolve, reject) => {
      execFile(bin, args, (err, out, stderr) => (err ? reject(new Error(`${bin} failed: ${stderr}`)) : resolve(out)));
    });
    const file = join(dir, 'out.heic');
    await run('heif-enc', ['-q', '95', '-o', file, ...inputs]);
    const ids = [...(await run('heif-info', [file])).matchAll(/^image: \d+x\d+ \(id=(\d+)\)/gm)].map((m) => Number(m[1]));
    const bytes = await readFile(file);
    const pitm = bytes.indexOf('pitm');
    bytes.writeUInt16BE(ids[primary]!, pitm + 8);
    return bytes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `heic` with every `ispe` box (the picture's declared size) saying width × height: a HEIC bomb's header. */
export function heicWithSize(heic: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(heic);
  for (let at = out.indexOf('ispe'); at >= 0; at = out.indexOf('ispe', at + 4)) {
    out.writeUInt32BE(width, at + 8);
    out.writeUInt32BE(height, at + 12);
  }
  return out;
}
