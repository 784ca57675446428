import { Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { libraryKey, type StorageDriver } from '#libs/storage';
import { LIBRARY_MEDIA, libraryMediaDir, librarySeeds, TemplatesService } from '#libs/templates';
import { STORAGE } from '../infra/tokens.js';
import { OrganizationTemplateCategoriesController, OrganizationTemplatesController, TemplatesController } from './templates.controller.js';
import { TemplateHandlers } from './templates.handlers.js';

/**
 * Copies the library's bundled media (libs/templates/seed/media) into storage under `library/<file>`
 * once, so templates reference them as ordinary stored files (`<PUBLIC_URL>/files/library/<file>`),
 * which the still engine reads from storage without a network hop.
 */
export async function installLibraryMedia(storage: StorageDriver): Promise<Map<string, string>> {
  const dir = libraryMediaDir();
  const install = async (file: string, from: string) => {
    const key = libraryKey(file);
    const bytes = await readFile(from);
    const stat = await storage.stat(key);
    if (stat?.sizeBytes !== bytes.length) await storage.put(key, bytes);
    return key;
  };
  for (const file of LIBRARY_MEDIA) await install(file, join(dir, file));
  // Previews (seed/previews/<template id>.jpg, drawn by seed/render-previews.mjs).
  const previews = new Map<string, string>();
  const previewDir = join(dirname(dir), 'previews');
  const names = await readdir(previewDir).catch(() => [] as string[]);
  for (const name of names.filter((n) => /^tpl_lib_[a-z0-9_]+\.jpg$/.test(n))) {
    previews.set(name.replace(/\.jpg$/, ''), await install(`previews/${name}`, join(previewDir, name)));
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
    const previews = await installLibraryMedia(this.storage);
    const seeds = librarySeeds((file) => this.storage.url(libraryKey(file))).map((seed) => {
      const preview = previews.get(seed.id);
      return { ...seed, previewUrl: preview ? this.storage.url(preview) : null };
    });
    const { inserted, updated } = await this.templates.seedLibrary(seeds);
    if (inserted || updated) this.logger.log(`Template library: ${inserted} added, ${updated} updated`);
  }
}
