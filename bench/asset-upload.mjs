#!/usr/bin/env node
/**
 * Asset upload benchmark (issue 14): a 200 MB video uploaded through the API (POST /v1/assets,
 * multipart streamed from disk by this process over node:http) against a plain copy of the same file
 * into the same storage in the same run, for each storage driver:
 *   - local: a stream copy (fs read stream → fs write stream, no fsync) into the DATA_DIR/files folder;
 *   - s3: the AWS SDK's `Upload` of a file read stream into the same bucket of an s3rver this bench
 *     starts on a free loopback port (lib-storage's defaults: parts of 5 MiB, 4 at a time), with the
 *     driver's S3 client.
 * Alternated for --rounds; prints MB/s of each, their ratio (target >= 0.6) and the API process's
 * peak RSS growth during the upload (VmHWM reset through /proc/<pid>/clear_refs; target <= 64 MB).
 * Then, with one worker, upload-to-ready of a 5 MB JPEG: from the POST's start until
 * GET /v1/assets/{id} answers `ready` (polled every 10 ms), against the same work done plainly in this
 * process (store the JPEG, sharp metadata, a 320 px webp thumbnail stored beside it).
 * Runs dist/ (npm run -s build first). See docs/benchmarks.md.
 *
 *   node bench/asset-upload.mjs [--rounds 3] [--jpegs 20] [--drivers local,s3] [--size-mb 200] [--api-node-args ARGS]
 *                               [--profile DIR] [--json]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import sharp from 'sharp';
import { loadConfig } from '../dist/libs/core/src/index.js';
import { THUMBNAIL_SIZE, compositorDir, runBinary } from '../dist/libs/media/src/index.js';
import { createStorage } from '../dist/libs/storage/src/index.js';
import {
  busyBeforeLoad, cpuProfileArgs, cpuTimes, integer, log, machine, median, printProfile, procCpuTicks, profileSummary, quantile, runBench, sleep,
  startChild, startStack, stealPct, stopChild, stopStack, tempDir, waitFor,
} from './lib/harness.mjs';

const TARGET_RATIO = 0.6;
const TARGET_RSS_MB = 64;
const MB = 1e6;
const MiB = 1024 * 1024;

// --- inputs ---------------------------------------------------------------------------------------

/**
 * An H.264 mp4 of about `bytes` bytes: 1280×720, 30 fps, noise pictures (8 of them, cycled) encoded
 * by the compositor's ffmpeg at a constant bitrate (x264 ultrafast, CBR with filler), so the size is
 * the bitrate times the duration. The rawvideo and lavfi sources are not in that build: the frames go
 * in as JPEGs on a pipe.
 */
async function makeVideo(file, bytes) {
  const [w, h, fps, seconds] = [1280, 720, 30, 20];
  const frames = await Promise.all(Array.from({ length: 8 }, () => sharp({ create: { width: w, height: h, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 50 } } }).jpeg({ quality: 90 }).toBuffer()));
  // ~0.4 % of the stream is container and headers above the bitrate: aim a little lower.
  const bitrate = Math.floor((bytes * 8 * 0.995) / seconds);
  const dir = compositorDir();
  const ffmpeg = spawn(join(dir, 'ffmpeg'), [
    '-v', 'error', '-y', '-f', 'image2pipe', '-c:v', 'mjpeg', '-framerate', String(fps), '-i', '-',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-b:v', String(bitrate), '-minrate', String(bitrate), '-maxrate', String(bitrate),
    '-bufsize', String(bitrate / 5), '-x264-params', 'nal-hrd=cbr', '-movflags', '+faststart', file,
  ], { cwd: dir, env: { ...process.env, LD_LIBRARY_PATH: dir }, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  ffmpeg.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((res) => ffmpeg.on('close', res));
  ffmpeg.stdin.on('error', () => undefined); // ffmpeg failing shows in its exit code
  for (let i = 0; i < fps * seconds && ffmpeg.exitCode === null; i++) {
    if (!ffmpeg.stdin.write(frames[i % frames.length])) await new Promise((res) => ffmpeg.stdin.once('drain', res));
  }
  ffmpeg.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`ffmpeg exited ${code}: ${stderr.trim()}`);
  const probe = JSON.parse((await runBinary('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_entries', 'stream=codec_name,width,height,nb_frames:format=duration', file])).stdout);
  return { bytes: (await stat(file)).size, codec: probe.streams[0]?.codec_name, width: probe.streams[0]?.width, height: probe.streams[0]?.height, frames: Number(probe.streams[0]?.nb_frames), durationSec: Number(probe.format?.duration) };
}

/** A JPEG of about `bytes` bytes: noise (which JPEG cannot shrink), sized by one trial encode. */
async function makeJpeg(bytes) {
  const encode = (w, h) => sharp({ create: { width: w, height: h, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg({ quality: 90 }).toBuffer();
  const trial = await encode(1600, 1200);
  const scale = Math.sqrt(bytes / trial.length);
  const [w, h] = [Math.round(1600 * scale), Math.round(1200 * scale)];
  const jpeg = await encode(w, h);
  return { jpeg, width: w, height: h };
}

// --- HTTP -----------------------------------------------------------------------------------------

/**
 * A POST whose body is `parts` (buffers, and `{ file }` read from disk as a stream) sent in order
 * over node:http with a known Content-Length. Answers { status, text }.
 */
function streamPost(url, headers, parts) {
  const length = parts.reduce((n, p) => n + (Buffer.isBuffer(p) ? p.length : p.size), 0);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-length': length } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const send = (i) => {
      if (i === parts.length) return req.end();
      const part = parts[i];
      if (Buffer.isBuffer(part)) {
        req.write(part);
        return send(i + 1);
      }
      const source = createReadStream(part.file);
      source.on('error', (err) => req.destroy(err));
      source.on('end', () => send(i + 1));
      source.pipe(req, { end: false });
    };
    send(0);
  });
}

/** POST /api/v1/assets: a multipart body with one part "file" (streamed from disk, or a buffer). Answers the `data` of the 201. */
async function uploadAsset(base, key, { file, buffer, size, name, type }) {
  const boundary = `bench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const res = await streamPost(`${base}/api/v1/assets`, { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` }, [head, buffer ?? { file, size }, tail]);
  if (res.status !== 201) throw new Error(`upload of ${name}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  return JSON.parse(res.text).data;
}

async function api(base, key, method, path) {
  const res = await fetch(`${base}/api${path}`, { method, headers: { 'x-api-key': key } });
  const body = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body.data;
}

/** Polls GET /v1/assets/{id} every `everyMs` until it is `ready` (a `failed` asset fails the run). */
async function untilReady(base, key, id, { everyMs, timeoutMs }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const asset = await api(base, key, 'GET', `/v1/assets/${id}`);
    if (asset.status === 'ready') return asset;
    if (asset.status === 'failed') throw new Error(`asset ${id} failed: ${JSON.stringify(asset.error)}`);
    if (Date.now() > deadline) throw new Error(`asset ${id} still ${asset.status} after ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

// --- the API's memory -----------------------------------------------------------------------------

function vm(pid, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * The peak resident memory of a process while `during` runs: VmHWM reset to the current RSS at the
 * start (5 written to /proc/<pid>/clear_refs) and read at the end; VmRSS also sampled every 20 ms in
 * case the reset is not allowed. Answers { value: what `during` answered, peak (bytes), source }.
 */
async function peakRss(pid, during) {
  let reset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  let peak = vm(pid, 'VmRSS');
  const timer = setInterval(() => {
    peak = Math.max(peak, vm(pid, 'VmRSS') ?? 0);
  }, 20);
  try {
    const value = await during();
    peak = Math.max(peak, vm(pid, 'VmRSS') ?? 0);
    if (reset) peak = Math.max(peak, vm(pid, 'VmHWM') ?? 0);
    return { value, peak, source: reset ? 'VmHWM' : 'VmRSS samples' };
  } finally {
    clearInterval(timer);
  }
}

// --- one driver -----------------------------------------------------------------------------------

/** s3rver (scripts/s3rver.mjs, the tests' S3-compatible server with the repository's fixes) on a free loopback port. */
async function startS3rver() {
  const dir = tempDir('asset-upload-s3');
  const child = startChild('s3rver', process.execPath, ['--openssl-legacy-provider', 'scripts/s3rver.mjs', dir], process.env, { last: true });
  await waitFor('s3rver', child, () => existsSync(join(dir, 'port')), 15_000);
  const url = `http://127.0.0.1:${readFileSync(join(dir, 'port'), 'utf8').trim()}`;
  log(`s3rver on ${url}`);
  return { url, child };
}

/** The plain copy of `video` into the driver's storage, removed again: answers { ms } (local: and the fsync's ms after it, untimed in `ms`). */
function plainCopier(driver, config, storage) {
  if (driver === 'local') {
    return async (video, round) => {
      const dir = join(config.storage.dir, 'bench-copy');
      await mkdir(dir, { recursive: true });
      const target = join(dir, `copy-${round}.mp4`);
      const t = performance.now();
      await pipeline(createReadStream(video), createWriteStream(target));
      const ms = performance.now() - t;
      // Not in the figure (a plain copy does not fsync); what the API's put pays for it on top.
      const fh = await open(target, 'r+');
      const s = performance.now();
      await fh.sync();
      const fsyncMs = performance.now() - s;
      await fh.close();
      await rm(dir, { recursive: true, force: true });
      return { ms, fsyncMs };
    };
  }
  return async (video, round) => {
    const key = `bench-copy/copy-${round}.mp4`;
    const t = performance.now();
    await new Upload({
      client: storage.client,
      params: { Bucket: config.storage.bucket, Key: key, Body: createReadStream(video), ContentType: 'video/mp4' },
    }).done();
    const ms = performance.now() - t;
    await storage.client.send(new DeleteObjectCommand({ Bucket: config.storage.bucket, Key: key }));
    return { ms };
  };
}

/** Written data on its way to the disk before the next measurement, so neither pays for the other's. */
function settleDisk() {
  execFileSync('sync');
}

async function measureDriver(driver, opts, inputs) {
  const extraEnv = { VIDEO_ENGINE: 'off', NODE_OPTIONS: undefined, STORAGE_DRIVER: driver, ASSET_MAX_BYTES: String(Math.max(200 * MiB, inputs.video.bytes + MiB)) };
  let s3;
  if (driver === 's3') {
    s3 = await startS3rver();
    Object.assign(extraEnv, {
      S3_ENDPOINT: s3.url, S3_BUCKET: 'bench-assets', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER', S3_FORCE_PATH_STYLE: 'true', S3_CREATE_BUCKET: 'true',
    });
  }
  const profileSince = Date.now();
  const stack = await startStack({ name: `asset-upload-${driver}`, workers: 1, extraEnv, apiNodeArgs: [...opts['api-node-args'], ...(opts.profile ? cpuProfileArgs(opts.profile) : [])] });
  const key = stack.workspace.liveKey;
  const config = loadConfig(stack.env);
  const storage = createStorage(config);
  await storage.checkReady(); // the bucket, created when missing
  const copy = plainCopier(driver, config, storage);
  const { video, jpeg } = inputs;

  // Warm-up: the route, the worker (sharp, the queue), the storage connection.
  const warm = await uploadAsset(stack.base, key, { buffer: jpeg.jpeg, size: jpeg.jpeg.length, name: 'warm.jpg', type: 'image/jpeg' });
  await untilReady(stack.base, key, warm.id, { everyMs: 50, timeoutMs: 60_000 });
  await api(stack.base, key, 'DELETE', `/v1/assets/${warm.id}`);
  await copy(video.file, 'warm');
  settleDisk();

  // --- 200 MB video: plain copy vs the API, alternated ---------------------------------------------
  // The API's memory is measured against its RSS here, warmed up and idle: a round's freed buffers
  // stay in the allocator, so the RSS before a later round already holds the previous one's peak.
  const idleRss = vm(stack.api.pid, 'VmRSS');
  const rounds = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const plain = await copy(video.file, round);
    settleDisk();

    const cpuBefore = procCpuTicks(stack.api.pid);
    const t = performance.now();
    const rss = await peakRss(stack.api.pid, () => uploadAsset(stack.base, key, { file: video.file, size: video.bytes, name: 'bench-video.mp4', type: 'video/mp4' }));
    const uploaded = rss.value;
    const uploadMs = performance.now() - t;
    const apiCpuSec = (procCpuTicks(stack.api.pid) - cpuBefore) / 100;
    const ready = await untilReady(stack.base, key, uploaded.id, { everyMs: 50, timeoutMs: 180_000 });
    const readyMs = performance.now() - t;
    if (ready.type !== 'video' || ready.sizeBytes !== video.bytes) throw new Error(`the uploaded video came back as ${ready.type}, ${ready.sizeBytes} bytes (sent ${video.bytes})`);
    await api(stack.base, key, 'DELETE', `/v1/assets/${uploaded.id}`);
    settleDisk();

    const r = {
      copyMBps: video.bytes / MB / (plain.ms / 1000),
      apiMBps: video.bytes / MB / (uploadMs / 1000),
      copyMs: Math.round(plain.ms),
      ...(plain.fsyncMs !== undefined ? { copyFsyncMs: Math.round(plain.fsyncMs) } : {}),
      uploadMs: Math.round(uploadMs),
      processMs: Math.round(readyMs - uploadMs),
      apiCpuSec,
      rssGrowthMB: (rss.peak - idleRss) / MiB,
      rssSource: rss.source,
    };
    r.ratio = r.apiMBps / r.copyMBps;
    rounds.push(r);
    log(`${driver} round ${round}: copy ${r.copyMBps.toFixed(0)} MB/s, API ${r.apiMBps.toFixed(0)} MB/s (${r.ratio.toFixed(2)} x, ${apiCpuSec.toFixed(2)} CPU-s), API RSS +${r.rssGrowthMB.toFixed(1)} MB, ready ${(r.processMs / 1000).toFixed(1)} s after the upload`);
  }

  // --- 5 MB JPEG: upload-to-ready vs the plain work in this process ---------------------------------
  const toReady = [];
  const toAnswer = [];
  for (let i = 0; i < opts.jpegs; i++) {
    const t = performance.now();
    const uploaded = await uploadAsset(stack.base, key, { buffer: jpeg.jpeg, size: jpeg.jpeg.length, name: `photo-${i}.jpg`, type: 'image/jpeg' });
    toAnswer.push(performance.now() - t);
    await untilReady(stack.base, key, uploaded.id, { everyMs: 10, timeoutMs: 60_000 });
    toReady.push(performance.now() - t);
    await api(stack.base, key, 'DELETE', `/v1/assets/${uploaded.id}`);
  }
  const plainMs = [];
  for (let i = -2; i < opts.jpegs; i++) {
    const t = performance.now();
    await storage.put(`bench-plain/photo-${i + 2}.jpg`, jpeg.jpeg);
    const meta = await sharp(jpeg.jpeg).metadata();
    const thumb = await sharp(jpeg.jpeg).autoOrient().resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
    await storage.put(`bench-plain/photo-${i + 2}-thumb.webp`, thumb);
    if (i >= 0) plainMs.push(performance.now() - t); // the first two warm sharp up
    if (meta.width !== jpeg.width) throw new Error(`sharp read ${meta.width} px wide, made ${jpeg.width}`);
  }
  await storage.deletePrefix('bench-plain/');
  log(`${driver} jpeg: upload-to-ready p50 ${quantile(toReady, 0.5).toFixed(0)} ms, plain p50 ${quantile(plainMs, 0.5).toFixed(0)} ms`);

  if (opts.profile) await stopChild(stack.api, { timeoutMs: 15_000, signal: 'SIGUSR2' });
  await stopStack(stack);
  if (s3) await stopChild(s3.child);

  const copyMBps = median(rounds.map((r) => r.copyMBps));
  const apiMBps = median(rounds.map((r) => r.apiMBps));
  return {
    copyMBps, apiMBps, ratio: apiMBps / copyMBps,
    idleRssMB: idleRss / MiB,
    peakRssGrowthMB: Math.max(...rounds.map((r) => r.rssGrowthMB)),
    rounds,
    jpeg: {
      uploadToReady: { p50: quantile(toReady, 0.5), p90: quantile(toReady, 0.9) },
      uploadAnswered: { p50: quantile(toAnswer, 0.5), p90: quantile(toAnswer, 0.9) },
      plain: { p50: quantile(plainMs, 0.5), p90: quantile(plainMs, 0.9) },
      ratio: quantile(toReady, 0.5) / quantile(plainMs, 0.5),
    },
    ...(opts.profile ? { profile: profileSummary(opts.profile, profileSince) } : {}),
  };
}

async function run(opts) {
  if (opts.profile) await mkdir(opts.profile, { recursive: true });
  const work = tempDir('asset-upload');
  let t = performance.now();
  const videoFile = join(work, 'bench-video.mp4');
  const video = { file: videoFile, ...(await makeVideo(videoFile, opts['size-mb'] * MB)) };
  const { jpeg, width, height } = await makeJpeg(5 * MB);
  log(`inputs made in ${((performance.now() - t) / 1000).toFixed(1)} s: video ${(video.bytes / MB).toFixed(1)} MB (${video.codec} ${video.width}×${video.height}, ${video.frames} frames, ${video.durationSec} s), JPEG ${(jpeg.length / MB).toFixed(2)} MB ${width}×${height}`);
  if (video.codec !== 'h264' || !(video.frames > 0)) throw new Error(`the video came out as ${JSON.stringify(video)}`);

  const busyBefore = await busyBeforeLoad();
  const cpuBefore = cpuTimes();
  t = performance.now();
  const drivers = {};
  for (const driver of opts.drivers) drivers[driver] = await measureDriver(driver, opts, { video, jpeg: { jpeg, width, height } });
  return {
    ...machine(),
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    busyBeforePct: busyBefore,
    stealPct: stealPct(cpuBefore, cpuTimes()),
    seconds: Math.round((performance.now() - t) / 100) / 10,
    video: { bytes: video.bytes, codec: video.codec, width: video.width, height: video.height, frames: video.frames, durationSec: video.durationSec },
    jpeg: { bytes: jpeg.length, width, height },
    rounds: opts.rounds,
    jpegs: opts.jpegs,
    apiNodeArgs: opts['api-node-args'],
    drivers,
    targets: { ratio: TARGET_RATIO, peakRssGrowthMB: TARGET_RSS_MB },
  };
}

const f0 = (n) => n.toFixed(0);
const f1 = (n) => n.toFixed(1);
const f2 = (n) => n.toFixed(2);

await runBench({
  name: 'asset-upload',
  flags: {
    rounds: { arg: 'N', default: 3, parse: integer(1), help: 'alternated copy/upload rounds of the video per driver; figures are medians (default 3)' },
    jpegs: { arg: 'N', default: 20, parse: integer(1), help: 'JPEG uploads timed to ready per driver (default 20)' },
    drivers: {
      arg: 'LIST', default: ['local', 's3'], help: 'comma-separated storage drivers: local, s3 (default local,s3)',
      parse: (v, name) => {
        const list = v.split(',').map((s) => s.trim()).filter(Boolean);
        if (!list.length || list.some((d) => !['local', 's3'].includes(d)) || new Set(list).size !== list.length) throw new Error(`--${name} must list local and/or s3, comma-separated (got "${v}")`);
        return list;
      },
    },
    'size-mb': { arg: 'MB', default: 200, parse: integer(1), help: 'size of the video in MB of 10^6 bytes (default 200)' },
    'api-node-args': {
      arg: 'ARGS', default: [], parse: (v) => v.split(/\s+/).filter(Boolean),
      help: "Node options for the API process, space-separated (e.g. --api-node-args=--max-semi-space-size=2)",
    },
    profile: { arg: 'DIR', default: null, parse: (v) => resolve(v), help: "run the API with --cpu-prof, its .cpuprofile written to DIR; prints the top costs (the API's whole life)" },
  },
  footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
  run,
  summary: (r) => {
    console.log(`video ${f1(r.video.bytes / MB)} MB ${r.video.codec} ${r.video.width}×${r.video.height}; JPEG ${f2(r.jpeg.bytes / MB)} MB ${r.jpeg.width}×${r.jpeg.height}; ${r.rounds} rounds, ${r.jpegs} JPEGs; load ${r.loadAverage}, steal ${r.stealPct} %`);
    for (const [driver, d] of Object.entries(r.drivers)) {
      console.log(`${driver.padEnd(5)} video  plain copy ${f0(d.copyMBps)} MB/s, API ${f0(d.apiMBps)} MB/s = ${f2(d.ratio)} x; `
        + `API peak RSS growth ${f1(d.peakRssGrowthMB)} MB over ${f0(d.idleRssMB)} MB idle; `
        + `API CPU ${d.rounds.map((x) => f2(x.apiCpuSec)).join(', ')} s per upload; ready ${d.rounds.map((x) => f1(x.processMs / 1000)).join(', ')} s after it`
        + (d.rounds[0].copyFsyncMs !== undefined ? `; the copy's fsync ${d.rounds.map((x) => x.copyFsyncMs).join(', ')} ms (not in the copy's time)` : ''));
      console.log(`${driver.padEnd(5)} jpeg   upload-to-ready p50 ${f0(d.jpeg.uploadToReady.p50)} ms p90 ${f0(d.jpeg.uploadToReady.p90)} ms (POST answered p50 ${f0(d.jpeg.uploadAnswered.p50)} ms); `
        + `plain store + sharp metadata + thumbnail p50 ${f0(d.jpeg.plain.p50)} ms p90 ${f0(d.jpeg.plain.p90)} ms`);
    }
    for (const [driver, d] of Object.entries(r.drivers)) if (d.profile) printProfile(d.profile, `API (${driver})`);
  },
  figure: (r) => Object.entries(r.drivers).map(([driver, d]) => `${driver} ${f2(d.ratio)} x plain copy (${f0(d.apiMBps)} vs ${f0(d.copyMBps)} MB/s; target >= ${TARGET_RATIO}), `
    + `RSS +${f0(d.peakRssGrowthMB)} MB (target <= ${TARGET_RSS_MB}), JPEG ready p50 ${f0(d.jpeg.uploadToReady.p50)} ms (${f1(d.jpeg.ratio)} x plain)`).join('; '),
});
