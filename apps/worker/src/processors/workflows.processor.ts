import { Processor } from '@nestjs/bullmq';
import { WorkflowRunner } from '#libs/workflows';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/**
 * The `workflows` queue (docs/workflows.md): a `workflow.row` job per row of a run (its render, then
 * its steps; an outage runs the job again, and the last run records it as the row's failure), and
 * the run's `workflow.run` parent, which settles the run once every row's job has ended.
 */
@Processor('workflows')
export class WorkflowsProcessor extends QueueProcessor<'workflows'> {
  readonly queue = 'workflows';

  constructor(private readonly runner: WorkflowRunner) {
    super();
  }

  protected readonly handlers: QueueHandlers<'workflows'> = {
    'workflow.row': (data, job) => this.runner.processRow(data.runId, data.rowId, job.attemptsMade + 1 >= (job.opts.attempts ?? 1)),
    'workflow.run': (data) => this.runner.finishRun(data.runId),
  };
}
