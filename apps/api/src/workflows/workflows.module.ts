import { Module } from '@nestjs/common';
import { WorkflowsController } from './workflows.controller.js';

/** Workflows (libs/workflows, docs/workflows.md); a run is queued as a flow (libs/queue RunFlows). */
@Module({ controllers: [WorkflowsController] })
export class WorkflowsModule {}
