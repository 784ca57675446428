import { Inject, Logger, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker } from 'bullmq';
import { CreditsService } from '#libs/credits';
import { openDatabase, type Orm } from '#libs/db';
import type { AppConfig } from '#libs/core';
import { ALL_JOBS, bullConnection, bullPrefix, JobQueue, QUEUES, validatePayload, type JobName, type QueueName } from '#libs/queue';
import { CreditsSweepProcessor } from './processors/credits-sweep.processor.js';
import { PingProcessor } from './processors/ping.processor.js';
import { PROCESSORS, type JobProcessor } from './processors/processor.js';

const WORKER_CONFIG = Symbol('WORKER_CONFIG');
const WORKER_ORM = Symbol('WORKER_ORM');

/** How often the credit-hold sweeper runs. */
export const SWEEP_EVERY_MS = 5 * 60_000;

/** Each job name must have exactly one processor. */
export function processorMap(processors: readonly JobProcessor[]): Map<JobName, JobProcessor> {
  const map = new Map<JobName, JobProcessor>();
  for (const p of processors) {
    if (map.has(p.job)) throw new Error(`Two processors handle ${p.job}`);
    map.set(p.job, p);
  }
  const missing = ALL_JOBS.filter((j) => !map.has(j));
  if (missing.length) throw new Error(`No processor handles ${missing.join(', ')}`);
  return map;
}

@Module({})
export class WorkerModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('worker');
  private readonly workers: Worker[] = [];

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: WORKER_ORM, useFactory: () => openDatabase(config.database) },
        {
          provide: PROCESSORS,
          inject: [WORKER_ORM],
          useFactory: (orm: Orm): JobProcessor[] => [
            new PingProcessor() as JobProcessor,
            new CreditsSweepProcessor(new CreditsService(orm, { lowThreshold: config.creditsLowThreshold }), config.maxRenderAgeSec) as JobProcessor,
          ],
        },
      ],
    };
  }

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    @Inject(PROCESSORS) private readonly processors: JobProcessor[],
    @Inject(WORKER_ORM) private readonly orm: Orm,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const handlers = processorMap(this.processors);
    for (const queue of Object.keys(QUEUES) as QueueName[]) {
      const worker = new Worker(
        queue,
        async (job) => {
          const handler = handlers.get(job.name as JobName);
          if (!handler) throw new Error(`No processor for ${job.name}`);
          const data = validatePayload(job.name as JobName, job.data);
          return handler.process(data as never, { id: job.id ?? '', attempt: job.attemptsMade + 1 });
        },
        { connection: bullConnection(this.config), prefix: bullPrefix(this.config), concurrency: this.config.workerConcurrency },
      );
      worker.on('failed', (job, err) => this.logger.warn(`${job?.name} ${job?.id} failed: ${err.message}`));
      this.workers.push(worker);
    }
    // One schedule per deployment, whatever the number of workers (the scheduler id is the key).
    const system = new JobQueue(this.config, 'system');
    await system.queue.upsertJobScheduler('credits.sweep', { every: SWEEP_EVERY_MS }, { name: 'credits.sweep', data: {} });
    await system.close();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    await this.orm.close(true);
  }
}
