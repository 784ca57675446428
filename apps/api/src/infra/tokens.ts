/** Injection tokens for the shared infrastructure (the libs' classes are plain, built by factories). */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const ORM = Symbol('ORM');
export const REDIS = Symbol('REDIS');
