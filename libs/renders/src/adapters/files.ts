import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { makeOwnScratch } from '#libs/core';
import type { StorageDriver } from '#libs/storage';
import type { Scratch, Storage } from '../ports.js';

/** The storage driver (local folder or S3) as the render rules use it: files of this machine in and out. */
export function driverStorage(driver: StorageDriver): Storage {
  return {
    putFile: async (key, file, contentType) => {
      await driver.put(key, createReadStream(file), contentType ? { contentType } : undefined);
    },
    putBytes: async (key, bytes, contentType) => {
      // A render's output key is its own and read only once the render is settled with it.
      const stored = await driver.put(key, bytes, { contentType, fresh: true });
      return { key: stored.key, sizeBytes: stored.sizeBytes };
    },
    getFile: async (key, file) => {
      await pipeline(await driver.read(key), createWriteStream(file));
    },
    delete: (key) => driver.delete(key),
    deletePrefix: (prefix) => driver.deletePrefix(prefix),
    list: (prefix) => driver.list(prefix),
    url: (key) => driver.url(key),
  };
}

/**
 * The video jobs' scratch folders: `DATA_DIR/video-jobs/<host>-<pid>-<token>/` (libs/core scratch.ts: a
 * killed worker's are swept). Under the worker's own data folder, not the shared temporary folder,
 * where another user could make the parent first and swap what is in it.
 */
export const videoJobScratch = (config: { dataDir: string }): string => join(config.dataDir, 'video-jobs');

/**
 * Job folders under `root` (videoJobScratch): `<host>-<pid>-<token>/` per process (libs/core
 * scratch.ts: a killed worker's are swept).
 */
export function ownScratch(root: string): Scratch {
  return {
    folder: async (prefix) => mkdtemp(join(await makeOwnScratch(root), prefix)),
    remove: async (paths) => {
      await Promise.all(paths.map((path) => rm(path, { recursive: true, force: true })));
    },
  };
}
