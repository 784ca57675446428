import { Injectable, Module } from '@nestjs/common';
import { InjectFlowProducer } from '@nestjs/bullmq';
import type { FlowProducer } from 'bullmq';
import { AppServices } from '#libs/app';
import { JobQueues, WORKFLOW_FLOWS } from '#libs/queue';
import { WorkflowsService } from '#libs/workflows';
import { WorkflowsController } from './workflows.controller.js';

/** The flow of a run: one `workflow.run` parent over a `workflow.row` child per row (job ids by round, so a rerun adds new jobs). */
@Injectable()
class RunFlows {
  constructor(private readonly queues: JobQueues, @InjectFlowProducer(WORKFLOW_FLOWS) private readonly flows: FlowProducer) {}

  async enqueue(runId: string, round: number, rowIds: string[]): Promise<void> {
    const children = rowIds.map((rowId) => this.queues.flowJob('workflow.row', { runId, rowId }, { jobId: `${rowId}-${round}` }));
    await this.flows.add(this.queues.flowJob('workflow.run', { runId }, { jobId: `${runId}-${round}`, children }));
  }
}

/** Workflows (libs/workflows, docs/workflows.md). */
@Module({
  controllers: [WorkflowsController],
  providers: [
    RunFlows,
    {
      provide: WorkflowsService,
      inject: [AppServices, RunFlows],
      useFactory: (services: AppServices, flows: RunFlows) => services.workflows((runId, round, rowIds) => flows.enqueue(runId, round, rowIds)),
    },
  ],
})
export class WorkflowsModule {}
