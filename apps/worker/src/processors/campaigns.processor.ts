import { Processor } from '@nestjs/bullmq';
import { CampaignsService } from '#libs/messaging';
import { QueueProcessor, type QueueHandlers } from './queue-processor.js';

/**
 * The `campaigns` queue: each `campaign.send` job is one runner of a campaign (libs/messaging
 * CampaignsService.run): it sends queued recipients at the campaign's rate, shared with the other
 * runners on every worker through Redis, until none is left; the last one completes the campaign.
 */
@Processor('campaigns')
export class CampaignsProcessor extends QueueProcessor<'campaigns'> {
  readonly queue = 'campaigns';

  constructor(private readonly campaigns: CampaignsService) {
    super();
  }

  protected readonly handlers: QueueHandlers<'campaigns'> = {
    'campaign.send': (data) => this.campaigns.run(data.workspaceId, data.campaignId),
  };
}
