#!/usr/bin/env node
/**
 * Caption cache benchmark (issue 15): the latency of a cache hit of POST /api/v1/captions (the same
 * asset and recognition settings as a done transcription, new cue settings: the cached words re-cut,
 * no provider call) against a keyed GET (GET /api/v1/keys/current) in the same run. Target: a hit's
 * p50 <= 20 ms. One request at a time over a keep-alive connection, each timed by performance.now().
 * See docs/benchmarks.md.
 *
 *   node bench/captions-cache.mjs [--duration 10] [--warmup 2] [--rounds 3] [--json]
 *
 * Self-contained: ~20 s of espeak-ng speech, its own redis-server (unless REDIS_URL is set), a temp
 * DATA_DIR (SQLite), the API and one worker from dist/, speech-alpha connected to the offline engine;
 * the speech uploaded as an asset and transcribed once (the miss), then the hits measured.
 */
import { readFile } from 'node:fs/promises';
import { synthesizeSpeech } from '#testing/captions-speech';
import { busyBeforeLoad, cli, combineRuns, cpuTimes, floored, log, machine, number, quantile, runBench, sleep, startStack, stealPct, tempDir } from './lib/harness.mjs';

const TARGET_P50_MS = 20;

const PHRASES = [
  'The quick brown fox jumps over the lazy dog.', 'Please call me tomorrow morning.', 'We will meet at the station at seven.',
  'The weather will be sunny and warm this afternoon.', 'I would like a cup of coffee with milk.', 'The children are playing in the garden.',
];

async function api(base, key, method, path, body) {
  const res = await fetch(`${base}/api${path}`, {
    method, headers: { 'x-api-key': key, ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}) },
    body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return { status: res.status, data: json.data };
}

/** Polls `path` until `data.status` is one of `done` (returned) or a failure (thrown). */
async function until(base, key, path, done, timeoutMs = 180_000) {
  const started = Date.now();
  for (;;) {
    const { data } = await api(base, key, 'GET', path);
    if (data.status === done) return data;
    if (data.status === 'failed') throw new Error(`${path} failed: ${JSON.stringify(data.error)}`);
    if (Date.now() - started > timeoutMs) throw new Error(`${path} still ${data.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Requests one after another for `seconds` (keep-alive): each one's latency at microsecond resolution. */
async function latencies(target, seconds) {
  const out = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    const res = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
    await res.arrayBuffer();
    out.push(performance.now() - started);
    if (res.status >= 300) throw new Error(`${target.name}: answered ${res.status}`);
  }
  return out;
}

async function measure(target, opts) {
  if (opts.warmup > 0) await latencies(target, opts.warmup);
  const before = cpuTimes();
  const ms = await latencies(target, opts.duration);
  const round = (v) => Math.round(v * 100) / 100;
  const s = { reqPerSec: ms.length / opts.duration, p50: round(quantile(ms, 0.5)), p99: round(quantile(ms, 0.99)), total: ms.length, stealPct: stealPct(before, cpuTimes()) };
  log(`${target.name.padEnd(10)} ${s.reqPerSec.toFixed(1).padStart(8)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms${s.stealPct === null ? '' : `  (cpu steal ${s.stealPct} %)`}`);
  return s;
}

async function bench(opts) {
  const speech = await synthesizeSpeech(PHRASES, { dir: tempDir('captions-cache-speech'), gapSec: 0.75 });
  log(`speech: ${speech.durationSec.toFixed(1)} s (espeak-ng, 16 kHz WAV)`);
  const { base, env, workspace } = await startStack({ name: 'captions-cache', redisPrefix: 'bench', workers: 1 });
  const key = workspace.liveKey;
  await cli(env, 'integration:connect', '--workspace', workspace.workspaceId, '--provider', 'speech-alpha', '--engine', 'local');

  // The recording into the media library, processed by the worker.
  const form = new FormData();
  form.append('file', new Blob([await readFile(speech.path)]), 'speech.wav');
  const asset = (await api(base, key, 'POST', '/v1/assets', form)).data;
  await until(base, key, `/v1/assets/${asset.id}`, 'ready');

  // The miss: the offline engine transcribes it once.
  const missStarted = performance.now();
  const first = await api(base, key, 'POST', '/v1/captions', { assetId: asset.id });
  if (first.status !== 202) throw new Error(`the first transcription answered ${first.status}, expected 202 (queued)`);
  const done = await until(base, key, `/v1/transcriptions/${first.data.id}`, 'done');
  const missMs = performance.now() - missStarted;
  log(`miss: queued → done in ${(missMs / 1000).toFixed(2)} s, ${done.cues.length} cues`);

  // A hit answers 200 done at once; new cue settings re-cut the cached words.
  const hitBody = { assetId: asset.id, wordsPerCue: 2 };
  const hit = await api(base, key, 'POST', '/v1/captions', hitBody);
  if (hit.status !== 200 || hit.data.status !== 'done' || hit.data.cues.length <= done.cues.length) {
    throw new Error(`a repeat was not a re-cut cache hit: ${hit.status} ${hit.data.status}, ${hit.data.cues?.length} cues (first: ${done.cues.length})`);
  }
  log(`hit: 200 done, ${hit.data.cues.length} cues at wordsPerCue 2`);

  const targets = [
    { name: 'keyed GET', method: 'GET', url: `${base}/api/v1/keys/current`, headers: { 'x-api-key': key } },
    { name: 'cache hit', method: 'POST', url: `${base}/api/v1/captions`, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(hitBody) },
  ];
  const busyBefore = await busyBeforeLoad();
  const runs = { get: [], hit: [] };
  for (let round = 1; round <= opts.rounds; round++) {
    if (opts.rounds > 1) log(`round ${round}/${opts.rounds}`);
    runs.get.push(await measure(targets[0], opts));
    runs.hit.push(await measure(targets[1], opts));
  }
  const results = { get: combineRuns(runs.get, 1), hit: combineRuns(runs.hit, 1) };
  return {
    ...machine(), database: 'sqlite', speechSec: speech.durationSec, missMs: Math.round(missMs), durationSec: opts.duration,
    rounds: opts.rounds, busyBeforePct: busyBefore, results, ratio: results.hit.p50 / results.get.p50,
    target: TARGET_P50_MS, meetsTarget: results.hit.p50 <= TARGET_P50_MS,
  };
}

function summary(r) {
  console.log(`\n${r.cpus} CPUs, Node ${r.node}, one request at a time, ${r.durationSec} s runs${r.rounds > 1 ? `, median of ${r.rounds} rounds` : ''}`);
  console.log(`miss (${r.speechSec.toFixed(1)} s of speech, offline engine): ${(r.missMs / 1000).toFixed(2)} s`);
  for (const [name, label] of [['get', 'keyed GET (baseline)'], ['hit', 'cache hit (re-cut)']]) {
    const s = r.results[name];
    console.log(`${label.padEnd(22)} ${s.reqPerSec.toFixed(1).padStart(8)} req/s  p50 ${s.p50} ms  p99 ${s.p99} ms`);
  }
  console.log('');
}

function figure(r) {
  return `cache hit p50 ${r.results.hit.p50} ms (target <= ${TARGET_P50_MS} ms) = ${r.ratio.toFixed(2)} x a keyed GET's p50 ${r.results.get.p50} ms`;
}

await runBench({
  name: 'captions-cache',
  flags: {
    duration: { arg: 'S', default: 10, parse: number(1), help: 'seconds per measured run (default 10)' },
    warmup: { arg: 'S', default: 2, parse: number(0), help: 'seconds of warm-up before each measured run (default 2; 0 skips)' },
    rounds: { arg: 'N', default: 3, parse: floored(1), help: 'alternate the keyed GET and the hit N times, medians reported (default 3)' },
  },
  footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
  run: bench,
  summary,
  figure,
  jsonIndent: 2,
});
