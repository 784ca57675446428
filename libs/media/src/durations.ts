import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, makeOwnScratch, sweepScratch, validationFailed, type AppConfig, type FieldErrors } from '#libs/core';
import { StoredFileNotFoundError, type ByteRange, type StorageDriver } from '#libs/storage';
import { DEFAULT_FETCH_LIMITS, FileTooLarge, MediaFetchError, readRangeToFile, type RangeRead } from './fetch.js';
import { probeMedia } from './probe.js';
import { readHead, sniff, type MediaKind } from './sniff.js';

export interface DurationSource {
  src: string;
  /** Path of the `src` in the request, for the error (`edit.timeline.tracks[0].clips[1].asset.src`). */
  path: string;
  type: 'video' | 'audio' | 'luma';
}

const EXPECT: Readonly<Record<DurationSource['type'], readonly MediaKind[]>> = {
  video: ['video'],
  audio: ['audio', 'video'],
  luma: ['video', 'image'],
};

/**
 * The limits of measuring `length: "auto"` media in the API (decisions.md "Hostile input (issue 27):
 * outbound" gives each value's reason). The one place they are set.
 */
export interface ProbeLimits {
  /** Distinct media files measured for one request; more is 422 VALIDATION_FAILED naming the first path over it. */
  maxMediaPerRequest: number;
  /** Bytes read of one file, all its ranges together (a server that ignores ranges is cut here). */
  maxBytesPerProbe: number;
  /** The first read of a file (its head), and the first read of its tail when the head was not enough. */
  stepBytes: number;
  /** Probes running at once for one request, for one workspace (all its requests), and in the whole process. */
  perRequest: number;
  perWorkspace: number;
  perProcess: number;
  /** A file larger than this is refused as the worker would refuse it (its download cap). */
  maxFileBytes: number;
  /** One probe's deadline, all its reads and ffprobe runs together (a slow server holds a slot this long at most). */
  timeoutMs: number;
  /** What a probe learnt is reused for this long, per workspace and URL, in a cache of at most `cacheEntries`. */
  cacheTtlMs: number;
  cacheEntries: number;
}

export const PROBE_LIMITS: ProbeLimits = {
  maxMediaPerRequest: 20,
  maxBytesPerProbe: 8 * 1024 * 1024,
  stepBytes: 256 * 1024,
  perRequest: 2,
  perWorkspace: 2,
  perProcess: 4,
  maxFileBytes: DEFAULT_FETCH_LIMITS.maxBytes,
  timeoutMs: 20_000,
  cacheTtlMs: 10 * 60_000,
  cacheEntries: 2000,
};

/**
 * Reads bytes `range` (inclusive, clamped at the file's end) of a media file into `file` at the same
 * offset (the file exists), at most `maxBytes` of them.
 */
/** Reads `range` of `src` into `file` at its offset, at most `maxBytes`, within `timeoutMs`. */
export type RangeReader = (src: string, range: ByteRange, file: string, maxBytes: number, timeoutMs: number) => Promise<RangeRead>;

/** What a probe learnt of one file: its duration in seconds, or that it is a picture (no duration, none needed). */
type Measured = { kind: MediaKind; mime: string; duration?: number };

/** At most `size` holders at once; the others wait in order. */
class Semaphore {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}

  get idle(): boolean {
    return this.held === 0 && this.waiting.length === 0;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.held >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.held--;
    }
  }
}

/**
 * Measures the media of `length: "auto"` clips for the API, never holding a file in memory: each
 * file's head is read with a Range request into a sparse temporary file of the file's real size
 * (so ffprobe sees the true size: a WAV's or a CBR MP3's duration comes from it), probed, and only
 * when that is not enough (an MP4 whose moov atom is at the end) its tail too, up to
 * `maxBytesPerProbe` in all. At most `perRequest` probes run at once for a request, `perWorkspace`
 * for a workspace and `perProcess` in the process; what a probe learnt is reused per workspace and URL for `cacheTtlMs`.
 */
export class MediaProber {
  private readonly slots: Semaphore;
  /** Each workspace's share of the slots: one workspace's slow URLs cannot take them all (dropped when idle). */
  private readonly workspaces = new Map<string, Semaphore>();
  private readonly cache = new Map<string, { at: number; value: Measured }>();
  private readonly running = new Map<string, Promise<Measured>>();
  /** The probe folders of API processes of this machine that were killed mid-probe, removed once before the first probe. */
  private swept: Promise<unknown> | undefined;

  constructor(
    private readonly read: RangeReader,
    private readonly opts: { dir?: string; limits?: Partial<ProbeLimits>; now?: () => number } = {},
  ) {
    this.slots = new Semaphore(this.limits.perProcess);
  }

  get limits(): ProbeLimits {
    return { ...PROBE_LIMITS, ...this.opts.limits };
  }

  /**
   * Durations (seconds) by `src` for one workspace's request. Over `maxMediaPerRequest` distinct
   * files → 422 VALIDATION_FAILED before anything is read. A file that cannot be read or has no
   * duration (a luma picture has none, and needs none) → 422 MEDIA_UNAVAILABLE naming every
   * offending path, as the worker would, but before anything is queued or held.
   */
  async durations(workspaceId: string, sources: readonly DurationSource[], signal?: AbortSignal): Promise<Map<string, number>> {
    const durations = new Map<string, number>();
    if (!sources.length) return durations;
    const limits = this.limits;
    const bySrc = new Map<string, DurationSource[]>();
    for (const s of sources) {
      if (!bySrc.has(s.src) && bySrc.size >= limits.maxMediaPerRequest) {
        const path = s.path.replace(/\.asset\.src$/, '.length');
        throw validationFailed({ [path]: [`at most ${limits.maxMediaPerRequest} distinct media files of clips with length "auto" are measured per request; give the length in seconds`] }, 'Too many media files to measure');
      }
      bySrc.set(s.src, [...(bySrc.get(s.src) ?? []), s]);
    }
    const errors: FieldErrors = {};
    const fail = (uses: readonly DurationSource[], message: string) => {
      for (const u of uses) (errors[u.path] ??= []).push(message);
    };
    const request = new Semaphore(limits.perRequest);
    await Promise.all([...bySrc.entries()].map(([src, uses]) => request.run(async () => {
      const expect = [...new Set(uses.flatMap((u) => EXPECT[u.type]))];
      try {
        const measured = await this.measure(workspaceId, src, signal);
        if (!expect.includes(measured.kind)) return fail(uses, `Expected ${expect.join(' or ')}, got ${measured.mime}`);
        if (measured.kind === 'image') return; // a luma picture: its clip takes the default length
        if (measured.duration === undefined) return fail(uses, 'The file has no duration that can be read');
        durations.set(src, measured.duration);
      } catch (err) {
        if (err instanceof MediaFetchError) fail(uses, err.message);
        else throw err;
      }
    })));
    if (Object.keys(errors).length) {
      throw new ApiError('MEDIA_UNAVAILABLE', `The length of a clip is "auto" but its media could not be measured: ${Object.keys(errors).join(', ')}`, { errors });
    }
    return durations;
  }

  /** One file's measure: from the cache, from a probe of the same file already running, or a new probe. */
  private measure(workspaceId: string, src: string, signal?: AbortSignal): Promise<Measured> {
    const key = `${workspaceId}\n${src}`;
    const now = (this.opts.now ?? Date.now)();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < this.limits.cacheTtlMs) return Promise.resolve(hit.value);
    if (hit) this.cache.delete(key);
    let running = this.running.get(key);
    if (!running) {
      running = this.inTurn(workspaceId, () => this.probe(src, signal)).then((value) => {
        this.cache.set(key, { at: (this.opts.now ?? Date.now)(), value });
        for (const oldest of this.cache.keys()) {
          if (this.cache.size <= this.limits.cacheEntries) break;
          this.cache.delete(oldest);
        }
        return value;
      }).finally(() => this.running.delete(key));
      this.running.set(key, running);
    }
    return running;
  }

  /** One probe in a private temporary file, removed after, under one deadline (`timeoutMs`). */
  private async probe(src: string, signal?: AbortSignal): Promise<Measured> {
    const limits = this.limits;
    const base = this.opts.dir ?? join(tmpdir(), 'media-probe');
    await (this.swept ??= sweepScratch(base).catch(() => undefined));
    const dir = join(await makeOwnScratch(base), `probe-${randomUUID()}`);
    await mkdir(dir, { mode: 0o700 });
    const file = join(dir, 'media');
    // One deadline for the whole probe: each read and ffprobe run gets what is left of it.
    const deadline = Date.now() + limits.timeoutMs;
    const late = () => new MediaFetchError(src, `The file could not be measured within ${limits.timeoutMs / 1000} s; give the length in seconds`);
    const left = () => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw late();
      return ms;
    };
    try {
      return await this.measureFile(src, file, left, signal);
    } catch (err) {
      // A read or ffprobe cut by what was left of the deadline says so, not "took longer than 283 ms".
      throw err instanceof MediaFetchError && Date.now() >= deadline - 50 ? late() : err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Runs a probe within its workspace's share (`perWorkspace`) and the process's slots (`perProcess`). */
  private async inTurn<T>(workspaceId: string, task: () => Promise<T>): Promise<T> {
    let share = this.workspaces.get(workspaceId);
    if (!share) this.workspaces.set(workspaceId, (share = new Semaphore(this.limits.perWorkspace)));
    try {
      return await share.run(() => this.slots.run(task));
    } finally {
      if (share.idle && this.workspaces.get(workspaceId) === share) this.workspaces.delete(workspaceId);
    }
  }

  /**
   * Reads as little of `src` as tells its duration: the head; then, for a file whose head was not
   * enough and whose size is known, a tail of `stepBytes`, then the rest of the budget from the end.
   */
  private async measureFile(src: string, file: string, left: () => number, signal?: AbortSignal): Promise<Measured> {
    const limits = this.limits;
    await writeFile(file, '', { mode: 0o600 });
    let budget = limits.maxBytesPerProbe;
    const head = await this.read(src, { start: 0, end: limits.stepBytes - 1 }, file, budget, left());
    budget -= head.read;
    if (head.total !== undefined && head.total > limits.maxFileBytes) throw new FileTooLarge(src, limits.maxFileBytes);
    const type = sniff(await readHead(file, 4096));
    if (!type) throw new MediaFetchError(src, 'The file is not a media type the renderer reads');
    if (type.kind !== 'video' && type.kind !== 'audio') return type;
    const total = head.total;
    const complete = total !== undefined ? head.read >= total : head.whole && !head.truncated;
    // A cut answer of unknown size would give a wrong duration (a WAV's is its size over its rate).
    if (!complete && total === undefined) throw new MediaFetchError(src, 'The server told neither the file\'s size nor sent a part of it; give the length in seconds');
    if (!complete) await truncate(file, total!); // sparse: ffprobe sees the real size, the bytes not read are zeros
    let tailStart = total ?? head.read; // bytes [0, head.read) and [tailStart, total) are in the file
    for (const want of head.whole || complete ? [] : [limits.stepBytes, Infinity]) {
      const duration = await durationOf(file, signal, left());
      if (duration !== undefined) return { ...type, duration };
      const start = Math.max(head.read, tailStart - Math.min(want, budget));
      if (start >= tailStart) break;
      budget -= (await this.read(src, { start, end: tailStart - 1 }, file, budget, left())).read;
      tailStart = start;
    }
    const duration = await durationOf(file, signal, left());
    if (duration !== undefined) return { ...type, duration };
    const mb = Math.round(limits.maxBytesPerProbe / 1024 / 1024);
    throw new MediaFetchError(src, complete ? 'The file has no duration that can be read' : `No duration could be read within ${mb} MB of the file; give the length in seconds`);
  }
}

/** ffprobe's duration of a (possibly sparse) file; undefined when it cannot tell. */
async function durationOf(file: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<number | undefined> {
  try {
    return (await probeMedia(file, signal, timeoutMs)).duration;
  } catch (err) {
    if (/ffprobe failed/.test((err as Error).message)) return undefined;
    throw err;
  }
}

/**
 * The reader of a deployment: our own stored files (`<PUBLIC_URL>/files/…`) by a range read of
 * storage, anything else by an HTTP Range request under the SSRF rules of the environment.
 */
export function rangeReader(config: Pick<AppConfig, 'env'>, storage: Pick<StorageDriver, 'keyFromUrl' | 'stat' | 'read'>): RangeReader {
  const policy = config.env === 'production' ? 'production' : 'development';
  return async (src, range, file, maxBytes, timeoutMs) => {
    const key = storage.keyFromUrl(src);
    if (key === undefined) return readRangeToFile(src, range, file, { policy, limits: { maxBytes, timeoutMs } });
    const stat = await storage.stat(key);
    if (!stat) throw new MediaFetchError(src, 'No stored file at this URL');
    const end = Math.min(range.end, stat.sizeBytes - 1, range.start + maxBytes - 1);
    if (end < range.start) return { read: 0, total: stat.sizeBytes, whole: false, truncated: false };
    let read = 0;
    try {
      const count = new Transform({ transform: (chunk: Buffer, _enc, done) => { read += chunk.length; done(null, chunk); } });
      await pipeline(await storage.read(key, { start: range.start, end }), count, createWriteStream(file, { flags: 'r+', start: range.start }));
    } catch (err) {
      if (err instanceof StoredFileNotFoundError) throw new MediaFetchError(src, 'No stored file at this URL');
      throw err;
    }
    return { read, total: stat.sizeBytes, whole: false, truncated: false };
  };
}
