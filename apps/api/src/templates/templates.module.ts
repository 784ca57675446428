import { Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { libraryKey, type StorageDriver } from '#libs/storage';
import { httpReachability, LIBRARY_MEDIA, libraryMediaDir, librarySeeds, storedOrHttp, TemplatesService } from '#libs/templates';
import { STORAGE } from '../files/tokens.js';
import { APP_CONFIG, ORM } from '../infra/tokens.js';
import { OrganizationTemplateCategoriesController, OrganizationTemplatesController, TemplatesController } from './templates.controller.js';
import { TemplateHandlers } from './templates.handlers.js';

/**
 * Copies the library's bundled media (libs/templates/seed/media) into storage under `library/<file>`
 * once, so templates reference them as ordinary stored files (`<PUBLIC_URL>/files/library/<file>`),
 * which the still engine reads from storage without a network hop.
 */
export async function installLibraryMedia(storage: StorageDriver): Promise<number> {
  const dir = libraryMediaDir();
  let copied = 0;
  for (const file of LIBRARY_MEDIA) {
    const key = libraryKey(file);
    const bytes = await readFile(join(dir, file));
    const stat = await storage.stat(key);
    if (stat?.sizeBytes === bytes.length) continue;
    await storage.put(key, bytes);
    copied++;
  }
  return copied;
}

@Module({
  controllers: [TemplatesController, OrganizationTemplatesController, OrganizationTemplateCategoriesController],
  providers: [
    {
      provide: TemplatesService,
      inject: [ORM, APP_CONFIG, STORAGE],
      useFactory: (orm: Orm, config: AppConfig, storage: StorageDriver) =>
        new TemplatesService(orm, { policy: config.env, reachability: storedOrHttp(storage, httpReachability(config.env)) }),
    },
    { provide: TemplateHandlers, inject: [TemplatesService], useFactory: (svc: TemplatesService) => new TemplateHandlers(svc) },
  ],
  exports: [TemplatesService],
})
export class TemplatesModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('templates');

  constructor(
    private readonly templates: TemplatesService,
    @Inject(STORAGE) private readonly storage: StorageDriver,
  ) {}

  /** Upserts the shared library (idempotent; several API processes may start at once). */
  async onApplicationBootstrap(): Promise<void> {
    await installLibraryMedia(this.storage);
    const { inserted, updated } = await this.templates.seedLibrary(librarySeeds((file) => this.storage.url(libraryKey(file))));
    if (inserted || updated) this.logger.log(`Template library: ${inserted} added, ${updated} updated`);
  }
}
