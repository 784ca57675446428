import { Processor } from '@nestjs/bullmq';
import { TranscriptionRunner } from '#libs/captions';
import type { TypedJob } from '#libs/queue';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/** The longest one run of a transcription may take (a provider's polling included). */
const RUN_TIMEOUT_MS = 30 * 60_000;

/**
 * The `captions` queue: one transcription per job (libs/captions TranscriptionRunner, docs/captions.md).
 * A provider outage or a crash runs the job again (TRANSCRIPTION_ATTEMPTS runs), then it fails.
 */
@Processor('captions')
export class CaptionsProcessor extends QueueProcessor<'captions'> {
  readonly queue = 'captions';

  constructor(private readonly runner: TranscriptionRunner) {
    super();
  }

  protected readonly handlers: QueueHandlers<'captions'> = {
    'transcription.run': (data, job) => this.run(data.transcriptionId, job),
  };

  private run(id: string, job: TypedJob<'transcription.run'>): Promise<{ status: string }> {
    const lastRun = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    return this.runner.run(id, AbortSignal.timeout(RUN_TIMEOUT_MS), lastRun);
  }
}
