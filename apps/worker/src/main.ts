import 'reflect-metadata';
import { ConfigError, loadConfig } from '#libs/core';
import { createWorkerApp } from './app.js';

try {
  const config = loadConfig();
  const app = await createWorkerApp(config);
  app.enableShutdownHooks();
  console.log(`Worker consuming queues (concurrency ${config.workerConcurrency})`);
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(78);
  }
  throw err;
}
