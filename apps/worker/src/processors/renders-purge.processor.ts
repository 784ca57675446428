import type { MikroORM } from '@mikro-orm/core';
import type { JobPayloads, JobResults } from '#libs/queue';
import { failLostStills, purgeExpired, type RenderSettler } from '#libs/renders';
import type { StorageDriver } from '#libs/storage';
import type { JobProcessor } from './processor.js';

/**
 * Every 10 minutes: deletes expired outputs (decisions.md retention), a batch at a time, and fails
 * stills whose worker died with no API process left waiting (WORKER_LOST, credit released).
 */
export class RendersPurgeProcessor implements JobProcessor<'renders.purge'> {
  readonly job = 'renders.purge' as const;

  constructor(
    private readonly orm: MikroORM,
    private readonly storage: StorageDriver,
    private readonly settler: RenderSettler,
  ) {}

  async process(data: JobPayloads['renders.purge']): Promise<JobResults['renders.purge']> {
    const now = data.now ? new Date(data.now) : new Date();
    const lost = (await failLostStills(this.orm, this.settler, now)).length;
    let purged = 0;
    for (;;) {
      const ids = await purgeExpired(this.orm, this.storage, now);
      purged += ids.length;
      if (ids.length < 500) return { purged, lost };
    }
  }
}
