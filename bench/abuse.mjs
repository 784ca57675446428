#!/usr/bin/env node
/**
 * Hostile input (issue 27): the payloads of test/hostile-*.e2e-spec.ts sent to a running stack, one
 * case at a time. For each: refused (the 4xx and its code), rendered, or failed (the record's code),
 * the time to the answer (a video: to its settled record), the bytes the loopback "trap" listener
 * received from a browser (must be none), and the peak RSS of the API and of the worker (its process
 * and what it started: Chromium, ffmpeg) while the case ran. The last line:
 *
 *   abuse: N cases, N refused, N rendered, N failed; 0 trap hits; 0 worker restarts; worker peak X MB (≤ 1500); API growth Y MB (≤ 100)
 *
 *   node bench/abuse.mjs [--cases a,b] [--json]                    its own stack (Redis, SQLite, API, 1 worker)
 *   node bench/abuse.mjs --base URL --key KEY [--api-pid N] [--worker-pid N]   a running stack (`npm run up`)
 *
 * Runs dist/ (npm run -s build first). Every listener it starts is on 127.0.0.1 and the stack runs in
 * development, where the outbound rules let loopback media through: the fonts and files come from
 * the bench's own media server, which counts what it serves.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
// The hostile fonts of the tests (test/fakes/media.ts; Node strips its types).
import { hostileWoff, withFamilyName } from '#testing/media';
import { log, runBench, sleep, startStack } from './lib/harness.mjs';

const MB = 1024 * 1024;
const TRAP_PATH = /^\/trap\//;

// ---------------------------------------------------------------------------------------------------
// Loopback servers: the media server (fonts, pictures; counts bytes) and the trap (anything a browser
// asks of it is a breach: the outbound rules never saw it).

function listen(handler) {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function startServers() {
  const files = new Map();
  const stats = { requests: 0, bytes: 0, trap: [] };
  const server = await listen((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (TRAP_PATH.test(path)) {
      // Our own downloader (SSRF-checked, its user agent media-render/…) may fetch what an edit names:
      // the outbound rules saw that. Anything else (the browser) is a breach.
      if (!/^media-render\//.test(req.headers['user-agent'] ?? '')) stats.trap.push(`${req.method} ${path} (${req.headers['user-agent'] ?? 'no user agent'})`);
      res.writeHead(200, { 'content-type': 'text/css', 'access-control-allow-origin': '*' }).end('body{background:#ff00ff !important}');
      return;
    }
    const file = files.get(path);
    stats.requests++;
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    // Ranges answered (the API's probes read parts of a file): what is counted is what is sent.
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && Number(range[1]) < file.body.length) {
      const start = Number(range[1]);
      const end = Math.min(range[2] ? Number(range[2]) : file.body.length - 1, file.body.length - 1);
      const part = file.body.subarray(start, end + 1);
      stats.bytes += part.length;
      res.writeHead(206, { 'content-type': file.type, 'content-length': part.length, 'content-range': `bytes ${start}-${end}/${file.body.length}` }).end(part);
      return;
    }
    stats.bytes += file.body.length;
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, 'accept-ranges': 'bytes' }).end(file.body);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    stats,
    trap: (name) => `${origin}/trap/${name}`,
    serve: (path, type, body) => {
      files.set(path, { type, body });
      return `${origin}${path}`;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

// ---------------------------------------------------------------------------------------------------
// Hostile files, made here.

/** A PNG signature and header chunk, then garbage: it can never be decoded. */
function brokenPng() {
  const png = Buffer.alloc(4096, 0x5a);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(png);
  png.writeUInt32BE(800, 16);
  png.writeUInt32BE(600, 20);
  return png;
}

// ---------------------------------------------------------------------------------------------------
// The cases. Each returns the request it sends: { path, body } (JSON) or { upload } (a media-library file).

const FONT_FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
/** `n` text clips of 4000×4000, the first `blurred` of them blurred, each on its own track. */
const BLURRED = (n, blurred = n, size = 4000) => ({
  timeline: {
    background: '#ffffff',
    tracks: Array.from({ length: n }, (_, i) => ({
      clips: [{ asset: { type: 'text', text: `Layer ${i}`, width: 4000, height: 4000, font: { family: 'Open Sans', size: 200, color: '#112233' } }, start: 0, length: 1, opacity: 0.6, ...(i < blurred ? { filter: 'blur' } : {}) }],
    })),
  },
  output: { format: 'png', size: { width: size, height: size } },
});

function cases(servers) {
  const injected = (name) => `X\f}body{background:url(${servers.trap(`font-${name}`)}) !important}@import "${servers.trap(`font-import-${name}`)}";.x{font-family:"`;
  // Only forms our downloader does not fetch beforehand (it takes url(http…) and src attributes):
  // these reach the browser as they are, and only the page's rules stand between them and the trap.
  const hostileCss = [
    `@import "${servers.trap('import')}";`,
    `div{background-image:image-set("${servers.trap('image-set')}" 1x)}`,
    `p{background:u\\72l(${servers.trap('escaped-url')})}`,
    `@font-face{font-family:Evil;src:local("x"),u\\72l(${servers.trap('font-src')})}`,
  ].join('\n');
  const html = (format) => ({
    timeline: {
      background: '#ffffff',
      tracks: [{ clips: [{ asset: { type: 'html', html: `<p style="font-family:Evil">Hello</p><div>World</div><img srcset="${servers.trap('srcset')} 1x">`, css: hostileCss, width: 600, height: 300 }, start: 0, length: 1 }] }],
    },
    output: { format, size: { width: 600, height: 300 } },
  });
  const fontUrl = (name, family) => servers.serve(`/fonts/${name}.ttf`, 'font/ttf', withFamilyName(readFileSync(FONT_FILE), family));
  const familyCase = (format) => {
    const family = injected(format);
    const src = fontUrl(`ff-${format}`, family);
    return {
      path: '/v1/render',
      body: {
        edit: {
          timeline: {
            background: '#ffffff',
            fonts: [{ src }],
            tracks: [{ clips: [{ asset: { type: 'text', text: 'Hello', font: { family, size: 48, color: '#000000' } }, start: 0, length: 1 }] }],
          },
          output: format === 'mp4' ? { format, size: { width: 320, height: 180 }, fps: 12 } : { format, size: { width: 320, height: 180 } },
        },
      },
    };
  };
  const autoClips = (n) => {
    const body = Buffer.alloc(8 * MB, 0x41);
    return Array.from({ length: n }, (_, i) => ({ asset: { type: 'video', src: servers.serve(`/media/clip-${i}.mp4`, 'video/mp4', body) }, start: i, length: 'auto' }));
  };
  return {
    'font-family-mp4': () => familyCase('mp4'),
    'font-family-png': () => familyCase('png'),
    'css-html-png': () => ({ path: '/v1/render', body: { edit: html('png') } }),
    'css-html-pdf': () => ({ path: '/v1/render', body: { edit: html('pdf') } }),
    'css-html-mp4': () => ({ path: '/v1/render', body: { edit: { ...html('mp4'), output: { format: 'mp4', size: { width: 600, height: 300 }, fps: 12 } } } }),
    'blurred-60': () => ({ path: '/v1/render', body: { edit: BLURRED(60) } }),
    'blurred-3000': () => ({ path: '/v1/render', body: { edit: BLURRED(3000) } }),
    // Just under the budget (test/hostile-budget's: 192 of 200 MP of layers, 4 blurred): it renders, in bounded memory.
    'under-budget': () => ({ path: '/v1/render', body: { edit: BLURRED(12, 4, 1080) } }),
    'woff-bomb-upload': () => ({ upload: { name: 'bomb.woff', type: 'font/woff', body: hostileWoff.bomb(readFileSync(FONT_FILE)) } }),
    'woff-bomb-font-url': () => {
      const src = servers.serve('/fonts/bomb.woff', 'font/woff', hostileWoff.bomb(readFileSync(FONT_FILE)));
      return { path: '/v1/render', body: { edit: { timeline: { fonts: [{ src }], tracks: [{ clips: [{ asset: { type: 'text', text: 'Bomb' }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 320, height: 180 } } } } };
    },
    'estimate-200-auto': () => ({ path: '/v1/render/estimate', body: { edit: { timeline: { tracks: [{ clips: autoClips(200) }] }, output: { format: 'mp4', size: { width: 320, height: 180 } } } } }),
    // Under the count cap: each 8 MB file is read only as far as the probe's byte cap lets it.
    'estimate-15-auto': () => ({ path: '/v1/render/estimate', body: { edit: { timeline: { tracks: [{ clips: autoClips(15) }] }, output: { format: 'mp4', size: { width: 320, height: 180 } } } } }),
    'broken-image': () => {
      const src = servers.serve('/media/broken.png', 'image/png', brokenPng());
      return { path: '/v1/render', body: { edit: { timeline: { tracks: [{ clips: [{ asset: { type: 'image', src }, start: 0, length: 1 }] }] }, output: { format: 'png', size: { width: 320, height: 180 } } } } };
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Memory: a process's RSS with its descendants', sampled from /proc.

function children(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function treeRss(pid) {
  let total = rssOf(pid);
  for (const child of children(pid)) total += treeRss(child);
  return total;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Samples the API's RSS and the worker's tree RSS every 50 ms until stopped; returns the peaks. */
function sampler(apiPid, workerPid) {
  const peak = { api: apiPid ? rssOf(apiPid) : 0, worker: workerPid ? treeRss(workerPid) : 0 };
  const timer = setInterval(() => {
    if (apiPid) peak.api = Math.max(peak.api, rssOf(apiPid));
    if (workerPid) peak.worker = Math.max(peak.worker, treeRss(workerPid));
  }, 50);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

// ---------------------------------------------------------------------------------------------------

async function send(base, key, request) {
  const headers = { 'x-api-key': key };
  if (request.upload) {
    const form = new FormData();
    form.append('file', new Blob([request.upload.body], { type: request.upload.type }), request.upload.name);
    return fetch(`${base}/api/v1/assets`, { method: 'POST', headers, body: form });
  }
  return fetch(`${base}/api${request.path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(request.body) });
}

/** Follows a queued video or an uploaded asset to its end (3 minutes at most). */
async function settle(base, key, kind, id) {
  const path = kind === 'asset' ? `/v1/assets/${id}` : `/v1/render/${id}`;
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const res = await fetch(`${base}/api${path}`, { headers: { 'x-api-key': key } });
    const record = res.ok ? (await res.json()).data : undefined;
    if (record && ['done', 'ready', 'failed', 'cancelled'].includes(record.status)) return record;
    await sleep(200);
  }
  return { status: 'timeout' };
}

async function runCase(base, key, name, make) {
  const request = make();
  const started = performance.now();
  const res = await send(base, key, request);
  const body = await res.json().catch(() => ({}));
  let outcome;
  if (res.status >= 400) {
    outcome = { result: res.status >= 500 ? 'error' : 'refused', status: res.status, code: body.code ?? body.error?.code, message: body.message ?? body.error?.message, errors: body.errors };
  } else {
    let record = body.data ?? {};
    if (request.upload) record = await settle(base, key, 'asset', record.id);
    else if (['queued', 'fetching', 'rendering', 'saving'].includes(record.status)) record = await settle(base, key, 'render', record.id);
    const result = record.status === 'failed' ? 'failed' : record.status === 'timeout' ? 'error' : request.path?.endsWith('/estimate') ? 'estimated' : 'rendered';
    outcome = { result, status: res.status, code: record.error?.code, message: record.error?.message ?? record.error, errors: record.error?.errors };
  }
  return { name, ...outcome, ms: Math.round(performance.now() - started) };
}

async function run(opts) {
  const servers = await startServers();
  let stack;
  let base = opts.base;
  let key = opts.key;
  let apiPid = opts['api-pid'];
  let workerPid = opts['worker-pid'];
  if (!base) {
    stack = await startStack({ name: 'abuse', workers: 1 });
    ({ base } = stack);
    key = stack.workspace.liveKey;
    apiPid = stack.api.pid;
    workerPid = stack.workers[0].pid;
    // The worker is ready when it answers a still and its video engine (the browser) takes a video.
    const warm = (format) => ({ path: '/v1/render', body: { edit: { timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'warm' }, start: 0, length: 1 }] }] }, output: { format, size: { width: 64, height: 64 } } } } });
    const until = Date.now() + 180_000;
    for (const [format, ok] of [['png', 200], ['mp4', 202]]) {
      for (;;) {
        const res = await send(base, key, warm(format));
        const body = await res.json().catch(() => ({}));
        if (res.status === ok) {
          if (format === 'mp4') await settle(base, key, 'render', body.data.id);
          break;
        }
        if (Date.now() > until) throw new Error(`the worker did not take a ${format} within 180 s (${res.status} ${body.code ?? ''})`);
        await sleep(500);
      }
    }
    log('worker ready (a still and a video rendered)');
  }
  const all = cases(servers);
  const names = opts.cases ? opts.cases.split(',') : Object.keys(all);
  for (const n of names) if (!all[n]) throw new Error(`unknown case ${n}; cases: ${Object.keys(all).join(', ')}`);
  const apiStart = apiPid ? rssOf(apiPid) : 0;
  const rows = [];
  for (const name of names) {
    const trapBefore = servers.stats.trap.length;
    const servedBefore = servers.stats.bytes;
    const stop = sampler(apiPid, workerPid);
    const row = await runCase(base, key, name, all[name]);
    const peak = stop();
    row.trapHits = servers.stats.trap.slice(trapBefore);
    row.servedMb = Number(((servers.stats.bytes - servedBefore) / MB).toFixed(1));
    row.apiPeakMb = Math.round(peak.api / MB);
    row.workerPeakMb = Math.round(peak.worker / MB);
    row.workerAlive = workerPid ? alive(workerPid) : undefined;
    rows.push(row);
    log(`${name}: ${row.result}${row.code ? ` ${row.code}` : ''} in ${row.ms} ms; API ${row.apiPeakMb} MB, worker ${row.workerPeakMb} MB; trap ${row.trapHits.length}`);
  }
  const after = stack ? (await fetch(`${base}/api/health`)).status : 200;
  await servers.close();
  const workerPeak = Math.max(0, ...rows.map((r) => r.workerPeakMb));
  const apiPeak = Math.max(0, ...rows.map((r) => r.apiPeakMb));
  return {
    rows,
    apiStartMb: Math.round(apiStart / MB),
    apiGrowthMb: apiPid ? apiPeak - Math.round(apiStart / MB) : null,
    workerPeakMb: workerPid ? workerPeak : null,
    workerRestarts: workerPid && !alive(workerPid) ? 1 : 0,
    healthAfter: after,
    mediaServed: { requests: servers.stats.requests, mb: Number((servers.stats.bytes / MB).toFixed(1)) },
  };
}

function summary(r) {
  console.log('\ncase                 answer     code                       ms   API MB  worker MB  served MB  trap');
  for (const row of r.rows) {
    console.log(`${row.name.padEnd(20)} ${row.result.padEnd(10)} ${String(row.code ?? '').padEnd(24)} ${String(row.ms).padStart(6)} ${String(row.apiPeakMb).padStart(8)} ${String(row.workerPeakMb).padStart(10)} ${String(row.servedMb).padStart(10)}  ${row.trapHits.length}`);
    if (row.message) console.log(`${''.padEnd(21)}${String(row.message).slice(0, 150)}`);
    for (const hit of row.trapHits) console.log(`${''.padEnd(21)}TRAP: ${hit}`);
  }
  console.log(`\nmedia server: ${r.mediaServed.requests} requests, ${r.mediaServed.mb} MB served; API at start ${r.apiStartMb} MB; health afterwards ${r.healthAfter}\n`);
}

function figure(r) {
  const count = (what) => r.rows.filter((row) => row.result === what).length;
  const trap = r.rows.reduce((n, row) => n + row.trapHits.length, 0);
  const errors = count('error');
  return [
    `${r.rows.length} cases, ${count('refused')} refused, ${count('rendered') + count('estimated')} rendered, ${count('failed')} failed${errors ? `, ${errors} ERRORS (5xx or no end)` : ''}`,
    `${trap} trap hits`,
    `${r.workerRestarts} worker restarts`,
    `worker peak ${r.workerPeakMb ?? '?'} MB (≤ 1500)`,
    `API growth ${r.apiGrowthMb ?? '?'} MB (≤ 100)`,
  ].join('; ');
}

await runBench({
  name: 'abuse',
  flags: {
    cases: { arg: 'LIST', default: null, help: 'comma-separated case names (default: all)' },
    base: { arg: 'URL', default: null, help: 'a running stack (e.g. http://127.0.0.1:3000) instead of starting one' },
    key: { arg: 'KEY', default: null, help: 'its live API key (with --base)' },
    'api-pid': { arg: 'PID', default: null, parse: Number, help: 'the API process, to sample its RSS (with --base)' },
    'worker-pid': { arg: 'PID', default: null, parse: Number, help: 'the worker process, to sample its tree\'s RSS (with --base)' },
  },
  check: (o) => {
    if (o.base && !o.key) throw new Error('--base needs --key');
  },
  run,
  summary,
  figure,
  jsonIndent: 2,
});
