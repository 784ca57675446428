import { repoFolder } from '#libs/core';
import type { LibrarySeed } from '../templates.service.js';
import { imageSeeds } from './images.js';
import { videoSeeds } from './videos.js';

export { STOCK_PICTURES, type StockPicture } from './build.js';

/**
 * The shared library's templates. Their pictures are stock assets named by id (`ast_lib_…`): the
 * renders module swaps each for its stored file when a copy renders, so the stored edits hold no URL.
 */
export function librarySeeds(): LibrarySeed[] {
  return [...imageSeeds(), ...videoSeeds()];
}

/**
 * The folder of the library's previews (`<template id>.jpg`, drawn by
 * libs/templates/seed/render-previews.mjs), which the API stores at start: found from this file's
 * location in the sources (libs/templates/src/library) or in the build (dist/libs/…).
 */
export function libraryPreviewsDir(): string {
  return repoFolder(import.meta.url, 'libs/templates/seed/previews', 'seed/previews');
}
