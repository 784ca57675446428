#!/usr/bin/env node
// End-to-end still latency (issue 5): POST /v1/render?format=binary for a published template with 4
// fields, through the API, Redis, a worker and storage, against the still engine alone (same edit,
// same process-local caches warmed) measured in the same run. Runs dist/ (npm run -s build first).
//   node bench/still-http.mjs [--requests 60] [--seconds 10] [--concurrency 4] [--api-cpus 0 --worker-cpus 1] [--profile DIR] [--json]
// The sequential stills and the engine alone alternate, request by request (issue 33).
// --api-cpus / --worker-cpus pin the API and the worker (taskset CPU lists; the engine alone then runs
// on the worker's cores too), to tell the hop's cost from the two processes sharing the cores.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../dist/libs/core/src/index.js';
import { applyMerge, assertEdit } from '../dist/libs/edit-spec/src/index.js';
import { FontCatalog, StillEngine, storageAwareFetcher } from '../dist/libs/still/src/index.js';
import { createStorage } from '../dist/libs/storage/src/index.js';
import { cli, cpuProfileArgs, freePort, integer, log, positive, printProfile, profileSummary, quantile, runBench, sleep, startChild, startStack, stopChild, tempDir, waitFor } from './lib/harness.mjs';
import { startFloor } from './lib/still-floor.mjs';

const TEMPLATE = {
  name: 'Bench card',
  categoryId: 'social-media',
  fields: [
    { key: 'HEADLINE', label: 'Headline', type: 'text', required: true, defaultValue: 'Headline', config: { maxLength: 80 } },
    { key: 'BODY', label: 'Body', type: 'text', defaultValue: 'Body', config: { maxLength: 200 } },
    { key: 'ACCENT', label: 'Accent', type: 'color', defaultValue: '#e63946' },
    { key: 'PHOTO', label: 'Photo', type: 'image', required: true, defaultValue: null },
  ],
  edit: {
    timeline: {
      background: '#0b132b',
      tracks: [
        { clips: [{ asset: { type: 'rich-text', text: '{{HEADLINE}}', font: { family: 'Inter', size: 72, weight: 800, color: '#ffffff' }, align: { horizontal: 'left', vertical: 'top' } }, start: 0, length: 5, width: 920, height: 240, position: 'topLeft', offset: { x: 0.07, y: -0.07 } }] },
        { clips: [{ asset: { type: 'text', text: '{{BODY}}', width: 920, height: 160, font: { family: 'Open Sans', size: 36, color: '#111111' }, alignment: { horizontal: 'left', vertical: 'center' }, background: { color: '#ffffff', opacity: 0.9, padding: 24, borderRadius: 20 } }, start: 0, length: 5, position: 'bottom', offset: { y: 0.07 } }] },
        { clips: [{ asset: { type: 'shape', shape: 'rectangle', rectangle: { width: 200, height: 56, cornerRadius: 28 }, fill: { color: '{{ACCENT}}' } }, start: 0, length: 5, width: 200, height: 56, position: 'right', offset: { x: -0.07 } }] },
        { clips: [{ asset: { type: 'image', src: '{{PHOTO}}' }, start: 0, length: 5, fit: 'crop' }] },
      ],
    },
    output: { format: 'png', size: { width: 1080, height: 1080 } },
  },
};

/** The file URL of a stock asset once the worker has processed it. */
async function stockUrl(stack, id) {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const res = await fetch(`${stack.base}/api/v1/assets/${id}`, { headers: { 'x-api-key': stack.workspace.liveKey } });
    const asset = res.ok ? (await res.json()).data : null;
    if (asset?.status === 'ready') return asset.url;
    if (asset?.status === 'failed') throw new Error(`stock asset ${id} failed: ${asset.error?.message}`);
    await sleep(250);
  }
  throw new Error(`stock asset ${id} was not ready within 180 s`);
}

/**
 * Waits until the worker has processed the whole stock library (seeded at the API's start: pictures,
 * but also audio and video it probes and draws waveforms of with ffmpeg): until then it competes with
 * the stills measured for the same cores.
 */
async function stockSettled(stack) {
  const until = Date.now() + 300_000;
  while (Date.now() < until) {
    const res = await fetch(`${stack.base}/api/v1/assets?scope=global&status=processing&limit=1`, { headers: { 'x-api-key': stack.workspace.liveKey } });
    if (res.ok && (await res.json()).data.length === 0) return;
    await sleep(500);
  }
  throw new Error('the stock library was still being processed after 300 s');
}

async function run(args) {
  // --profile: the API and the worker write a .cpuprofile each (their whole life) to DIR/api and DIR/worker.
  const profiled = args.profile ? { api: join(args.profile, 'api'), worker: join(args.profile, 'worker'), since: Date.now() } : null;
  if (profiled) for (const dir of [profiled.api, profiled.worker]) mkdirSync(dir, { recursive: true });
  const stack = await startStack({
    name: 'still-http', workers: 1, apiCpus: args['api-cpus'], workerCpus: args['worker-cpus'] ? [args['worker-cpus']] : undefined,
    ...(profiled ? { apiNodeArgs: cpuProfileArgs(profiled.api), workerNodeArgs: cpuProfileArgs(profiled.worker) } : {}),
  });
  const key = stack.workspace.liveKey;
  const post = (path, body) => fetch(`${stack.base}/api${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  // A stock picture (seeded at the API's start, processed by the worker), by its stored file's URL.
  const photo = await stockUrl(stack, 'ast_lib_photo_mountains');
  await stockSettled(stack);
  const imported = await (await post('/v1/templates/import', TEMPLATE)).json();
  if (!imported.data?.id) throw new Error(`import failed: ${JSON.stringify(imported)}`);
  const templateId = imported.data.id;
  await cli(stack.env, 'template:publish', '--id', templateId);
  log(`template ${templateId} published`);
  const values = (i) => ({ HEADLINE: `Summer sale ${i}`, BODY: `Only this weekend: ${i} % off everything, online and in shops.`, ACCENT: '#e63946', PHOTO: photo });

  const phases = {};
  let lastPng;
  const render = async (i, keep = false) => {
    const t = performance.now();
    const res = await post('/v1/render?format=binary', { templateId, values: values(i) });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || res.headers.get('content-type') !== 'image/png' || bytes.length < 1000) throw new Error(`render ${i}: HTTP ${res.status} ${bytes.toString().slice(0, 300)}`);
    lastPng = bytes;
    if (keep) {
      for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
        const [name, dur] = part.trim().split(';dur=');
        if (name && dur) (phases[name] ??= []).push(Number(dur));
      }
    }
    return performance.now() - t;
  };
  // Warm-up: worker start (fonts, libvips), the photo layer, the API's first still.
  for (let i = 0; i < 40; i++) {
    try {
      await render(-i);
      if (i >= 5) break;
    } catch (err) {
      if (i === 39) throw err;
      await sleep(250);
    }
  }

  // The engine alone, in this process (on the worker's cores when it is pinned), on the same stored
  // photo and the same edits: one still over HTTP, then the same edit by the engine, alternately, so
  // both meet the same load of a shared machine.
  if (args['worker-cpus']) execFileSync('taskset', ['-a', '-p', '-c', args['worker-cpus'], String(process.pid)], { stdio: 'ignore' });
  const config = loadConfig(stack.env);
  const storage = createStorage(config);
  const engine = new StillEngine({ fonts: await FontCatalog.system(), fetch: storageAwareFetcher(config, storage) });
  const editOf = (i) => assertEdit(applyMerge(TEMPLATE.edit, values(i)).value);
  for (let i = 0; i < 5; i++) await engine.render(editOf(-i));
  // The floor (bench/lib/still-floor.mjs): the same PNG's bytes to the client, its durable write and an
  // empty queue hop, each bare, after each request too.
  const floorPort = await freePort();
  // Not pinned with --api-cpus / --worker-cpus: it stands for both processes.
  const floorPrefix = `still-floor-${process.pid}`;
  const floorChild = startChild('floor', process.execPath, ['bench/lib/still-floor.mjs', String(floorPort), stack.env.REDIS_URL, floorPrefix], stack.env);
  await waitFor('floor', floorChild, async () => (await fetch(`http://127.0.0.1:${floorPort}/`)).ok);
  const floor = await startFloor({ port: floorPort, redisUrl: stack.env.REDIS_URL, prefix: floorPrefix, dir: tempDir('still-floor') });
  for (let i = 0; i < 5; i++) await floor.measure(lastPng);
  const latency = [];
  const engineMs = [];
  const floorMs = { bytes: [], write: [], hop: [] };
  for (let i = 0; i < args.requests; i++) {
    latency.push(await render(i, true));
    const edit = editOf(i);
    const t = performance.now();
    await engine.render(edit);
    engineMs.push(performance.now() - t);
    const parts = await floor.measure(lastPng);
    for (const k of Object.keys(floorMs)) floorMs[k].push(parts[k]);
  }
  await floor.close();
  await stopChild(floorChild);

  let done = 0;
  const until = performance.now() + args.seconds * 1000;
  await Promise.all(Array.from({ length: args.concurrency }, async (_, lane) => {
    for (let i = 0; performance.now() < until; i++) {
      await render(100_000 + lane * 10_000 + i);
      done++;
    }
  }));

  let profile;
  if (profiled) {
    // SIGUSR2: a normal exit, so --cpu-prof writes its file (bench/lib/profile.mjs).
    await Promise.all([stack.api, ...stack.workers].map((child) => stopChild(child, { timeoutMs: 15_000, signal: 'SIGUSR2' })));
    profile = { api: profileSummary(profiled.api, profiled.since), worker: profileSummary(profiled.worker, profiled.since) };
  }

  return {
    ...(profile ? { profile } : {}),
    http: { p50: quantile(latency, 0.5), p95: quantile(latency, 0.95), perSecond: done / args.seconds, concurrency: args.concurrency },
    engine: { p50: quantile(engineMs, 0.5), p95: quantile(engineMs, 0.95) },
    ratio: quantile(latency, 0.5) / quantile(engineMs, 0.5),
    // The engine alone plus what any worker-draws design pays besides (medians), and HTTP against it.
    floor: floorOf(engineMs, floorMs, latency, lastPng.length),
    serverTiming: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, quantile(v, 0.5)])),
    target: { httpP50Ms: 60 },
    pinned: args['api-cpus'] || args['worker-cpus'] ? { api: args['api-cpus'] ?? null, worker: args['worker-cpus'] ?? null } : null,
  };
}

const f = (n) => n.toFixed(1);

function floorOf(engineMs, parts, latency, pngBytes) {
  const m = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, quantile(v, 0.5)]));
  const total = quantile(engineMs, 0.5) + m.bytes + m.write + m.hop;
  return { ...m, pngBytes, total, engineRatio: total / quantile(engineMs, 0.5), httpRatio: quantile(latency, 0.5) / total };
}

await runBench({
  name: 'still-http',
  flags: {
    requests: { arg: 'N', default: 60, parse: integer(1), help: 'sequential renders timed, over HTTP and by the engine alone (default 60)' },
    seconds: { arg: 'S', default: 10, parse: positive, help: 'seconds of the throughput run (default 10)' },
    concurrency: { arg: 'C', default: 4, parse: integer(1), help: 'clients in the throughput run (default 4)' },
    'api-cpus': { arg: 'LIST', default: undefined, parse: String, help: 'pin the API to these cores (taskset list, e.g. 0)' },
    'worker-cpus': { arg: 'LIST', default: undefined, parse: String, help: 'pin the worker, and the engine alone, to these cores (e.g. 1)' },
    profile: { arg: 'DIR', default: null, parse: (v) => resolve(v), help: 'run the API and the worker with --cpu-prof (files under DIR/api and DIR/worker); prints the top costs' },
  },
  footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
  run,
  summary: (result) => {
    console.log(`http    p50 ${f(result.http.p50)} ms  p95 ${f(result.http.p95)} ms  ${f(result.http.perSecond)} renders/s at concurrency ${result.http.concurrency}`);
    if (result.pinned) console.log(`pinned  api on cores ${result.pinned.api ?? 'any'}, worker and the engine alone on ${result.pinned.worker ?? 'any'}`);
    console.log(`engine  p50 ${f(result.engine.p50)} ms  p95 ${f(result.engine.p95)} ms`);
    const fl = result.floor;
    console.log(`floor   engine ${f(result.engine.p50)} + bytes to the client ${f(fl.bytes)} (${(fl.pngBytes / 1e6).toFixed(2)} MB) + durable write ${f(fl.write)} + queue hop ${f(fl.hop)} = ${f(fl.total)} ms: ${fl.engineRatio.toFixed(2)} x the engine alone; HTTP p50 is ${fl.httpRatio.toFixed(2)} x the floor`);
    console.log(`server-timing medians: ${Object.entries(result.serverTiming).map(([k, v]) => `${k} ${f(v)}`).join(', ')} ms`);
    if (result.profile) {
      printProfile(result.profile.api, 'API (whole life)');
      printProfile(result.profile.worker, 'worker (whole life)');
    }
  },
  figure: (result) => `p50 ${f(result.http.p50)} ms (target <= 60), ${result.ratio.toFixed(2)} x the engine alone (target <= 1.5; the floor alone is ${result.floor.engineRatio.toFixed(2)} x), ${result.floor.httpRatio.toFixed(2)} x the floor`,
});
