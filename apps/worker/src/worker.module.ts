import { Inject, Logger, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker } from 'bullmq';
import type { AppConfig } from '#libs/core';
import { ALL_JOBS, bullConnection, bullPrefix, QUEUES, validatePayload, type JobName, type QueueName } from '#libs/queue';
import { PingProcessor } from './processors/ping.processor.js';
import { PROCESSORS, type JobProcessor } from './processors/processor.js';

const WORKER_CONFIG = Symbol('WORKER_CONFIG');

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
        { provide: PROCESSORS, useFactory: (): JobProcessor[] => [new PingProcessor() as JobProcessor] },
      ],
    };
  }

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    @Inject(PROCESSORS) private readonly processors: JobProcessor[],
  ) {}

  onApplicationBootstrap(): void {
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
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}
