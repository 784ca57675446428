import { ConsoleLogger, type INestApplicationContext, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AppConfig } from '#libs/core';
import type { ProcessRole } from './roles.js';
import { ServicesModule } from './services.module.js';

/** Warnings and errors on stderr only: a process whose stdout is its answer (the CLI's one JSON object) keeps it clean. */
class StderrLogger extends ConsoleLogger {
  protected override printMessages(messages: unknown[], context?: string, logLevel?: LogLevel, _stream?: 'stdout' | 'stderr', errorStack?: unknown): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack);
  }
}

/**
 * The services alone in a Nest application context (no HTTP server, no queue unless the role has
 * them): the CLI's container. Its `close()` releases what was opened (ServicesCloser).
 */
export async function createServicesContext(config: AppConfig, role: ProcessRole): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(ServicesModule.forRoot(config, role), {
    logger: config.logLevel === 'silent' ? false : new StderrLogger({ logLevels: ['error', 'warn', 'fatal'] }),
    abortOnError: false,
  });
  await app.init();
  return app;
}
