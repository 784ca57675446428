import { assertUnreachable, type AppConfig } from '#libs/core';
import type { StorageDriver } from './driver.js';
import { LocalDiskStorage } from './local-disk.js';
import { S3Storage } from './s3.js';

/** The configured driver (STORAGE_DRIVER); used by the API's module, the worker and the tests. */
export function createStorage(config: Pick<AppConfig, 'storage' | 'publicUrl'>): StorageDriver {
  const { storage } = config;
  switch (storage.driver) {
    case 'local':
      return new LocalDiskStorage(storage.dir, config.publicUrl);
    case 's3':
      return new S3Storage(storage);
    default:
      return assertUnreachable(storage);
  }
}
