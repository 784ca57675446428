import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { AppLogger, nestLogLevels, type AppConfig } from '#libs/core';
import { WorkerModule } from './worker.module.js';

/** The worker: a Nest application context with no HTTP server, consuming the BullMQ queues. */
export async function createWorkerApp(config: AppConfig): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: config.logLevel === 'silent' ? false : new AppLogger({ json: config.logFormat === 'json', logLevels: nestLogLevels(config.logLevel === 'warn' ? 'info' : config.logLevel) }),
    abortOnError: false,
  });
  await app.init();
  return app;
}
