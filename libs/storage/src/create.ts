import { assertUnreachable, type AppConfig } from '#libs/core';
import type { StorageDriver } from './driver.js';
import { LocalDiskStorage } from './local-disk.js';

/** The configured driver (STORAGE_DRIVER); used by the API's module, the worker and the tests. */
export function createStorage(config: Pick<AppConfig, 'storage' | 'publicUrl'>): StorageDriver {
  const { storage } = config;
  switch (storage.driver) {
    case 'local':
      return new LocalDiskStorage(storage.dir, config.publicUrl);
    default:
      return assertUnreachable(storage.driver);
  }
}
