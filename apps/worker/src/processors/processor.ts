import type { Job } from 'bullmq';
import type { JobName, JobPayloads, JobResults } from '#libs/queue';

/** One handler per job name; the worker refuses to start when a job has none or two. */
export interface JobProcessor<N extends JobName = JobName> {
  readonly job: N;
  process(data: JobPayloads[N], meta: { id: string; attempt: number; job?: Job; token?: string }): Promise<JobResults[N]>;
}

export const PROCESSORS = Symbol('PROCESSORS');
