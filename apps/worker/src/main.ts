import 'reflect-metadata';
import { ConfigError, loadConfig, metrics } from '#libs/core';
import { createWorkerApp } from './app.js';
import { serveMetrics } from './metrics.js';
import { startedWithWorkerFlags, WORKER_NODE_FLAGS } from './node-flags.js';
import { VideoEngineHolder } from './videos/engine.holder.js';
import { within, WorkerModule } from './worker.module.js';

/**
 * How long the rest of the stop may take once the running jobs were let go: BullMQ's own closing
 * hooks wait for Redis for ever when it is gone (docker/compose.yaml allows the whole stop 45 s).
 */
const AFTER_RELEASE_MS = 5_000;

// jemalloc, preloaded by scripts/up.sh and the worker image, is this process's allocator; the programs
// the worker starts (Chromium, ffmpeg, pocketsphinx) keep their own.
if (process.env.LD_PRELOAD?.includes('jemalloc')) delete process.env.LD_PRELOAD;

try {
  const config = loadConfig();
  metrics('worker'); // before any job counts something: this process's metrics are the worker's
  const app = await createWorkerApp(config);
  const worker = app.get(WorkerModule);
  const metricsServer = await serveMetrics(app, config);
  let stopping = false;
  /** The bounded stop: running jobs get their grace (WorkerModule), the rest AFTER_RELEASE_MS. */
  const stop = (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    metricsServer?.close();
    const closing = app.close();
    void (async () => {
      await worker.jobsReleased;
      if (!(await within(closing, AFTER_RELEASE_MS))) console.error(`Worker stopped on ${why} without closing every connection (Redis unreachable?)`);
      process.exit(code);
    })();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  console.log(`Worker consuming queues (concurrency ${config.workerConcurrency})`);
  if (!startedWithWorkerFlags()) console.log(`Worker started without the Node options ${WORKER_NODE_FLAGS.join(' ')} (npm run start:worker passes them): a video's peak memory is ~30 MB higher`);
  // VIDEO_ENGINE=on is a promise that this worker renders videos: an engine that cannot start (a
  // browser that will not launch, a bundle that will not build) stops the worker with an error, so
  // its supervisor sees it and restarts it, instead of a worker that takes stills and never videos.
  if (config.video.engine === 'on') {
    try {
      await app.get(VideoEngineHolder).start();
    } catch (err) {
      console.error(`VIDEO_ENGINE=on but the video engine did not start: ${(err as Error).message}`);
      stop('a video engine that did not start', 1);
    }
  }
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(78);
  }
  throw err;
}
