/** Injection token of the configured `StorageDriver` (libs/storage), provided by FilesModule to every module. */
export const STORAGE = Symbol('STORAGE');
