/** Injection tokens for the shared infrastructure (InfraModule provides them from AppServices). */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const ORM = Symbol('ORM');
export const REDIS = Symbol('REDIS');
/** The configured `StorageDriver` (libs/storage). */
export const STORAGE = Symbol('STORAGE');
