import { Injectable } from '@nestjs/common';
import { InjectFlowProducer } from '@nestjs/bullmq';
import type { FlowProducer } from 'bullmq';
import { WORKFLOW_FLOWS } from './queue.module.js';
import { JobQueues } from './queues.js';

/** The flow of a workflow run: one `workflow.run` parent over a `workflow.row` child per row (job ids by round, so a rerun adds new jobs). */
@Injectable()
export class RunFlows {
  constructor(private readonly queues: JobQueues, @InjectFlowProducer(WORKFLOW_FLOWS) private readonly flows: FlowProducer) {}

  async enqueue(runId: string, round: number, rowIds: string[]): Promise<void> {
    const children = rowIds.map((rowId) => this.queues.flowJob('workflow.row', { runId, rowId }, { jobId: `${rowId}-${round}` }));
    await this.flows.add(this.queues.flowJob('workflow.run', { runId }, { jobId: `${runId}-${round}`, children }));
  }
}
