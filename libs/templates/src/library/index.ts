import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LibrarySeed } from '../templates.service.js';
import type { MediaUrl } from './build.js';
import { imageSeeds } from './images.js';
import { videoSeeds } from './videos.js';

export type { MediaUrl } from './build.js';

/**
 * The files bundled with the library (libs/templates/seed/media), each drawn by
 * libs/templates/seed/generate-media.mjs and released under CC0 (MEDIA-LICENCES.md).
 */
export const LIBRARY_MEDIA = [
  'bg-aurora.jpg', 'bg-sunset-waves.jpg', 'bg-mesh-dark.jpg', 'product-mug.png', 'avatar-portrait.jpg',
  'logo-mark.png', 'photo-mountains.jpg', 'photo-city.jpg', 'photo-beach.jpg', 'seal-gold.png',
] as const;
export type LibraryMediaFile = (typeof LIBRARY_MEDIA)[number];

/**
 * The shared library's templates, their media URLs built by `mediaUrl` (the storage module serves
 * the files under `${PUBLIC_URL}/files/library/<file>`).
 */
export function librarySeeds(mediaUrl: MediaUrl): LibrarySeed[] {
  const media = (file: string) => {
    if (!(LIBRARY_MEDIA as readonly string[]).includes(file)) throw new Error(`Library media file ${file} is not bundled`);
    return mediaUrl(file);
  };
  return [...imageSeeds(media), ...videoSeeds(media)];
}

/**
 * The folder holding the bundled media files, for the storage module to serve: found from this
 * file's location in the sources (libs/templates/src/library) or in the build (dist/libs/…).
 */
export function libraryMediaDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'libs', 'templates', 'seed', 'media');
    if (existsSync(candidate)) return candidate;
    const beside = join(dir, 'seed', 'media');
    if (existsSync(beside)) return beside;
    dir = dirname(dir);
  }
  throw new Error('The template library media folder (libs/templates/seed/media) was not found');
}
