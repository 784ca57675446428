import type { MikroORM } from '@mikro-orm/core';
import type { JobPayloads, JobResults } from '#libs/queue';
import { purgeExpired } from '#libs/renders';
import type { StorageDriver } from '#libs/storage';
import type { JobProcessor } from './processor.js';

/** Deletes expired outputs (decisions.md retention), a batch at a time, every 10 minutes. */
export class RendersPurgeProcessor implements JobProcessor<'renders.purge'> {
  readonly job = 'renders.purge' as const;

  constructor(
    private readonly orm: MikroORM,
    private readonly storage: StorageDriver,
  ) {}

  async process(data: JobPayloads['renders.purge']): Promise<JobResults['renders.purge']> {
    const now = data.now ? new Date(data.now) : new Date();
    let purged = 0;
    for (;;) {
      const ids = await purgeExpired(this.orm, this.storage, now);
      purged += ids.length;
      if (ids.length < 500) return { purged };
    }
  }
}
