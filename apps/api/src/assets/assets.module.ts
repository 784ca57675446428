import { Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { seedStock } from '#libs/assets';
import type { AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { JobQueues } from '#libs/queue';
import type { StorageDriver } from '#libs/storage';
import { APP_CONFIG, ORM, STORAGE } from '#libs/app';
import { AssetsController } from './assets.controller.js';

/** §4.4 the media library (libs/assets; processing is the worker's `assets` queue); seeds the stock library at start. */
@Module({ controllers: [AssetsController] })
export class AssetsModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('assets');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ORM) private readonly orm: Orm,
    @Inject(STORAGE) private readonly storage: StorageDriver,
    private readonly queues: JobQueues,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.assets.stock) return;
    const seeded = await seedStock(this.orm, this.storage, async (assetId, run) => {
      await this.queues.add('asset.process', { assetId }, { jobId: run });
    });
    if (seeded.queued.length || seeded.removed.length) this.logger.log(`Stock library: ${seeded.queued.length} queued for processing, ${seeded.removed.length} removed`);
    if (seeded.skipped.length) this.logger.warn(`Stock library: ${seeded.skipped.length} item(s) skipped, their files are missing here (${seeded.skipped.slice(0, 5).join(', ')}…): install scripts/stock-packages.txt`);
  }
}
