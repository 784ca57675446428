import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import type { AppConfig } from '#libs/core';
import { WorkerModule } from './worker.module.js';

/** The worker: a Nest application context with no HTTP server, consuming the BullMQ queues. */
export async function createWorkerApp(config: AppConfig): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: config.logLevel === 'silent' ? false : ['error', 'warn', 'log'],
    abortOnError: false,
  });
  await app.init();
  return app;
}
