import { createServer, type Server } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { ORM, sampleFleet } from '#libs/app';
import { metrics, metricsAuthorized, type AppConfig } from '#libs/core';
import { JobQueues } from '#libs/queue';

/**
 * The worker's `/metrics` (issue 30): a small HTTP listener of its own on WORKER_METRICS_HOST:
 * WORKER_METRICS_PORT (none when the port is 0 or METRICS_TOKEN is unset), for a bearer of
 * METRICS_TOKEN. A port it cannot bind is reported and left: the worker works without it.
 */
export async function serveMetrics(app: INestApplicationContext, config: AppConfig): Promise<Server | undefined> {
  const m = metrics('worker');
  if (!config.metrics.token || !config.metrics.workerPort) return undefined;
  const unsample = sampleFleet(m, { orm: app.get(ORM), queues: app.get(JobQueues) });
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') return void res.writeHead(404).end();
    if (!metricsAuthorized(config.metrics.token, req.headers.authorization)) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    m.exposition().then(
      (text) => res.writeHead(200, { 'content-type': m.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.on('close', unsample);
  return new Promise((resolve) => {
    server.once('error', (err) => {
      console.error(`Worker metrics: cannot listen on ${config.metrics.workerHost}:${config.metrics.workerPort} (${(err as Error).message}); running without /metrics`);
      unsample();
      resolve(undefined);
    });
    server.listen(config.metrics.workerPort, config.metrics.workerHost, () => resolve(server));
  });
}
