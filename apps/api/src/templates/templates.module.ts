import { Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { libraryKey, type StorageDriver } from '#libs/storage';
import { libraryPreviewsDir, librarySeeds, TemplatesService } from '#libs/templates';
import { STORAGE } from '#libs/app';
import { OrganizationTemplateCategoriesController, OrganizationTemplatesController, TemplatesController } from './templates.controller.js';
import { TemplateHandlers } from './templates.handlers.js';

/**
 * Stores the library's previews (libs/templates/seed/previews/<template id>.jpg) under
 * `library/previews/<file>` once, and answers each template's key: templates keep the key, and a
 * URL is made from it whenever a template is shown (presigned URLs expire; keys do not). The
 * templates' pictures are stock assets, named by id (libs/assets seeds them).
 */
export async function installLibraryPreviews(storage: StorageDriver): Promise<Map<string, string>> {
  const dir = libraryPreviewsDir();
  const previews = new Map<string, string>();
  for (const name of (await readdir(dir)).filter((n) => /^tpl_lib_[a-z0-9_]+\.jpg$/.test(n))) {
    const key = libraryKey(`previews/${name}`);
    const bytes = await readFile(join(dir, name));
    if ((await storage.stat(key))?.sizeBytes !== bytes.length) await storage.put(key, bytes);
    previews.set(name.replace(/\.jpg$/, ''), key);
  }
  return previews;
}

@Module({
  controllers: [TemplatesController, OrganizationTemplatesController, OrganizationTemplateCategoriesController],
  providers: [{ provide: TemplateHandlers, inject: [TemplatesService], useFactory: (svc: TemplatesService) => new TemplateHandlers(svc) }],
})
export class TemplatesModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('templates');

  constructor(
    private readonly templates: TemplatesService,
    @Inject(STORAGE) private readonly storage: StorageDriver,
  ) {}

  /** Upserts the shared library (idempotent; several API processes may start at once). */
  async onApplicationBootstrap(): Promise<void> {
    const previews = await installLibraryPreviews(this.storage);
    const seeds = librarySeeds().map((seed) => ({ ...seed, previewKey: previews.get(seed.id) ?? null }));
    const { inserted, updated } = await this.templates.seedLibrary(seeds);
    if (inserted || updated) this.logger.log(`Template library: ${inserted} added, ${updated} updated`);
  }
}
