import { Global, Module, type DynamicModule } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { AppConfig } from '#libs/core';
import { QUEUE_NAMES, type QueueName } from './jobs.js';
import { bullConnection, bullPrefix, JobQueues, producerConnection } from './queues.js';

/** The flow producer of chunked video renders (`@InjectFlowProducer(VIDEO_FLOWS)`). */
export const VIDEO_FLOWS = 'video-flows';
/** The flow producer of workflow runs (`@InjectFlowProducer(WORKFLOW_FLOWS)`). */
export const WORKFLOW_FLOWS = 'workflow-flows';

/**
 * Every queue of the deployment, registered once (BullModule) for the application that imports it
 * (API and worker), with the typed producer `JobQueues` over them. `producer`: the queues only add
 * jobs and fail fast while Redis is down (the API; `producerConnection`).
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(config: Pick<AppConfig, 'redisUrl' | 'redisPrefix'>, opts: { producer?: boolean } = {}): DynamicModule {
    const connection = opts.producer ? { connection: producerConnection(config) } : {};
    return {
      module: QueueModule,
      imports: [
        BullModule.forRoot({ connection: bullConnection(config), prefix: bullPrefix(config) }),
        BullModule.registerQueue(...QUEUE_NAMES.map((name) => ({ name, ...connection }))),
        BullModule.registerFlowProducer({ name: VIDEO_FLOWS }),
        // The API starts workflow runs: like its queues, a flow that cannot be added while Redis is down fails at once (503).
        BullModule.registerFlowProducer({ name: WORKFLOW_FLOWS, ...connection }),
      ],
      providers: [
        {
          provide: JobQueues,
          inject: QUEUE_NAMES.map((name) => getQueueToken(name)),
          useFactory: (...queues: Queue[]) => new JobQueues(Object.fromEntries(QUEUE_NAMES.map((name, i) => [name, queues[i]])) as Record<QueueName, Queue>),
        },
      ],
      exports: [BullModule, JobQueues],
    };
  }
}
