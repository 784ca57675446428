// The floor under a still's trip (bench/still-http.mjs): what any design in which a worker process draws
// and an HTTP server answers must pay besides the drawing, each measured bare on this machine.
//   - bytes: the PNG sent by a bare node:http server holding it in memory, read by the same client code;
//   - durable write: the PNG written to a new file, file and folder fsynced (as storage's fresh put);
//   - queue hop: an empty BullMQ job, added, taken by a bare worker in another process, its completion
//     pushed back by QueueEvents (as the API waits on a still).
// The child (this file run as a script) is the bare server and the bare worker: another process, as the
// API and the worker are to the bench's client.
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue, QueueEvents, Worker } from 'bullmq';

const QUEUE = 'still-floor';

function connection(url, prefix) {
  const u = new URL(url);
  return { connection: { host: u.hostname, port: Number(u.port), maxRetriesPerRequest: null }, prefix };
}

/** The child: `node still-floor.mjs <port> <redis url> <prefix>`; POST / sets the bytes, GET / sends them. */
async function child([port, redisUrl, prefix]) {
  let bytes = Buffer.alloc(0);
  const server = createServer((req, res) => {
    if (req.method === 'POST') {
      const parts = [];
      req.on('data', (c) => parts.push(c));
      req.on('end', () => {
        bytes = Buffer.concat(parts);
        res.end();
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': bytes.length });
    res.end(bytes);
  });
  const worker = new Worker(QUEUE, async () => ({ ok: true }), { ...connection(redisUrl, prefix), concurrency: 1 });
  await worker.waitUntilReady();
  server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
  const stop = async () => {
    await worker.close();
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
}

/** The bench's side: `measure(bytes)` answers the three floors of one request, in ms. */
export async function startFloor({ port, redisUrl, prefix, dir }) {
  const q = new Queue(QUEUE, connection(redisUrl, prefix));
  const events = new QueueEvents(QUEUE, connection(redisUrl, prefix));
  await events.waitUntilReady();
  const base = `http://127.0.0.1:${port}/`;
  let n = 0;
  let loaded;
  return {
    async measure(png) {
      if (loaded !== png) {
        await fetch(base, { method: 'POST', body: png });
        loaded = png;
      }
      let t = performance.now();
      const res = await fetch(base);
      const got = Buffer.from(await res.arrayBuffer());
      if (got.length !== png.length) throw new Error(`floor: ${got.length} bytes sent back of ${png.length}`);
      const bytes = performance.now() - t;

      t = performance.now();
      const file = await open(join(dir, `floor-${n++}.png`), 'wx', 0o644);
      const folder = await open(dir, 'r');
      await file.writeFile(png);
      await Promise.all([file.sync(), folder.sync()]);
      await Promise.all([file.close(), folder.close()]);
      const write = performance.now() - t;

      t = performance.now();
      const job = await q.add('hop', {}, { removeOnComplete: 1000, removeOnFail: 1000 });
      await job.waitUntilFinished(events, 10_000);
      const hop = performance.now() - t;
      return { bytes, write, hop };
    },
    async close() {
      await events.close();
      // Nothing left in the Redis (REDIS_URL may be one the bench did not start).
      await q.obliterate({ force: true });
      await q.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await child(process.argv.slice(2));
