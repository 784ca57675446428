#!/usr/bin/env node
// Accepting a video (issue 28): POST /v1/render for a 1 s mp4 through the API to its 202 `queued`
// answer (plan checks, the claim: insert, queue depth under the workspace's lock, credit hold,
// render.queued; the job added). No worker takes the job: a video engine heartbeat is set in Redis
// so the API accepts videos, and each render is cancelled once accepted (untimed in the sequential
// run) so the queue stays short. Runs dist/ (npm run -s build first).
//   node bench/video-accept.mjs [--requests 300] [--seconds 10] [--concurrency 4] [--database-url postgres://…] [--json]
import { Redis } from 'ioredis';
import { integer, log, positive, quantile, runBench, startStack } from './lib/harness.mjs';

const EDIT = {
  timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi', font: { family: 'Open Sans', size: 30, color: '#ffffff' } }, start: 0, length: 1 }] }] },
  output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 },
};

async function run(args) {
  const stack = await startStack({ name: 'video-accept', databaseUrl: args['database-url'] });
  const redis = new Redis(stack.env.REDIS_URL);
  await redis.set(`${stack.env.REDIS_PREFIX}:video:engine`, 'bench');
  redis.disconnect();
  const headers = { 'x-api-key': stack.workspace.liveKey, 'content-type': 'application/json' };
  const accept = async () => {
    const t = performance.now();
    const res = await fetch(`${stack.base}/api/v1/render`, { method: 'POST', headers, body: JSON.stringify({ edit: EDIT }) });
    const body = await res.json();
    if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return { ms: performance.now() - t, id: body.data.id };
  };
  const cancel = async (id) => {
    const res = await fetch(`${stack.base}/api/v1/render/${id}/cancel`, { method: 'POST', headers });
    if (res.status !== 200) throw new Error(`cancel ${id}: HTTP ${res.status}`);
  };
  for (let i = 0; i < 20; i++) await cancel((await accept()).id);
  log('warmed up');

  const latency = [];
  for (let i = 0; i < args.requests; i++) {
    const { ms, id } = await accept();
    latency.push(ms);
    await cancel(id);
  }

  let accepted = 0;
  const until = performance.now() + args.seconds * 1000;
  await Promise.all(Array.from({ length: args.concurrency }, async () => {
    while (performance.now() < until) {
      await cancel((await accept()).id);
      accepted++;
    }
  }));
  return {
    database: args['database-url'] ? 'postgresql' : 'sqlite',
    http: { p50: quantile(latency, 0.5), p95: quantile(latency, 0.95), acceptedPerSecond: accepted / args.seconds, concurrency: args.concurrency },
  };
}

const f = (n) => n.toFixed(2);

await runBench({
  name: 'video-accept',
  flags: {
    requests: { arg: 'N', default: 300, parse: integer(1), help: 'sequential videos accepted and timed (default 300)' },
    seconds: { arg: 'S', default: 10, parse: positive, help: 'seconds of the throughput run (default 10)' },
    concurrency: { arg: 'C', default: 4, parse: integer(1), help: 'clients in the throughput run, each accepting then cancelling (default 4)' },
    'database-url': { arg: 'URL', default: undefined, parse: (v) => v, help: 'a PostgreSQL database to use instead of a temp SQLite file' },
  },
  footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
  run,
  summary: (r) => console.log(`${r.database}: accept p50 ${f(r.http.p50)} ms  p95 ${f(r.http.p95)} ms  ${f(r.http.acceptedPerSecond)} accepted/s at concurrency ${r.http.concurrency} (each also cancelled)`),
  figure: (r) => `${r.database} p50 ${f(r.http.p50)} ms, ${f(r.http.acceptedPerSecond)} accepted/s at concurrency ${r.http.concurrency}`,
});
