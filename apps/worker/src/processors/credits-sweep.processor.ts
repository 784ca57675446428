import { Logger } from '@nestjs/common';
import type { CreditsService } from '#libs/credits';
import type { JobPayloads, JobResults } from '#libs/queue';
import type { JobProcessor } from './processor.js';

/** Every few minutes: releases credit holds of renders that were lost, and reports them. */
export class CreditsSweepProcessor implements JobProcessor<'credits.sweep'> {
  readonly job = 'credits.sweep' as const;
  private readonly logger = new Logger('credits.sweep');

  constructor(
    private readonly credits: CreditsService,
    private readonly defaultMaxAgeSec: number,
  ) {}

  async process(data: JobPayloads['credits.sweep']): Promise<JobResults['credits.sweep']> {
    const released = await this.credits.sweep((data.maxAgeSec ?? this.defaultMaxAgeSec) * 1000);
    if (released.length) this.logger.log(`released the holds of ${released.length} lost render(s): ${released.join(', ')}`);
    return { released };
  }
}
