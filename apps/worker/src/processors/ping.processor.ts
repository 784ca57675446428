import { hostname } from 'node:os';
import type { JobPayloads, JobResults } from '#libs/queue';
import type { JobProcessor } from './processor.js';

/** Proves a job goes from the API's queue through Redis to a worker and back. */
export class PingProcessor implements JobProcessor<'system.ping'> {
  readonly job = 'system.ping' as const;

  async process(data: JobPayloads['system.ping']): Promise<JobResults['system.ping']> {
    return { nonce: data.nonce, worker: `${hostname()}:${process.pid}`, latencyMs: Date.now() - data.sentAt };
  }
}
