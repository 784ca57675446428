#!/usr/bin/env node
/**
 * Campaign benchmark (issue 17): messages/s a broadcast achieves through the API and the workers
 * (POST /api/v1/integrations/messaging-provider/campaigns, sent by `campaign.send` runners on
 * `--workers` worker processes sharing the campaign's Redis rate limiter) against the requested
 * `rateLimitPerSecond`, and against a bare loop posting the same template message straight to the
 * same loopback WhatsApp Cloud API fake, in the same run. Also the busiest one-second window the
 * provider saw (never above the rate). See docs/benchmarks.md.
 *
 *   node bench/campaign.mjs [--recipients 1000] [--rate 50] [--workers 2] [--bare 2000] [--connections 4] [--json]
 *
 * Self-contained: its own redis-server (unless REDIS_URL is set), a temp DATA_DIR (SQLite), the API
 * and workers from dist/, the WhatsAppFake of test/fakes/messaging.ts (Node strips its types) in a child process.
 */
import { fileURLToPath } from 'node:url';
import { cli, floored, log, machine, runBench, sleep, startChild, startStack, stopStack, waitFor } from './lib/harness.mjs';

/** The largest number of `times` (ms) inside any one-second window [t, t + 1000). */
function busiestSecond(times) {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i] - t[j] >= 1000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** Talks to the fake child over IPC: `ask(message)` answers its reply. */
function fakeClient(child) {
  const waiting = [];
  child.on('message', (m) => waiting.shift()?.(m));
  return { ask: (m) => new Promise((resolve) => { waiting.push(resolve); child.send(m); }) };
}

async function bench(opts) {
  // 1. The WhatsApp Cloud API fake, in its own process (neither it nor the API shares a thread with the other).
  const fakeChild = startChild('whatsapp-fake', process.execPath, [fileURLToPath(import.meta.url), '--fake-server'], process.env, { ipc: true });
  const fake = fakeClient(fakeChild);
  const wa = await fake.ask({ type: 'info' });
  log(`whatsapp fake on ${wa.baseUrl}`);

  // 2. Redis, SQLite, an enterprise workspace connected to the fake, the API and the workers.
  const stack = await startStack({ name: 'campaign', workers: opts.workers, extraEnv: { CAMPAIGN_CONCURRENCY: '2' } });
  const { base, env, workspace } = stack;
  await cli(env, 'integration:connect', '--workspace', workspace.workspaceId, '--provider', 'messaging-provider', '--channel', 'primary_chat',
    '--access-token', wa.accessToken, '--phone-number-id', wa.phoneNumberId, '--waba-id', wa.wabaId, '--base-url', wa.baseUrl);
  await waitFor('workers', stack.workers[0], async () => stack.workers.every((w) => w.output.includes('Worker consuming queues')), 60_000);
  const headers = { 'x-api-key': workspace.liveKey, 'content-type': 'application/json' };

  // 3. The bare loop: the same template message posted straight to the fake, `connections` at a time.
  const body = (to) => JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'template', template: { name: 'thanks_note', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }] } });
  let next = 0;
  const bareStart = performance.now();
  await Promise.all(Array.from({ length: opts.connections }, async () => {
    while (next < opts.bare) {
      const n = next++;
      const res = await fetch(`${wa.baseUrl}/v21.0/${wa.phoneNumberId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${wa.accessToken}`, 'content-type': 'application/json' }, body: body(String(449000000000 + n)) });
      if (res.status !== 200) throw new Error(`bare loop: the fake answered ${res.status}`);
      await res.arrayBuffer();
    }
  }));
  const bareRate = opts.bare / ((performance.now() - bareStart) / 1000);
  log(`bare loop: ${opts.bare} messages at ${bareRate.toFixed(0)}/s (${opts.connections} connections)`);

  // 4. The campaign, timed at the provider: first to last message received.
  const { count: before } = await fake.ask({ type: 'count' });
  const recipients = Array.from({ length: opts.recipients }, (_, i) => ({ to: `+${447000000000 + i}`, variables: { 1: `R${i}` } }));
  const t0 = Date.now();
  const res = await fetch(`${base}/api/v1/integrations/messaging-provider/campaigns`, { method: 'POST', headers, body: JSON.stringify({ templateName: 'thanks_note', rateLimitPerSecond: opts.rate, recipients }) });
  const created = await res.json();
  if (res.status !== 202) throw new Error(`POST campaigns answered ${res.status}: ${JSON.stringify(created).slice(0, 300)}`);
  const acceptedMs = Date.now() - t0;
  const id = created.data.id;
  let campaign;
  for (;;) {
    campaign = (await (await fetch(`${base}/api/v1/integrations/messaging-provider/campaigns/${id}`, { headers })).json()).data;
    if (campaign.status === 'completed') break;
    if (Date.now() - t0 > (opts.recipients / opts.rate) * 3000 + 60_000) throw new Error(`campaign not completed: ${JSON.stringify(campaign.progress)}`);
    await sleep(250);
  }
  const completedSec = (Date.now() - t0) / 1000;
  const { times } = await fake.ask({ type: 'times', since: before });
  if (times.length !== opts.recipients) throw new Error(`the fake received ${times.length} campaign messages, not ${opts.recipients}`);
  const span = (Math.max(...times) - Math.min(...times)) / 1000;
  // N messages span N-1 intervals: the achieved rate counts those.
  const achieved = (times.length - 1) / span;
  const busiest = busiestSecond(times);
  await stopStack(stack);
  return {
    ...machine(), database: 'sqlite', workers: opts.workers, recipients: opts.recipients, rate: opts.rate, acceptedMs, completedSec, spanSec: span,
    achieved, ofRequested: achieved / opts.rate, busiestSecond: busiest, progress: campaign.progress, bare: { messages: opts.bare, connections: opts.connections, rate: bareRate },
  };
}

function summary(r) {
  console.log(`\n${r.cpus} CPUs, Node ${r.node}, SQLite, ${r.workers} workers, ${r.recipients} recipients at rateLimitPerSecond ${r.rate}`);
  console.log(`POST campaigns answered in ${r.acceptedMs} ms (every recipient checked and stored); completed ${r.completedSec.toFixed(1)} s after it`);
  console.log(`at the provider: ${r.achieved.toFixed(1)} messages/s over ${r.spanSec.toFixed(1)} s (${(r.ofRequested * 100).toFixed(1)} % of the requested rate), busiest second ${r.busiestSecond}`);
  console.log(`bare loop to the same fake: ${r.bare.rate.toFixed(0)} messages/s (${r.bare.connections} connections, no limiter)\n`);
}

function figure(r) {
  return `${r.achieved.toFixed(1)} messages/s at rate ${r.rate} (${(r.ofRequested * 100).toFixed(1)} %, busiest second ${r.busiestSecond}) vs bare loop ${r.bare.rate.toFixed(0)} messages/s`;
}

// ---------------------------------------------------------------------------------------------
// Child mode: the WhatsApp fake (`node bench/campaign.mjs --fake-server`), answering over IPC.
// ---------------------------------------------------------------------------------------------
if (process.argv[2] === '--fake-server') {
  const { WhatsAppFake } = await import('#testing/messaging');
  const fake = await new WhatsAppFake().start();
  const messages = () => fake.calls.filter((c) => c.method === 'POST');
  process.on('message', (m) => {
    if (m.type === 'info') process.send({ baseUrl: fake.baseUrl, accessToken: fake.accessToken, phoneNumberId: fake.phoneNumberId, wabaId: fake.wabaId });
    else if (m.type === 'count') process.send({ count: messages().length });
    else if (m.type === 'times') process.send({ times: messages().slice(m.since).map((c) => c.at) });
  });
  process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
  process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
} else {
  await runBench({
    name: 'campaign',
    flags: {
      recipients: { arg: 'N', default: 1_000, parse: floored(1), help: 'recipients of the campaign (default 1000; at most 5000)' },
      rate: { arg: 'N', default: 50, parse: floored(1), help: 'rateLimitPerSecond (default 50; at most 80)' },
      workers: { arg: 'N', default: 2, parse: floored(1), help: 'worker processes (default 2)' },
      bare: { arg: 'N', default: 2_000, parse: floored(1), help: 'messages of the bare loop (default 2000)' },
      connections: { arg: 'N', default: 4, parse: floored(1), help: 'concurrent requests of the bare loop (default 4)' },
    },
    footer: 'Environment: REDIS_URL uses that Redis instead of starting a redis-server.',
    run: bench,
    summary,
    figure,
    jsonIndent: 2,
  });
}
